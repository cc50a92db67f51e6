// Runs due TimescaleDB policy jobs (retention, aggregate refresh) where TimescaleDB's own
// scheduler does not run, as on the embedded database. On a real server it does nothing.
import type { Task } from 'graphile-worker';

export type JobRunnerMode = 'auto' | 'on' | 'off';

export const runTimescaledbJobs = (mode: JobRunnerMode): Task => async (_payload, helpers) => {
  if (mode === 'off') return;
  if (mode === 'auto') {
    const { rows } = await helpers.query<{ running: boolean }>('select app.timescaledb_scheduler_running() as running');
    if (rows[0]?.running) return;
  }
  // A procedure commits once per job; CALL must not run inside a transaction block.
  await helpers.query('call app.run_due_timescaledb_jobs()');
};
