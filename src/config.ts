// Every setting the service reads from the environment, validated in one place.
import { availableParallelism } from 'node:os';
import { z } from 'zod';

const flag = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

const schema = z.object({
  DATABASE_URL: z.string().url().optional(),
  DATABASE_POOLED: flag.optional(),
  DATA_DIR: z.string().default('./data'),
  EMBEDDED_DB_PORT: z.coerce.number().int().min(0).max(65535).default(54329),
  // A client of the embedded database idle inside a transaction blocks every other client.
  EMBEDDED_IDLE_TX_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  // Longest batch of an outside client (psql, the analyst) on the embedded database; 0: none.
  EMBEDDED_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(5_000),
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  // Twice the cores, 4 to 16: queries beyond what the cores can serve wait in the pool's pipelines
  // instead of waking one more backend each (with the database on the same cores, every such
  // wake-up takes a core from the API).
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(Math.min(16, Math.max(4, 2 * availableParallelism()))),
  // Streaming replicas for the read-only market-data queries: one or more URLs, comma-separated.
  DATABASE_READ_URL: z
    .string()
    .transform((value) => value.split(',').map((url) => url.trim()).filter(Boolean))
    .pipe(z.array(z.string().url()).min(1))
    .optional(),
  // A replica further behind the primary than this is skipped until it catches up.
  DATABASE_READ_MAX_LAG_MS: z.coerce.number().int().min(100).default(10_000),
  // How often each replica's state and lag are checked.
  DATABASE_READ_CHECK_MS: z.coerce.number().int().min(100).max(60_000).default(2_000),
  WORKER: z.enum(['inline', 'off']).default('inline'),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(2),
  // a worker whose beat is three of these old is dead and its job locks are released
  WORKER_HEARTBEAT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  TIMESCALEDB_JOB_RUNNER: z.enum(['auto', 'on', 'off']).default('auto'),
  MARKET_SOURCE: z.enum(['simulated', 'exchanges', 'none']).default('simulated'),
  // MARKET_SOURCE=exchanges: the venues (ccxt ids, comma-separated; default the six of src/sources/exchanges/venues.ts)
  EXCHANGES: z.string().regex(/^[a-z0-9, ]*$/, 'comma-separated ccxt ids such as binance,okx').optional(),
  // base URL per venue standing in for its hosts (a proxy, a mirror, the replay server): binance=http://…,okx=http://…
  EXCHANGE_URLS: z.string().optional(),
  EXCHANGE_TIMEOUT_MS: z.coerce.number().int().min(500).max(120_000).default(10_000),
  // how long one venue may spend fetching candles in a minute's run
  EXCHANGE_BUDGET_MS: z.coerce.number().int().min(1_000).max(55_000).default(40_000),
  // default: the ECB's rates with real market data, the offline placeholders with the demo
  FX_SOURCE: z.enum(['seed', 'ecb']).optional(),
  ECB_URL: z.string().url().default('https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml'),
  // Coin supplies refreshed hourly from a keyless metadata source; none keeps the catalogue's.
  // Default: coinpaprika with real market data, none with the demo.
  METADATA_SOURCE: z.enum(['none', 'coinpaprika']).optional(),
  COINPAPRIKA_URL: z.string().url().default('https://api.coinpaprika.com'),
  // How often each API process writes its admission counts to the shared counters (ms); 0 admits every
  // request with its own database transaction (exact across processes, slower).
  ADMISSION_FLUSH_MS: z.coerce.number().int().min(0).max(60_000).default(200),
  AUTH_FAILURES_PER_KEY: z.coerce.number().int().min(1).default(10),
  AUTH_FAILURES_PER_CLIENT: z.coerce.number().int().min(1).default(100),
  TRUST_PROXY: flag.default(false),
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(65_536),
  // In-process cache of market-data responses (src/http/cache.ts), in MiB; 0 turns it off.
  RESPONSE_CACHE_MB: z.coerce.number().min(0).max(65_536).default(64),
  // strict: each cached answer waits for a read of the data versions begun after the request came
  // (shared by concurrent requests), so no refresh committed before it is missed; notify: trusts
  // the NOTIFY already received, which can trail a commit by the delivery time.
  CACHE_FRESHNESS: z.enum(['strict', 'notify']).default('strict'),
  // /mcp refuses a browser Origin other than loopback and these (comma-separated, e.g. https://app.example.com).
  MCP_ALLOWED_ORIGINS: z.string().default('').transform((value) => value.split(',').map((item) => item.trim().replace(/\/+$/, '')).filter(Boolean)),
  // One JSON line per request (info level); false keeps job, start-up and error lines only.
  LOG_REQUESTS: flag.default(true),
  // json: one JSON object per line; pretty: short readable lines. Unset: pretty when stderr is a terminal, else json.
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // GET /metrics answers loopback clients without it, anyone with `Authorization: Bearer <METRICS_TOKEN>`.
  METRICS_TOKEN: z.string().min(16).optional(),
  // GET /readyz fails without a fresh worker heartbeat; defaults to true with WORKER=inline, false with WORKER=off.
  READY_REQUIRES_WORKER: flag.optional(),
  // The service's public base URL (https://api.example.com) for absolute links in the discovery
  // documents; default: the scheme and host of each request.
  PUBLIC_URL: z.string().url().transform((url) => url.replace(/\/+$/, '')).optional(),
  // security.txt (RFC 9116): where to report vulnerabilities (mailto:, https: or tel: URI) and
  // when the file expires (ISO 8601); default contact mailto:security@<host>, expiry computed.
  SECURITY_CONTACT: z.string().regex(/^(mailto|https|tel):\S+$/, 'a mailto:, https: or tel: URI').optional(),
  SECURITY_TXT_EXPIRES: z.string().datetime({ offset: true }).optional(),
  // Webhooks: loopback/private-range targets are refused unless allowed (tests use 127.0.0.1 receivers).
  WEBHOOK_ALLOW_PRIVATE_TARGETS: flag.default(false),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  // retries wait 1, 5 and 25 times this
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(1).default(60_000),
  // E-mail (alarm notifications, deprecation notices): the SMTP server, e.g. smtp://user:pass@mail.example.com:587
  // (STARTTLS when offered) or smtps://…:465; unset: e-mail is off and e-mail alarms are refused.
  SMTP_URL: z.string().url().regex(/^smtps?:\/\//, 'an smtp:// or smtps:// URL').optional(),
  // the From of every e-mail, e.g. "Market Data API <alerts@example.com>"; required with SMTP_URL
  MAIL_FROM: z.string().min(3).optional(),
  // connect, greeting and each reply of an SMTP attempt
  SMTP_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  // a deferred e-mail is retried after 1, 5 and 25 times this
  EMAIL_RETRY_BASE_MS: z.coerce.number().int().min(1).default(60_000),
});

export type Config = Omit<z.infer<typeof schema>, 'FX_SOURCE' | 'METADATA_SOURCE'> & {
  FX_SOURCE: 'seed' | 'ecb';
  METADATA_SOURCE: 'none' | 'coinpaprika';
  /** where the service's database is, and whether it sits behind a transaction pooler */
  database: DatabaseSettings;
};

export interface DatabaseSettings {
  url: string;
  /**
   * a transaction-level pooler in front that cannot keep named prepared statements apart (PgBouncer
   * without max_prepared_statements): none are used. The embedded multiplexer keeps them per connection.
   */
  pooled: boolean;
  embedded: boolean;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const values = parsed.data;
  // The embedded database has no replicas: a read URL beside it would point at some other database.
  if (values.DATABASE_READ_URL && !values.DATABASE_URL) {
    throw new Error('invalid configuration:\n  DATABASE_READ_URL: read replicas need a database server (DATABASE_URL); the embedded database has none');
  }
  if (values.SMTP_URL && !values.MAIL_FROM) {
    throw new Error('invalid configuration:\n  MAIL_FROM: e-mail needs a sender address with SMTP_URL, e.g. MAIL_FROM="Market Data API <alerts@example.com>"');
  }
  const database: DatabaseSettings = values.DATABASE_URL
    ? { url: values.DATABASE_URL, pooled: values.DATABASE_POOLED ?? false, embedded: false }
    : { url: embeddedUrl(values.EMBEDDED_DB_PORT), pooled: false, embedded: true };
  const fxSource = values.FX_SOURCE ?? (values.MARKET_SOURCE === 'exchanges' ? 'ecb' : 'seed');
  const metadataSource = values.METADATA_SOURCE ?? (values.MARKET_SOURCE === 'exchanges' ? 'coinpaprika' : 'none');
  return { ...values, FX_SOURCE: fxSource, METADATA_SOURCE: metadataSource, database };
}

export const embeddedUrl = (port: number, user = 'postgres') => `postgres://${user}@127.0.0.1:${port}/postgres`;

/** A worker pool whose last beat is this many beats old is dead: its job locks are released. */
export const STALE_AFTER_BEATS = 3;
export const workerStaleAfterMs = (config: Pick<Config, 'WORKER_HEARTBEAT_MS'>) => STALE_AFTER_BEATS * config.WORKER_HEARTBEAT_MS;
