// The graphile-worker runner: in the API process by default, or alone (`mdapi worker`). Its
// worker pool beats in app.worker_heartbeats; each beat also frees the locks of dead pools, so a
// worker killed mid-job holds its queue for about three beats, not graphile-worker's 4 hours.
import { startStreamHolder } from './sources/stream/index.ts';
import { parseExchangeUrls, parseExchanges } from './sources/exchanges/venues.ts';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { run, type Runner, type TaskList, type WorkerEvents } from 'graphile-worker';
import { workerStaleAfterMs, type Config } from './config.ts';
import { createSql, withTimeout, WORKER_APPLICATION_NAME, withApplicationName } from './db/client.ts';
import { observeJobs, type RunningJob } from './job-runs.ts';
import { createLogger, graphileLogger, type Logger } from './log.ts';
import type { Metrics } from './metrics.ts';

export interface Worker {
  stop(): Promise<void>;
  /** the jobs running in this process now, longest first */
  running(): RunningJob[];
}

/** What the worker runs: the task list, the crontab and the jobs queued at start (jobs/index.ts). */
export interface JobSchedule {
  /** metrics: the process's registry, for tasks that report more than their run (the minute tick's phases) */
  taskList(config: Config, metrics?: Metrics): TaskList;
  crontab: string;
  onWorkerStart(runner: Pick<Runner, 'addJob'>, config: Config): Promise<void>;
}

/** How long stop() lets running jobs finish before it gives them back. */
const STOP_GRACE_MS = 3_000;
const MAX_RESTART_DELAY_MS = 30_000;

export async function startWorker(config: Config, schedule: JobSchedule, observability: { logger?: Logger; metrics?: Metrics } = {}): Promise<Worker> {
  // a venue the source cannot read is refused at start, saying what it lacks, not by every minute's job
  if (config.MARKET_SOURCE === 'exchanges') {
    parseExchanges(config.EXCHANGES);
    parseExchangeUrls(config.EXCHANGE_URLS);
  }
  const logger = observability.logger ?? createLogger(config);
  // graphile-worker locks jobs and queues in the name of its pool, created inside run().
  const poolIds = new Set<string>();
  const heartbeat = startHeartbeat(poolIds, config, logger);
  let runner: Runner | null = null;
  let stopping = false;
  let restartTimer: NodeJS.Timeout | null = null;
  /** pools of runners that died in this process: their locks go as soon as the database answers */
  const abandoned: string[] = [];
  let observed: { running(): RunningJob[] } | null = null;

  const launch = async () => {
    // Listening before run(): the pool and the first jobs start while it is still returning.
    const events: WorkerEvents = new EventEmitter();
    observed = observeJobs({ events }, logger, observability.metrics);
    const mine = new Set<string>();
    events.on('pool:create', ({ workerPool }) => {
      mine.add(workerPool.id);
      poolIds.add(workerPool.id);
    });
    const started = await run({
      events,
      connectionString: withApplicationName(config.database.url, WORKER_APPLICATION_NAME),
      // The same switch as postgres.js's `prepare`: no named statements behind a transaction pooler.
      noPreparedStatements: config.database.pooled,
      concurrency: config.WORKER_CONCURRENCY,
      maxPoolSize: config.WORKER_CONCURRENCY + 2,
      pollInterval: 2000,
      noHandleSignals: true,
      // running jobs are told to abort (helpers.abortSignal) this long into a graceful stop
      gracefulShutdownAbortTimeout: STOP_GRACE_MS,
      taskList: schedule.taskList(config, observability.metrics),
      crontab: schedule.crontab,
      logger: graphileLogger(logger),
      // Batched completion (even with no delay) handles a lost database by stopping the pool,
      // which is restarted below; the unbatched path leaves the rejection unhandled.
      preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    });
    runner = started;
    // The pool stops itself when the database goes away under it (graphile-worker cannot record a
    // job's outcome): its beat ends at once, so its locks are released, and a new runner takes over.
    let dead = false;
    const died = (why: string) => {
      if (dead || stopping) return;
      dead = true;
      for (const id of mine) {
        poolIds.delete(id);
        abandoned.push(id);
      }
      if (runner === started) runner = null;
      started.kill().catch(() => {});
      logger.warn(`job worker stopped (${why}); starting a new one`);
      scheduleRestart(1_000);
    };
    events.on('stop', () => died('its pool stopped'));
    started.promise.catch((error: Error) => died(error.message));
    await heartbeat.beat();
    if (abandoned.length > 0) await heartbeat.release(abandoned.splice(0));
    await schedule.onWorkerStart(started, config);
  };
  const scheduleRestart = (delay: number) => {
    restartTimer = setTimeout(() => {
      restartTimer = null;
      if (stopping) return;
      launch().then(
        () => logger.info('job worker running again'),
        () => scheduleRestart(Math.min(delay * 2, MAX_RESTART_DELAY_MS)),
      );
    }, delay);
  };

  await launch();
  // the live venue streams: held by one worker at a time (a lease), whichever process it runs in
  const streams = startStreamHolder(config, logger);
  return {
    running: () => observed?.running() ?? [],
    async stop() {
      stopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      heartbeat.stopBeating();
      await streams?.stop();
      const current = runner;
      if (current) {
        // graphile-worker's graceful stop waits for running jobs, and a backfill takes minutes: past
        // the grace period the forceful stop gives them back to the queue (they run again elsewhere;
        // their open transactions roll back when this process's connections close).
        await withTimeout(current.stop(), STOP_GRACE_MS)
          .catch(() => withTimeout(current.kill(), STOP_GRACE_MS))
          .catch(() => {});
      }
      await withTimeout(heartbeat.farewell(), STOP_GRACE_MS).catch(() => {});
    },
  };
}

function startHeartbeat(workerIds: Set<string>, config: Config, logger: Logger) {
  const sql = createSql(config.database, { max: 1 });
  const process_ = `${hostname()}:${process.pid}`;
  const stale = `${workerStaleAfterMs(config) / 1000} seconds`;
  let timer: NodeJS.Timeout | null = null;
  let beating: Promise<void> = Promise.resolve();

  const beat = () =>
    (beating = (async () => {
      try {
        const [row] = await sql<{ released: number }[]>`
          select app.worker_heartbeat(${process_}, ${[...workerIds]}::text[], ${stale}::interval) as released`;
        if (row!.released > 0) logger.warn(`released the job locks of ${row!.released} dead worker(s)`);
      } catch (error) {
        // The database may be restarting; the next beat tries again.
        logger.warn(`worker heartbeat failed: ${(error as Error).message}`);
      }
    })());
  timer = setInterval(() => void beat(), config.WORKER_HEARTBEAT_MS);
  timer.unref();
  return {
    beat,
    stopBeating() {
      if (timer) clearInterval(timer);
      timer = null;
    },
    /** gives back what these pools hold and forgets them (best effort: else they go stale) */
    async release(ids: string[]) {
      try {
        await sql`select app.worker_farewell(${ids}::text[])`;
      } catch {
        // without the database, the locks go once the beats are stale
      }
    },
    async farewell() {
      await beating;
      await this.release([...workerIds]);
      await sql.end({ timeout: 2 });
    },
  };
}
