// Every setting the service reads from the environment, validated in one place. Each variable's
// description (and, where the default is computed, the default as people should read it) lives
// here too: docs/configuration.md is generated from these groups (`make config-doc`).
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { PLANS_BY_SCOPE } from './plans.ts';
import { booleanFlag } from './validators.ts';

/** A variable's description, and its default in words where the schema's value is computed or absent. */
const doc = (description: string, documentedDefault?: string) => ({ description, ...(documentedDefault ? { documentedDefault } : {}) });

/** A comma-separated list of plans of one key scope, at least one. */
const planList = <S extends keyof typeof PLANS_BY_SCOPE>(scope: S, fallback: string) => z.string().default(fallback)
  .transform((value) => value.split(',').map((plan) => plan.trim()).filter(Boolean))
  .pipe(z.array(z.enum(PLANS_BY_SCOPE[scope])).min(1));

const database = {
  DATABASE_URL: z.string().url().optional().meta(doc('PostgreSQL/TimescaleDB URL (`postgres://user:password@host:5432/db`); unset: the embedded database.', 'unset (embedded)')),
  DATABASE_POOLED: booleanFlag.optional().meta(doc('A transaction-level pooler that cannot keep prepared statements apart (PgBouncer without `max_prepared_statements`) sits in front: none are used.', '`false`')),
  // Twice the cores, 4 to 16: queries beyond what the cores can serve wait in the pool's pipelines
  // instead of waking one more backend each (with the database on the same cores, every such
  // wake-up takes a core from the API).
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(Math.min(16, Math.max(4, 2 * availableParallelism())))
    .meta(doc('Connections of the API process; queries beyond them are pipelined on the open ones (bench/README.md says why not more on a database sharing the API\'s cores).', 'twice the cores, 4 to 16')),
  DATABASE_READ_URL: z
    .string()
    .transform((value) => value.split(',').map((url) => url.trim()).filter(Boolean))
    .pipe(z.array(z.string().url()).min(1))
    .optional()
    .meta(doc('Streaming replicas (one or more URLs, comma-separated) that serve the read-only market-data queries; a database server only, refused with the embedded database.')),
  DATABASE_READ_MAX_LAG_MS: z.coerce.number().int().min(100).default(10_000).meta(doc('A replica further behind the primary than this is skipped until it catches up.')),
  DATABASE_READ_CHECK_MS: z.coerce.number().int().min(100).max(60_000).default(2_000).meta(doc('How often each replica\'s state and lag are checked.')),
};

const embedded = {
  DATA_DIR: z.string().default('./data').meta(doc('Where the embedded database keeps its files.')),
  EMBEDDED_DB_PORT: z.coerce.number().int().min(0).max(65535).default(54329).meta(doc('Loopback port of the embedded database.')),
  // A client of the embedded database idle inside a transaction blocks every other client.
  EMBEDDED_IDLE_TX_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000).meta(doc('Drop a connection idle inside a transaction this long; `0`: never.')),
  EMBEDDED_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(5_000)
    .meta(doc('Cancel an outside client\'s statement batch (psql, the analyst) after this long; `0`: never. The service\'s own connections are exempt.')),
};

const http = {
  HOST: z.string().default('127.0.0.1').meta(doc('Address the HTTP API listens on.')),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000).meta(doc('Port the HTTP API listens on.')),
  PUBLIC_URL: z.string().url().transform((url) => url.replace(/\/+$/, '')).optional()
    .meta(doc('The service\'s public base URL (`https://api.example.com`): base of every absolute link (pagination, logos, discovery documents, e-mails). Set it behind a proxy.', 'the request\'s scheme and host')),
  TRUST_PROXY: booleanFlag.default(false).meta(doc('Take the client address from `X-Forwarded-For`, and the scheme and host of absolute links from `X-Forwarded-Proto`/`X-Forwarded-Host` (behind a reverse proxy).')),
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(65_536).meta(doc('Largest accepted request body.')),
  MCP_ALLOWED_ORIGINS: z.string().default('').transform((value) => value.split(',').map((item) => item.trim().replace(/\/+$/, '')).filter(Boolean))
    .meta(doc('Browser origins allowed on `/mcp` besides loopback (comma-separated, e.g. `https://app.example.com`).', 'none')),
  SECURITY_CONTACT: z.string().regex(/^(mailto|https|tel):\S+$/, 'a mailto:, https: or tel: URI').optional()
    .meta(doc('`Contact` of `/.well-known/security.txt` (RFC 9116): a `mailto:`, `https:` or `tel:` URI.', '`mailto:security@<host>`')),
  SECURITY_TXT_EXPIRES: z.string().datetime({ offset: true }).optional().meta(doc('`Expires` of security.txt (ISO 8601 with offset).', '360 days after start-up')),
};

