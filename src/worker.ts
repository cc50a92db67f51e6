// The graphile-worker runner: in the API process by default, or alone (`mdapi worker`).
import { EventEmitter } from 'node:events';
import { run, type Runner, type WorkerEvents } from 'graphile-worker';
import { crontab, onWorkerStart, taskList } from '../jobs/index.ts';
import type { Config } from './config.ts';
import { observeJobs } from './job-runs.ts';
import { createLogger, graphileLogger, type Logger } from './log.ts';
import type { Metrics } from './metrics.ts';

export async function startWorker(config: Config, observability: { logger?: Logger; metrics?: Metrics } = {}): Promise<Runner> {
  const logger = observability.logger ?? createLogger(config);
  // Listening before run(): the first jobs start while it is still returning.
  const events: WorkerEvents = new EventEmitter();
  observeJobs({ events }, logger, observability.metrics);
  const runner = await run({
    connectionString: config.database.url,
    // The same switch as postgres.js's `prepare`: no named statements behind a transaction pooler.
    noPreparedStatements: config.database.pooled,
    concurrency: config.WORKER_CONCURRENCY,
    maxPoolSize: config.WORKER_CONCURRENCY + 2,
    pollInterval: 2000,
    noHandleSignals: true,
    taskList: taskList(config),
    crontab,
    logger: graphileLogger(logger),
    events,
  });
  await onWorkerStart(runner, config);
  return runner;
}
