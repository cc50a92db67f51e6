// Brings the whole service up — database (embedded if no DATABASE_URL), migrations, worker,
// HTTP — and down again in the reverse order.
import { createServer } from 'node:http';
import type { Config } from './config.ts';
import { createSql, type Sql } from './db/client.ts';
import { Listener } from './db/listener.ts';
import { ReadReplicas } from './db/replicas.ts';
import { openDatabase } from './db/open.ts';
import { migrate } from './db/migrate.ts';
import { queryOf } from './db/query.ts';
import { loadVapid } from './push/vapid.ts';
import { describeImport } from './content/import.ts';
import { loadDemoContentIfEmpty } from './content/demo.ts';
import { createApp, guardServer, type Served } from './http/app.ts';
import { apiRoutes } from './api/index.ts';
import { mcpRouter } from './mcp/server.ts';
import { priceSocket } from './api/stream.ts';
import { consoleRouter } from './console/router.ts';
import { pagesRouter } from './pages/router.ts';
import { widgetRouter } from './widgets/router.ts';
import { StreamHub } from './streams/hub.ts';
import { startWorker, type JobSchedule, type Worker } from './worker.ts';
import { createLogger, type Logger } from './log.ts';
import { Metrics } from './metrics.ts';

/**
 * What the HTTP app serves: the API groups' routes and, beside them, the public pages (their
 * navigation links the console when it is on), the MCP tool server, the console, the widgets and
 * the live-price hub.
 */
export const served: Served = {
  routes: apiRoutes,
  routers: [pagesRouter((config) => (config.CONSOLE === 'off' ? [] : [['/console', 'Console']])), mcpRouter, consoleRouter, widgetRouter],
  sockets: { '/api/v1/ws': priceSocket },
  streams: (deps, metrics, logger) => new StreamHub(deps.sql, deps.listener, deps.config, metrics, logger).start(),
};

export interface RunningService {
  url: string;
  sql: Sql;
  config: Config;
  close(): Promise<void>;
}

/** The API, and with WORKER=inline the job worker running `schedule` (jobs/index.ts, given by the entry point). */
export async function startService(initial: Config, logger: Logger = createLogger(initial), schedule?: JobSchedule): Promise<RunningService> {
  if (initial.WORKER === 'inline' && !schedule) throw new Error('WORKER=inline: startService needs the job schedule (jobs/index.ts)');
  const { config, embedded } = await openDatabase(initial);
  // Meanwhile requests answer 503 and the worker retries; both reconnect on their own.
  embedded?.events.on('exit', (code, signal) => logger.error(`embedded database exited (${signal ?? `code ${code}`}); restarting it`));
  embedded?.events.on('restart', (port) => logger.info(`embedded database restarted on port ${port}`));
  const sql = createSql(config.database, { max: config.DATABASE_POOL_SIZE });
  // One registry for the app and the inline worker: /metrics shows both.
  const metrics = new Metrics(config);
  let worker: Worker | null = null;
  try {
    await migrate(sql, logger);
    // the VAPID key pair of browser push: made now on a first start (kept in the database) unless configured
    await loadVapid(queryOf(sql), config);
    // First start with the demo market on: the demo wallets and articles come with it.
    if (config.MARKET_SOURCE === 'simulated') {
      const loaded = await loadDemoContentIfEmpty(sql);
      if (loaded) logger.info(`demo content loaded: ${describeImport(loaded).join('; ')}`);
    }
    if (config.WORKER === 'inline') worker = await startWorker(config, schedule!, { logger, metrics });
  } catch (error) {
    await sql.end({ timeout: 5 });
    await embedded?.stop();
    throw error;
  }
  const replicas = config.DATABASE_READ_URL
    ? new ReadReplicas(sql, config.DATABASE_READ_URL, {
      pooled: config.database.pooled, poolSize: config.DATABASE_POOL_SIZE, maxLagMs: config.DATABASE_READ_MAX_LAG_MS,
      checkMs: config.DATABASE_READ_CHECK_MS, logger,
    })
    : null;
  replicas?.start();
  const running = worker;
  // the process's one LISTEN connection: the response cache, admission and the live-price hub subscribe to it
  const listener = new Listener(sql, { logger });
  const app = createApp({ sql, config, replicas, listener, activity: running ? () => running.running() : undefined }, { logger, metrics }, served);
  const server = createServer(app.callback());
  guardServer(server);
  app.attach(server);
  await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://${config.HOST}:${port}`,
    sql,
    config,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      // the admission counts not yet written, before the pool ends
      await app.close();
      await listener.close();
      await worker?.stop();
      await replicas?.close();
      await sql.end({ timeout: 5 });
      await embedded?.stop();
    },
  };
}
