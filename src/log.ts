// The one logger of the service: pino, one JSON object per line on stderr (stdout stays for
// command output such as printed keys), or short human-readable lines (pretty) when stderr is a
// terminal or LOG_FORMAT=pretty. LOG_FORMAT=json keeps JSON on a terminal too.
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

const SECRETS = new Set(SECRET_FIELDS);
const URLS = new Set(URL_FIELDS);
const REDACTED = '[Redacted]';
const BINDING_CENSORS = Object.fromEntries([
  ...SECRET_FIELDS.map((name) => [name, () => REDACTED]),
  ...URL_FIELDS.map((name) => [name, maskUrlPassword]),
]) as Record<string, (value: unknown) => string>;

/**
 * The object a log line is made of, its secret fields censored at any of the first three levels
 * (URLs with the password masked): the object itself when it holds none, else a copy of the path
 * down to them, the caller's object untouched. A walk of the line's own keys: pino's wildcard
 * redaction (*.key, *.*.key) cost a request line 50 µs, more than the rest of a warm answer.
 */
function withoutSecrets<T extends object>(value: T, levels = 3): T {
  let copy: Record<string, unknown> | null = null;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const field = (value as Record<string, unknown>)[key];
    if (field === undefined) continue;
    const clean = SECRETS.has(key) ? REDACTED
      : URLS.has(key) ? maskUrlPassword(field)
      : levels > 1 && typeof field === 'object' && field !== null && !ArrayBuffer.isView(field) ? withoutSecrets(field, levels - 1)
      : field;
    if (clean !== field) (copy ??= copyOf(value))[key] = clean;
  }
  return (copy ?? value) as T;
}

/** A shallow copy that an Error stays (pino's err serializer reads its message and stack). */
function copyOf(value: object): Record<string, unknown> {
  if (Array.isArray(value)) return value.slice() as unknown as Record<string, unknown>;
  const copy = Object.assign(Object.create(Object.getPrototypeOf(value) as object | null) as object, value) as Record<string, unknown>;
  if (value instanceof Error) Object.assign(copy, { message: value.message, stack: value.stack });
  return copy;
}

export type LogSettings = Pick<Config, 'LOG_FORMAT' | 'LOG_LEVEL'>;

/** Marks a logger (and, through the prototype chain, its children) that writes for a person. */
const PRETTY = Symbol('pretty');

/** LOG_FORMAT when set; else pretty on a terminal, JSON for anything else (files, pipes, log collectors). */
export const logFormat = (settings: Pick<LogSettings, 'LOG_FORMAT'>, tty: boolean): 'json' | 'pretty' => settings.LOG_FORMAT ?? (tty ? 'pretty' : 'json');

// One line per entry: the time, the level, the message, then the fields that say more (a request's
// method, route, status and duration in the message itself); an error keeps its stack below.
// Left out: what the message already says, and graphile-worker's scope of each note.
const PRETTY_IGNORED = [
  'pid', 'hostname', 'service', 'requestId', 'method', 'route', 'status', 'durationMs', 'keyId', 'admission',
  'migrationsApplied', 'functionFiles', 'component', 'label', 'workerId', 'taskIdentifier', 'jobId',
];
const prettyOptions = {
  translateTime: 'SYS:HH:MM:ss',
  ignore: PRETTY_IGNORED.join(','),
  singleLine: true,
  messageFormat: '{msg}{if method} {method} {route} {status} {durationMs} ms{end}',
};

/** Bytes of log lines waiting for stderr at most; beyond, new lines are dropped (and counted) rather than the process growing or waiting. */
export const LOG_BUFFER_BYTES = 16 * 1024 * 1024;
let dropped = 0;
/** Log lines dropped since start because stderr did not keep up (mdapi_log_lines_dropped_total). */
export const droppedLogLines = () => dropped;

/**
 * JSON lines to stderr, written asynchronously: a request's line is queued, not written while the
 * answer waits (a synchronous write cost a warm answer a fifth of its time). pino flushes what is
 * queued synchronously at exit, so only a crash that kills the process outright (SIGKILL, OOM)
 * loses the lines of its last moments.
 */
function stderrLines(): DestinationStream {
  const stream = pino.destination({ dest: 2, sync: false, maxLength: LOG_BUFFER_BYTES });
  stream.on('drop', (data: string) => (dropped += data.split('\n').length - 1 || 1));
  return stream;
}

/**
 * `destination`: where the lines go (stderr when absent). `tty`: whether they reach a terminal
 * (by default: stderr is one and no destination is given), which picks pretty unless LOG_FORMAT says.
 */
export function createLogger(settings: LogSettings, destination?: DestinationStream, tty = destination === undefined && process.stderr.isTTY === true): Logger {
  const format = logFormat(settings, tty);
  const stream = destination
    ? format === 'pretty' ? pretty({ ...prettyOptions, destination, sync: false, colorize: tty }) : destination
    : format === 'pretty'
      // formatted in a worker thread: a person's terminal must not slow the answers down
      ? pino.transport({ target: 'pino-pretty', options: { ...prettyOptions, destination: 2, colorize: tty } })
      : stderrLines();
  const logger = pino(
    {
      level: settings.LOG_LEVEL,
      base: { service: 'market-data-api' },
      timestamp: pino.stdTimeFunctions.isoTime,
      // "level":"info" rather than pino's 30: what log collectors and people filter on.
      formatters: { level: (label) => ({ level: label }), log: withoutSecrets, bindings: withoutSecrets },
      // a child's bindings skip the formatters: their secret names are censored by serializers
      serializers: BINDING_CENSORS,

    },
    stream,
  );
  if (format === 'pretty') Object.defineProperty(logger, PRETTY, { value: true });
  return logger;
}

/** Whether the logger writes for a person (pretty) rather than for a log collector (JSON). */
export const writesForPeople = (logger: Logger): boolean => (logger as Logger & { [PRETTY]?: boolean })[PRETTY] === true;

/**
 * For lines a person at a terminal wants as a sum, not one by one (each migration applied, each
 * routine job run): the logger itself in JSON, where log collectors keep every line; in pretty
 * output, one that shows them only at LOG_LEVEL=debug (warnings and errors still pass).
 */
export function detailLogger(logger: Logger): Logger {
  return writesForPeople(logger) && !logger.isLevelEnabled('debug') ? logger.child({}, { level: 'warn' }) : logger;
}

/** For callers (tests, benchmarks) that want no output at all. */
export const silentLogger: Logger = pino({ level: 'silent' });

/** The metadata by which a task's `helpers.logger.info` note reaches the info level (the demo's first-start backfill). */
export const NOTICE = { notice: true };

/** graphile-worker's own messages (start-up, cron, errors) through the same logger, its scope as fields. */
export function graphileLogger(logger: Logger): GraphileLogger {
  const factory: LogFunctionFactory = (scope) => {
    const child = logger.child({ component: 'worker', ...scope });
    return (level, message, meta) => {
      // Its per-job "Completed task" lines repeat the service's own job lines (src/job-runs.ts), and
      // the tasks' own notes are routine: debug, but for a note a task marks as a NOTICE.
      // Its metadata may hold a whole job row, payload included: keep the error and the figures only.
      const { job: _job, error, notice, ...rest } = (meta ?? {}) as Record<string, unknown>;
      const method = level === 'warning' ? 'warn' : level === 'info' && notice !== true ? 'debug' : level;
      child[method](error === undefined ? rest : { ...rest, err: error }, message);
    };
  };
  return new GraphileLogger(factory);
}
