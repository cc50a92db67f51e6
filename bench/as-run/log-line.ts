// What one request log line costs the process that writes it: `count` lines shaped as the request
// log's (src/http/observe.ts) through the service's logger to stderr (the bench points it at a file),
// timed until the last is handed over, then until all are written (the exit's flush). Prints one JSON
// line on stdout: { handedUs, writtenUs } per line.
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { createLogger } from '../../src/log.ts';

// json and pretty: the service's own destinations; the -sync ones, written (and formatted) on the
// logging thread itself, as the service did before
const [format, count] = [process.argv[2] as 'json' | 'pretty' | 'json-sync' | 'pretty-sync', Number(process.argv[3] ?? 100_000)];
const logger = format.endsWith('-sync')
  ? createLogger({ LOG_FORMAT: format === 'json-sync' ? 'json' : 'pretty', LOG_LEVEL: 'info' }, pino.destination({ dest: 2, sync: true }))
  : createLogger({ LOG_FORMAT: format as 'json' | 'pretty', LOG_LEVEL: 'info' });
const line = { requestId: '4c41a437-69bb-4d78-9847-2b3f7a1501f4', method: 'GET', route: '/api/v1/coins/{slug}', status: 200, durationMs: 0.4, keyId: 2, admission: 'ok' };
const started = performance.now();
for (let i = 0; i < count; i++) logger.info(line, 'request');
const handed = performance.now() - started;
logger.flush(() => {
  const written = performance.now() - started;
  process.stdout.write(`${JSON.stringify({ handedUs: (1000 * handed) / count, writtenUs: (1000 * written) / count })}\n`);
  process.exit(0);
});
