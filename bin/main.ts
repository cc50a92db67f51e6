// `make start`: the service in one process tree (API + worker, embedded database beside it).
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { UnsupportedServerError } from '../src/db/server-check.ts';
import { startService } from '../src/service.ts';
import { announceListening } from '../src/banner.ts';
import { schedule } from '../jobs/index.ts';

const config = loadConfig();
const logger = createLogger(config);
const service = await startService(config, logger, schedule).catch((error: Error) => {
  if (!(error instanceof UnsupportedServerError)) throw error;
  logger.fatal(error.message);
  process.exit(1);
});
announceListening(logger, service.url, service.config);

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
