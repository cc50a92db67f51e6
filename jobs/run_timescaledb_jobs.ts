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
  // A procedure commits once per job; CALL must not run inside a transaction block.
  await helpers.query(`call app.run_due_timescaledb_jobs(${mode === 'auto' && decision.scheduler ? 'true' : 'false'})`);
};
