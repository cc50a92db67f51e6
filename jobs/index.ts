// The task list and the one crontab of the service.
import type { TaskList } from 'graphile-worker';
import type { Config } from '../src/config.ts';
import { pruneCounters } from './prune_counters.ts';
import { runTimescaledbJobs } from './run_timescaledb_jobs.ts';

export function taskList(config: Config): TaskList {
  return {
    run_timescaledb_jobs: runTimescaledbJobs(config.TIMESCALEDB_JOB_RUNNER),
    prune_counters: pruneCounters,
  };
}

// graphile-worker crontab: minute hour day month weekday task ?options
export const crontab = [
  '* * * * * run_timescaledb_jobs ?max=1',
  '17 * * * * prune_counters ?max=1',
].join('\n');