const admission = {
  // How often each API process writes its admission counts to the shared counters (ms); 0 admits every
  // request with its own database transaction (exact across processes, slower).
  ADMISSION_FLUSH_MS: z.coerce.number().int().min(0).max(60_000).default(200)
    .meta(doc('How often each API process writes its quota and rate-limit counts to the shared counters (ms); `0`: every request admitted by its own database transaction (exact across processes, slower).')),
  AUTH_FAILURES_PER_KEY: z.coerce.number().int().min(1).default(10).meta(doc('Failed authentications per presented key per minute before 429.')),
  AUTH_FAILURES_PER_CLIENT: z.coerce.number().int().min(1).default(100).meta(doc('Failed authentications per client address per minute before 429.')),
  RESPONSE_CACHE_MB: z.coerce.number().min(0).max(65_536).default(64)
    .meta(doc('The in-process response cache of market-data answers (MiB); `0` turns the store off (ETags, 304s and compression still work; the query runs every time).')),
  // strict: no refresh committed before a request came is missed. On a server that takes a read of
  // the versions begun after the request came (shared by concurrent requests): PostgreSQL can
  // acknowledge a commit before its NOTIFY reaches a listener. The embedded database's own server
  // writes every NOTIFY to its listeners before it acknowledges the commit, so there the
  // notification is already on the listening connection: one turn of the event loop reads it.
  // read: the read on either database; notify: trusts the NOTIFY already received.
  CACHE_FRESHNESS: z.enum(['strict', 'read', 'notify']).default('strict')
    .meta(doc('`strict`: no refresh committed before a request arrived is missed. On a database server a cached answer waits for a (shared) read of the data versions begun after the request arrived; on the embedded database, which delivers every NOTIFY before it acknowledges the commit, it waits one turn of the event loop for the notifications already received (a read while its listening connection has been silent for 10 s). `read`: the read on either database. `notify`: trusts the NOTIFY already received (on a server it can trail a commit by milliseconds).')),
  CACHE_CONFIRM_WAIT_MS: z.coerce.number().int().min(0).default(10)
    .meta(doc('With `CACHE_FRESHNESS=strict` on a server, or `read`, how long a cached answer waits for its read of the data versions. While the database has not answered a read for that long (busy with a long statement: the embedded database runs one at a time), answers go on at once with the versions as announced by NOTIFY, as with `notify`. `0`: as `notify` always.')),
};

const worker = {
  WORKER: z.enum(['inline', 'off']).default('inline').meta(doc('`inline`: the job worker runs in the API process; `off`: run `make worker` (`mdapi worker`) separately.')),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(2).meta(doc('Jobs a worker runs at once.')),
  WORKER_HEARTBEAT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000)
    .meta(doc('Worker heartbeat; a worker pool whose beat is three beats old is dead and its job locks are released.')),
  READY_REQUIRES_WORKER: booleanFlag.optional().meta(doc('`/readyz` fails without a fresh worker heartbeat.', '`true` with `WORKER=inline`, else `false`')),
  TIMESCALEDB_JOB_RUNNER: z.enum(['auto', 'on', 'off']).default('auto')
    .meta(doc('Who runs TimescaleDB\'s policy jobs: `auto` (the service where no scheduler runs, or for a job the scheduler neglects), `on` (the service, always), `off` (never the service).')),
};

