// The graphile-worker runner: in the API process by default, or alone (`mdapi worker`).
import { run, type Runner } from 'graphile-worker';
import { crontab, onWorkerStart, taskList } from '../jobs/index.ts';
import type { Config } from './config.ts';
import { WORKER_APPLICATION_NAME, withApplicationName } from './db/client.ts';

export async function startWorker(config: Config): Promise<Runner> {
  const runner = await run({
    connectionString: withApplicationName(config.database.url, WORKER_APPLICATION_NAME),
    // The same switch as postgres.js's `prepare`: no named statements behind a transaction pooler.
    noPreparedStatements: config.database.pooled,
    concurrency: config.WORKER_CONCURRENCY,
    maxPoolSize: config.WORKER_CONCURRENCY + 2,
    pollInterval: 2000,
    noHandleSignals: true,
    taskList: taskList(config),
    crontab,
  });
  await onWorkerStart(runner, config);
  return runner;
}
