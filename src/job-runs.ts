// One log line and the metrics of every job run, from graphile-worker's events.
import type { WorkerEvents } from 'graphile-worker';
import { detailLogger, type Logger } from './log.ts';
import type { Metrics } from './metrics.ts';

type Outcome = 'success' | 'error' | 'failed';

/** A job this process is running: what the status page says the database is busy with. */
export interface RunningJob {
  task: string;
  seconds: number;
}

export function observeJobs(runner: { events: WorkerEvents }, logger: Logger, metrics?: Metrics): { running(): RunningJob[] } {
  // A terminal shows the failures; the half-dozen routine successes a minute only at debug.
  const routine = detailLogger(logger);
  const started = new Map<string, { at: number; task: string }>();
  const finish = (job: { id: string; task_identifier: string; attempts: number; max_attempts: number }, outcome: Outcome, error?: unknown) => {
    const begun = started.get(job.id)?.at;
    started.delete(job.id);
    const durationMs = begun === undefined ? undefined : performance.now() - begun;
    metrics?.jobRuns.inc({ task: job.task_identifier, outcome });
    if (durationMs !== undefined) metrics?.jobDuration.observe({ task: job.task_identifier }, durationMs / 1000);
    const line = {
      job: { task: job.task_identifier, id: job.id, attempt: job.attempts, maxAttempts: job.max_attempts },
      outcome,
      durationMs: durationMs === undefined ? undefined : Math.round(durationMs * 10) / 10,
      ...(error === undefined ? {} : { err: error }),
    };
    if (outcome === 'success') routine.info(line, 'job run');
    else logger.error(line, 'job run');
  };
  runner.events.on('job:start', ({ job }) => {
    started.set(job.id, { at: performance.now(), task: job.task_identifier });
  });
  runner.events.on('job:success', ({ job }) => finish(job, 'success'));
  // graphile-worker emits job:failed after job:error when no attempt is left: one line per run.
  runner.events.on('job:error', ({ job, error }) => finish(job, job.attempts >= job.max_attempts ? 'failed' : 'error', error));
  return {
    running: () =>
      [...started.values()].map(({ at, task }) => ({ task, seconds: Math.round((performance.now() - at) / 1000) })).sort((a, b) => b.seconds - a.seconds),
  };
}