const marketData = {
  MARKET_SOURCE: z.enum(['simulated', 'exchanges', 'none']).default('simulated')
    .meta(doc('`simulated`: the demo market; `exchanges`: real venues through ccxt; `none`: no built-in source (import your own history).')),
  EXCHANGES: z.string().regex(/^[a-z0-9, ]*$/, 'comma-separated ccxt ids such as binance,okx').optional()
    .meta(doc('Venues read with `MARKET_SOURCE=exchanges` (ccxt ids, comma-separated): the ten supported, or any other ccxt id with public tickers and one-minute candles (labelled unverified, read through REST alone).', 'all six: `binance,coinbase,kraken,okx,bybit,kucoin`')),
  EXCHANGE_URLS: z.string().optional()
    .meta(doc('`venue=url,…`: a base URL standing in for a venue\'s hosts (a mirror, proxy, testnet, the replay of `make venues-replay`); scheme and host of every API URL are replaced, paths kept.')),
  EXCHANGE_TIMEOUT_MS: z.coerce.number().int().min(500).max(120_000).default(10_000).meta(doc('A venue request fails after this long.')),
  EXCHANGE_BUDGET_MS: z.coerce.number().int().min(1_000).max(55_000).default(40_000).meta(doc('How long one venue may spend fetching candles in a minute\'s run.')),
  FX_SOURCE: z.enum(['seed', 'ecb']).optional()
    .meta(doc('`seed`: fixed placeholder fiat rates (offline); `ecb`: the European Central Bank\'s daily reference rates, fetched at start and twice a day.', '`seed`; `ecb` with `MARKET_SOURCE=exchanges`')),
  ECB_URL: z.string().url().default('https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml').meta(doc('Where the ECB rates are fetched.')),
  METADATA_SOURCE: z.enum(['none', 'coinpaprika']).optional()
    .meta(doc('`coinpaprika`: circulating, total and max supplies hourly and the coin list daily (it names the coins the venues bring) from CoinPaprika\'s keyless API; `none` keeps the catalogue\'s supplies, and coins the venues bring are named after the venue.', '`none`; `coinpaprika` with `MARKET_SOURCE=exchanges`')),
  COINPAPRIKA_URL: z.string().url().default('https://api.coinpaprika.com').meta(doc('Where CoinPaprika is reached.')),
};

const streams = {
  STREAM: z.enum(['on', 'off']).default('on')
    .meta(doc('`on`: a job worker (inline or `mdapi worker`) also holds live venue streams: its share of the venues, divided among every running holder, each venue held by one (a lease per venue); `off`: this process never does.')),
  STREAM_INTERVAL_MS: z.coerce.number().int().min(100).max(60_000).default(1_000)
    .meta(doc('How often a stream holder writes the live prices of its venues, rebuilds the live index price and renews (or takes, or sheds) its venue leases.')),
  STREAM_LEASE_SECONDS: z.coerce.number().min(1).max(600).default(10)
    .meta(doc('A stream holder\'s venue leases: the other holders take its venues over this long after it stopped renewing them. Likewise an API process\'s open streams stop counting against their keys\' limits (`STREAM_CONNECTIONS`) this long after it died.')),
  STREAM_MAX_AGE_SECONDS: z.coerce.number().int().min(1).max(3600).default(30)
    .meta(doc('A venue stream silent this long counts as stalled: the venue is left out of the live index price until it has reconnected and been resynchronised from its REST tickers; a venue price older than this is left out too.')),
  STREAM_CANDLES: z.enum(['on', 'off']).default('on')
    .meta(doc('`on`: the stream holder (with `MARKET_SOURCE=exchanges`) also takes every index market\'s one-minute candles from its venue\'s candle stream (trades where the venue has none), writes each minute once as it closes and rebuilds its index bar at once; REST fills what the streams miss. `off`: candles come from the minute job\'s REST polling alone.')),
  STREAM_CANDLE_WAIT_SECONDS: z.coerce.number().int().min(1).max(60).default(10)
    .meta(doc('How long after a minute\'s close the stream holder waits for a market\'s stream candle of it before the venue\'s REST candle stands for the minute.')),
  STREAM_CANDLE_CHECK_SECONDS: z.coerce.number().int().min(1).max(3600).default(60)
    .meta(doc('How often the stream holder compares the candles it counts stored with the database\'s: a minute missing between stored ones of the last 30 minutes, however it was lost, is asked of the venue\'s REST again (unless the venue answered that it has none).')),
  STREAM_PUBLISH_MS: z.coerce.number().int().min(10).max(1_000).default(100)
    .meta(doc('Between the holder\'s ticks, how often it writes the venue prices received and publishes the coins whose inputs changed, each coin at most once a second: a change waits at most this long once its coin\'s last publication is a second old.')),
  STREAM_READMIT_SECONDS: z.coerce.number().int().min(0).max(3600).default(10)
    .meta(doc('A venue whose stream broke off counts in the live index price again only once its stream has been clean (written, not broken off) this long after its REST resynchronisation.')),
  STREAM_REPLAY_SECONDS: z.coerce.number().int().min(1).max(3600).default(60)
    .meta(doc('Every live price change is kept this long: a stream reconnecting with `Last-Event-ID` within it gets each change it missed, beyond it a snapshot.')),
  STREAM_PLANS: z.string().default('starter,pro')
    .transform((value) => value.split(',').map((plan) => plan.trim()).filter(Boolean))
    .pipe(z.array(z.enum(PLANS_BY_SCOPE['data-api'])).min(1))
    .meta(doc('The plans whose keys may open live streams (`/api/v1/stream/prices`, `/api/v1/ws`), comma-separated; the lowest of them is the one required.', '`starter,pro`')),
  STREAM_CONNECTIONS: z.string().default('starter=2,pro=10')
    .transform((value, ctx) => {
      const limits: Record<string, number> = {};
      for (const part of value.split(',').map((item) => item.trim()).filter(Boolean)) {
        const match = /^([a-z]+)=(\d{1,6})$/.exec(part);
        if (!match) {
          ctx.addIssue({ code: 'custom', message: `expected plan=number, got "${part}"` });
          return z.NEVER;
        }
        limits[match[1]!] = Number(match[2]);
      }
      return limits;
    })
    .meta(doc('Concurrent live streams per key (SSE and WebSocket together, over all API processes), by plan (`plan=n,…`); a plan not named gets one.', '`starter=2,pro=10`')),
  STREAM_HEARTBEAT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000).meta(doc('A `:` comment line on every open SSE stream, a ping on every WebSocket (one not answered by the next is closed), this often.')),
  STREAM_BUFFER_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024)
    .meta(doc('A subscriber with more than this unsent in its socket\'s buffer is dropped (slow consumer), with a final event saying why.')),
};

