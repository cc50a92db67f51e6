// Runs the TimescaleDB policy jobs (retention, aggregate refresh) the service is in charge of:
// all of them where no TimescaleDB scheduler runs (the embedded database), and, in `auto` mode on
// a server, those its scheduler neglects (a job that has not succeeded on schedule). The decision
// is recorded in app.timescaledb_job_runner (shown by /readyz) and logged when it changes.
import type { Task } from 'graphile-worker';

export type JobRunnerMode = 'auto' | 'on' | 'off';

export const runTimescaledbJobs = (mode: JobRunnerMode): Task => async (_payload, helpers) => {
  const { rows } = await helpers.query<{ runner: string; reason: string; changed: boolean; scheduler: boolean }>(
    'select d.*, app.timescaledb_scheduler_started_at() is not null as scheduler from app.decide_timescaledb_job_runner($1) d',
    [mode],
  );
  const decision = rows[0]!;
  if (decision.changed) helpers.logger.info(`TimescaleDB jobs: run by ${decision.runner} (${decision.reason})`);
  if (decision.runner !== 'service') return;
  // Step by step, each a statement of its own (the steps app.run_due_timescaledb_jobs runs in one):
  // no statement holds the embedded database long, so a client arriving meanwhile (make key) waits
  // for one step at most. Outside a transaction block: a refresh cannot run inside one.
  const { rows: steps } = await helpers.query<{ job_id: number; aggregate: string | null; window_start: Date | null; window_end: Date | null; first: boolean; last: boolean }>(
    'select * from app.due_timescaledb_job_steps($1)',
    [mode === 'auto' && decision.scheduler],
  );
  for (const step of steps) {
    await helpers.query('call app.run_timescaledb_job_step($1, $2, $3, $4, $5, $6)', [
      step.job_id, step.aggregate, step.window_start, step.window_end, step.first, step.last,
    ]);
  }
};
