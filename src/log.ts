// The one logger of the service: pino, one JSON object per line on stderr (stdout stays for
// command output such as printed keys), or human-readable lines with LOG_FORMAT=pretty.
// Secrets are redacted by configuration, whatever object a caller hands over.
import { Logger as GraphileLogger, type LogFunctionFactory } from 'graphile-worker';
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from './config.ts';

export type Logger = PinoLogger;

/** Field names whose values never reach a log line, at any of the first three levels of nesting. */
const SECRET_FIELDS = ['authorization', 'cookie', 'key', 'api_key', 'apiKey', 'secret', 'password', 'pass', 'token', 'METRICS_TOKEN'];
/** Connection strings: logged with the password masked, so the host and database stay visible. */
const URL_FIELDS = ['DATABASE_URL', 'BENCH_DATABASE_URL', 'TEST_DATABASE_URL', 'SMTP_URL', 'databaseUrl', 'connectionString'];

const paths = (names: string[]) => names.flatMap((name) => [name, `*.${name}`, `*.*.${name}`]);

/** Masks the password of a URL; anything that is not a parsable URL is withheld entirely. */
export function maskUrlPassword(value: unknown): string {
  if (typeof value !== 'string') return '[Redacted]';
  try {
    const url = new URL(value);
    if (url.password) url.password = 'redacted';
    return url.toString();
  } catch {
    return '[Redacted]';
  }
}

export function createLogger(settings: Pick<Config, 'LOG_FORMAT' | 'LOG_LEVEL'>, destination?: DestinationStream): Logger {
  const stream = destination ?? (settings.LOG_FORMAT === 'pretty' ? pretty({ destination: 2, colorize: process.stderr.isTTY }) : pino.destination({ dest: 2, sync: true }));
  return pino(
    {
      level: settings.LOG_LEVEL,
      base: { service: 'market-data-api' },
      timestamp: pino.stdTimeFunctions.isoTime,
      // "level":"info" rather than pino's 30: what log collectors and people filter on.
      formatters: { level: (label) => ({ level: label }) },
      redact: {
        paths: [...paths(SECRET_FIELDS), ...paths(URL_FIELDS)],
        censor: (value, path) => (URL_FIELDS.includes(path.at(-1)!) ? maskUrlPassword(value) : '[Redacted]'),
      },
    },
    stream,
  );
}

/** For callers (tests, benchmarks) that want no output at all. */
export const silentLogger: Logger = pino({ level: 'silent' });

/** graphile-worker's own messages (start-up, cron, errors) through the same logger, its scope as fields. */
export function graphileLogger(logger: Logger): GraphileLogger {
  const factory: LogFunctionFactory = (scope) => {
    const child = logger.child({ component: 'worker', ...scope });
    return (level, message, meta) => {
      // Its per-job "Completed task" lines repeat the service's own job lines (src/job-runs.ts): debug.
      const method = level === 'warning' ? 'warn' : level === 'info' ? 'debug' : level;
      // Its metadata may hold a whole job row, payload included: keep the error and the figures only.
      const { job: _job, error, ...rest } = (meta ?? {}) as Record<string, unknown>;
      child[method](error === undefined ? rest : { ...rest, err: error }, message);
    };
  };
  return new GraphileLogger(factory);
}