const notifications = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: booleanFlag.default(false).meta(doc('Allow webhook URLs on loopback and private ranges (local setups, tests).')),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000).meta(doc('A webhook attempt fails after this long (connect to end of response).')),
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(1).default(60_000).meta(doc('First retry delay of a webhook delivery; the next ones are ×5 (1, 5, 25 minutes).')),
  SMTP_URL: z.string().url().regex(/^smtps?:\/\//, 'an smtp:// or smtps:// URL').optional()
    .meta(doc('The SMTP server for alarm e-mails and deprecation notices: `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://…:465`; unset: e-mail is off and e-mail alarms are refused.')),
  MAIL_FROM: z.string().min(3).optional().meta(doc('The From of every e-mail, e.g. `Market Data API <alerts@example.com>`; required with `SMTP_URL`.')),
  SMTP_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000).meta(doc('Connect, greeting and each reply of an SMTP attempt.')),
  EMAIL_RETRY_BASE_MS: z.coerce.number().int().min(1).default(60_000).meta(doc('First retry of a deferred e-mail; the next ones are ×5 (1, 5, 25 minutes).')),
  VAPID_PUBLIC_KEY: z.string().regex(/^[A-Za-z0-9_-]{87}$/, 'a P-256 public key: 87 base64url characters (web-push generate-vapid-keys)').optional()
    .meta(doc('The VAPID public key browser push is signed with (RFC 8292), with `VAPID_PRIVATE_KEY`; changing it makes every browser subscribe again.', 'a pair made on first start and kept in the database')),
  VAPID_PRIVATE_KEY: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'a P-256 private key: 43 base64url characters').optional()
    .meta(doc('The VAPID private key, with `VAPID_PUBLIC_KEY`.', 'the database\'s')),
  VAPID_SUBJECT: z.string().regex(/^(mailto:\S+@\S+|https:\/\/\S+)$/, 'a mailto: address or an https:// URL').optional()
    .meta(doc('How push services reach the operator (the VAPID `sub`): a `mailto:` address or an `https://` URL.', '`PUBLIC_URL` when https, else `mailto:push@localhost`')),
  PUSH_ALLOW_LOOPBACK: booleanFlag.default(false).meta(doc('Accept browser push endpoints on loopback addresses, over http too (local setups, tests); otherwise https to a public host only.')),
  PUSH_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000).meta(doc('A request to a browser push service fails after this long.')),
  PUSH_RETRY_BASE_MS: z.coerce.number().int().min(1).default(60_000).meta(doc('First retry of a push the push service did not accept (5xx, time-out); the next ones are ×5 (1, 5, 25 minutes).')),
};

