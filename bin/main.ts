// `make start`: the service in one process tree (API + worker, embedded database beside it).
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { UnsupportedServerError } from '../src/db/server-check.ts';
import { startService } from '../src/service.ts';
import { schedule } from '../jobs/index.ts';

const config = loadConfig();
const logger = createLogger(config);
const service = await startService(config, logger, schedule).catch((error: Error) => {
  if (!(error instanceof UnsupportedServerError)) throw error;
  logger.fatal(error.message);
  process.exit(1);
});
logger.info({ url: `${service.url}/api/v1`, database: service.config.database.embedded ? `embedded, ${service.config.database.url}` : 'DATABASE_URL' }, `market-data-api listening on ${service.url}/api/v1`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    // A second signal, or a shutdown that outlives its bound, ends the process at once.
    if (stopping) process.exit(130);
    stopping = true;
    setTimeout(() => process.exit(1), 15_000).unref();
    await service.close();
    process.exit(0);
  });
}