const consoleSettings = {
  CONSOLE: z.enum(['on', 'off']).default('on').meta(doc('The developer console at `/console` (accounts, keys); `off` removes it.')),
  CONSOLE_SIGNUP: z.enum(['closed', 'invite', 'open']).default('closed')
    .meta(doc('Who may make a console account: `closed` (the operator, `mdapi create-account`), `invite` (also whoever has an invite link), `open` (anyone, with a verified e-mail address).')),
  CONSOLE_MAX_KEYS: z.coerce.number().int().min(1).max(1000).default(10).meta(doc('Most working keys an account may hold through the console, counted per scope: this many Data API keys and this many MCP keys.')),
  CONSOLE_SESSION_IDLE_MINUTES: z.coerce.number().int().min(1).default(120).meta(doc('A console session unused this long ends (minutes).')),
  CONSOLE_SESSION_DAYS: z.coerce.number().int().min(1).max(365).default(30).meta(doc('A console session ends this long after sign-in, used or not (days).')),
  CONSOLE_SELF_SERVICE_PLANS: planList('data-api', 'free')
    .meta(doc('The Data API plans an account may pick for a key it creates in the console (comma-separated).', '`free`')),
  CONSOLE_SELF_SERVICE_MCP_PLANS: planList('mcp', 'mcp-free')
    .meta(doc('The MCP plans an account may pick for an MCP key it creates in the console (comma-separated).', '`mcp-free`')),
  CONSOLE_WIDGET_PLANS: planList('widget', 'widget-free')
    .meta(doc('The widget plans an account may pick for a widget key it creates in the console (comma-separated).', '`widget-free`')),
  CONSOLE_SIGN_IN_FAILURES_PER_ACCOUNT: z.coerce.number().int().min(1).default(5).meta(doc('Failed console sign-ins, reset requests and sign-ups (counted together) per e-mail address per minute before refusing.')),
  CONSOLE_SIGN_IN_FAILURES_PER_CLIENT: z.coerce.number().int().min(1).default(20).meta(doc('Failed console sign-ins, reset requests and sign-ups (counted together) per client address per minute before refusing.')),
  CONSOLE_COIN_SEARCHES_PER_MINUTE: z.coerce.number().int().min(1).default(120)
    .meta(doc('Coin suggestions a console account may ask for per minute (the alarm and widget forms\' coin fields ask as one types); above it they answer 429.')),
  CONSOLE_UNVERIFIED_DAYS: z.coerce.number().int().min(1).max(365).default(7)
    .meta(doc('A console account made by sign-up whose address is not confirmed within this many days is deleted (hourly, by the worker) and its address is free again.')),
};

const observability = {
  LOG_FORMAT: z.enum(['json', 'pretty']).optional()
    .meta(doc('`json`: one JSON object per line on stderr; `pretty`: short readable lines (single migrations and routine job runs only at `debug`).', '`pretty` when stderr is a terminal, else `json`')),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').meta(doc('The lowest level logged.')),
  LOG_REQUESTS: booleanFlag.default(true).meta(doc('One log line per HTTP request (info level); `false` keeps job, start-up and error lines only.')),
  METRICS_TOKEN: z.string().min(16).optional()
    .meta(doc('16+ characters: lets clients other than loopback read `/metrics` with `Authorization: Bearer <token>`.')),
};

/** The variables by topic, in the order docs/configuration.md lists them. */
export const CONFIG_GROUPS = {
  'Database': database,
  'The embedded database': embedded,
  'HTTP': http,
  'Admission and caching': admission,
  'Jobs and workers': worker,
  'Market data sources': marketData,
  'Live streams': streams,
  'Webhooks, e-mail and browser push': notifications,
  'The developer console': consoleSettings,
  'Logs and metrics': observability,
};

const schema = z.object({ ...database, ...embedded, ...http, ...admission, ...worker, ...marketData, ...streams, ...notifications, ...consoleSettings, ...observability });

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
  if (Boolean(values.VAPID_PUBLIC_KEY) !== Boolean(values.VAPID_PRIVATE_KEY)) {
    throw new Error('invalid configuration:\n  VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY: give both keys of the pair, or neither (the service then keeps its own in the database)');
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

/**
 * Whether this service sends e-mail (SMTP_URL set; loadConfig insists on MAIL_FROM with it): the
 * mailer, the alarm routes, the status page and the CLI all ask here.
 */
export const emailConfigured = <C extends Pick<Config, 'SMTP_URL'>>(config: C): config is C & { SMTP_URL: string } => Boolean(config.SMTP_URL);
