// mdapi: the operator's command line. It talks to the running embedded database when there is
// one, starts it for the length of the command when there is none, and uses DATABASE_URL when set.
// Each command is an entry of COMMANDS: its usage, its options (one node:util parseArgs for all) and
// what it runs; `mdapi <command> --help` prints the usage, a malformed command line exits 2 with it.
import { readFileSync, realpathSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import { emailConfigured, embeddedUrl, loadConfig } from '../src/config.ts';
import type { Sql } from '../src/db/client.ts';
import { UnsupportedServerError } from '../src/db/server-check.ts';
import { PLANS_BY_SCOPE } from '../src/plans.ts';
import { date, slug, slugList } from '../src/validators.ts';

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | string[] | undefined>;

export interface Command {
  /** the command line after `mdapi`, e.g. `backup FILE` */
  synopsis: string;
  /** what it does and what its options mean, indented lines */
  description: string;
  options?: Options;
  /** how many operands it takes at most (FILE, OWNER ADDR, …) */
  operands?: number;
  run: (values: Values, operands: string[]) => Promise<void>;
}

function fail(message: string): never {
  process.stderr.write(`mdapi: ${message}\n`);
  process.exit(2);
}

const usage = (command: Command) =>
  `usage: mdapi ${command.synopsis}\n\n${command.description}\n\n  -h, --help          print this help\n`;

/** A malformed command line: the message, then the usage of the command given (argv[2]), exit 2. */
function usageError(message: string): never {
  process.stderr.write(`mdapi: ${message}\n\n${usage(COMMANDS[process.argv[2]!]!)}`);
  process.exit(2);
}

/**
 * An option's value checked by the shared validator (src/validators.ts): its parsed value, or
 * exit 2 with "--since must be a date (YYYY-MM-DD), not "…"".
 */
function valid<T>(flag: string, schema: z.ZodType<T>, value: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const message = result.error.issues[0]!.message.replace(/\.$/, '');
  fail(`${flag} ${message[0]!.toLowerCase()}${message.slice(1)}, not ${JSON.stringify(value)}`);
}

async function withDatabase<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
  const [{ openDatabase }, { createSql }] = await Promise.all([import('../src/db/open.ts'), import('../src/db/client.ts')]);
  const { config, embedded } = await openDatabase(loadConfig());
  const sql = createSql(config.database, { max: 2 });
  try {
    return await work(sql);
  } finally {
    await sql.end({ timeout: 5 });
    await embedded?.stop();
  }
}

/** A key owner's name (app.api_keys.owner) as the commands accept it. */
const OWNER = /^[\w.@-]{1,100}$/;

/** Waits for SIGINT or SIGTERM, keeping the process alive meanwhile: with the database away, nothing else may. */
const untilSignal = () =>
  new Promise<void>((resolve) => {
    const alive = setInterval(() => {}, 60_000);
    const stop = () => {
      clearInterval(alive);
      resolve();
    };
    process.once('SIGINT', stop).once('SIGTERM', stop);
  });

// Each command imports what it needs when it runs: --help and a refused line answer at once.
export const COMMANDS: Record<string, Command> = {
  migrate: {
    synopsis: 'migrate',
    description: '  apply sql/migrations and re-apply sql/functions',
    run: async () => {
      const [{ migrate }, { createLogger }] = await Promise.all([import('../src/db/migrate.ts'), import('../src/log.ts')]);
      await withDatabase((sql) => migrate(sql, createLogger(loadConfig())));
    },
  },
  'create-key': {
    synopsis: 'create-key --plan PLAN [--owner NAME] [--scope data-api|mcp] [--email ADDR [--verified]]',
    description: [
      '  create an API key; prints only the key',
      `  --plan PLAN         ${PLANS_BY_SCOPE['data-api'].join(', ')}; an MCP key (--scope mcp) takes ${PLANS_BY_SCOPE.mcp.join(' or ')}`,
      '  --owner NAME        the key owner (default: default), 1-100 letters, digits or ._@-',
      '  --scope SCOPE       data-api (default) or mcp',
      '  --email ADDR        set the owner\'s e-mail address (as set-email); unverified unless --verified',
    ].join('\n'),
    options: {
      plan: { type: 'string' },
      owner: { type: 'string', default: 'default' },
      scope: { type: 'string', default: 'data-api' },
      email: { type: 'string' },
      verified: { type: 'boolean', default: false },
    },
    run: async (values) => {
      const [{ inMigratedTransaction }, { createKey, InvalidEmailError, setOwnerEmail }] = await Promise.all([import('../src/db/migrate.ts'), import('../src/keys.ts')]);
      const scope = values.scope;
      if (scope !== 'data-api' && scope !== 'mcp') fail('--scope must be data-api or mcp');
      // A plan belongs to one scope (app.plans.scope): an MCP key never carries a Data API plan, nor the reverse.
      const plans: readonly string[] = PLANS_BY_SCOPE[scope];
      const plan = values.plan as (typeof PLANS_BY_SCOPE)[typeof scope][number];
      if (!plans.includes(plan)) fail(`--plan must be ${plans.join(', ')} for a ${scope} key`);
      const owner = values.owner as string;
      if (!OWNER.test(owner)) fail('--owner must be 1-100 letters, digits or ._@-');
      const email = values.email as string | undefined;
      const verified = values.verified as boolean;
      // one transaction: no key of an owner whose address was refused; migrations only when one is pending
      const { key } = await withDatabase((sql) =>
        inMigratedTransaction(sql, async (tx) => {
          if (email !== undefined) await setOwnerEmail(tx, owner, email, verified);
          return createKey(tx, { plan, owner, scope });
        }),
      ).catch((error) => {
        if (error instanceof InvalidEmailError) fail('--email must be an e-mail address such as ops@example.com');
        throw error;
      });
      process.stdout.write(`${key}\n`);
    },
  },
  'create-account': {
    synopsis: 'create-account --email ADDR [--admin] [--owner NAME]',
    description: [
      '  make a developer console account (verified) and print a one-time link to set its password',
      '  --email ADDR        the address the account signs in with',
      '  --admin             the admin role (default: user)',
      '  --owner NAME        an existing key owner becomes the account and keeps its keys (default: a new owner)',
    ].join('\n'),
    options: { email: { type: 'string' }, admin: { type: 'boolean', default: false }, owner: { type: 'string' } },
    run: async (values) => {
      const [{ inMigratedTransaction }, { AccountExistsError, SET_PASSWORD_HOURS, createAccount }, { email: emailFormat }, { mailLinks }] = await Promise.all([
        import('../src/db/migrate.ts'), import('../src/console/accounts.ts'), import('../src/validators.ts'), import('../src/mail/smtp.ts'),
      ]);
      const email = emailFormat.safeParse(values.email ?? '');
      if (!email.success) fail('--email must be an e-mail address such as ops@example.com');
      const owner = values.owner as string | undefined;
      if (owner !== undefined && !OWNER.test(owner)) fail('--owner must be 1-100 letters, digits or ._@-');
      const { path } = await withDatabase((sql) =>
        inMigratedTransaction(sql, (tx) => createAccount(tx, { email: email.data, admin: values.admin as boolean, owner })),
      ).catch((error) => {
        if (error instanceof AccountExistsError) fail(error.message);
        throw error;
      });
      process.stdout.write(`${mailLinks(loadConfig()).base}${path}\n`);
      process.stderr.write(`account ${email.data} made${values.admin ? ' (admin)' : ''}; the link above sets its password, once, within ${SET_PASSWORD_HOURS} hours\n`);
    },
  },
  invite: {
    synopsis: 'invite --email ADDR',
    description: '  print a one-time link (valid 7 days) that makes a developer console account for ADDR (CONSOLE_SIGNUP=invite or open)',
    options: { email: { type: 'string' } },
    run: async (values) => {
      const [{ inMigratedTransaction }, { INVITE_DAYS, inviteAccount }, { email: emailFormat }, { mailLinks }] = await Promise.all([
        import('../src/db/migrate.ts'), import('../src/console/accounts.ts'), import('../src/validators.ts'), import('../src/mail/smtp.ts'),
      ]);
      const config = loadConfig();
      const email = emailFormat.safeParse(values.email ?? '');
      if (!email.success) fail('--email must be an e-mail address such as ops@example.com');
      if (config.CONSOLE_SIGNUP === 'closed') fail('CONSOLE_SIGNUP is closed: set it to invite (or open) for invites to work, or use create-account');
      const path = await withDatabase((sql) => inMigratedTransaction(sql, (tx) => inviteAccount(tx, email.data)));
      process.stdout.write(`${mailLinks(config).base}${path}\n`);
      process.stderr.write(`invite for ${email.data}: the link above makes its account, once, within ${INVITE_DAYS} days\n`);
    },
  },
  'set-email': {
    synopsis: 'set-email OWNER ADDR [--verified]',
    description: '  set a key owner\'s e-mail address (alarm e-mails, deprecation notices); unverified unless --verified',
    options: { verified: { type: 'boolean', default: false } },
    operands: 2,
    run: async (values, [owner, email]) => {
      const [{ inMigratedTransaction }, { InvalidEmailError, setOwnerEmail }] = await Promise.all([import('../src/db/migrate.ts'), import('../src/keys.ts')]);
      if (!owner || !email) usageError('set-email needs an owner and an address: mdapi set-email OWNER ADDR');
      const verified = values.verified as boolean;
      const keys = await withDatabase((sql) =>
        inMigratedTransaction(sql, async (tx) => {
          await setOwnerEmail(tx, owner, email, verified);
          return (await tx`select 1 from app.api_keys where owner = ${owner}`).length;
        }),
      ).catch((error) => {
        if (error instanceof InvalidEmailError) fail(`not an e-mail address: ${JSON.stringify(email)}`);
        throw error;
      });
      process.stderr.write(`e-mail address of ${owner} set${verified ? ' (verified)' : ''}${keys === 0 ? '; note: this owner has no key yet' : ''}\n`);
    },
  },
  'notify-deprecation': {
    synopsis: 'notify-deprecation',
    description: [
      '  e-mail a notice of each deprecated operation (sunset date in src/api/) to every key holder who',
      '  called it in the last 90 days, once per holder, operation and sunset; the worker sends',
    ].join('\n'),
    run: async () => {
      const [{ migrate }, { notifyDeprecations }] = await Promise.all([import('../src/db/migrate.ts'), import('../src/mail/deprecation.ts')]);
      const config = loadConfig();
      if (!emailConfigured(config)) fail('e-mail is not configured: set SMTP_URL and MAIL_FROM (see docs/operations.md, "E-mail")');
      const { apiRoutes } = await import('../src/api/index.ts');
      const runs = await withDatabase(async (sql) => {
        await migrate(sql);
        return notifyDeprecations(sql, apiRoutes);
      });
      if (runs.length === 0) process.stderr.write('no operation is deprecated: nothing to send\n');
      const sixMonths = Date.now() + 182 * 86_400_000;
      for (const run of runs) {
        const soon = Date.parse(`${run.sunset}T00:00:00Z`) < sixMonths ? ' (warning: the sunset is less than six months away)' : '';
        process.stderr.write(
          `${run.endpoint} (sunset ${run.sunset})${soon}: ${run.queued.length} notice(s) queued, ` +
            `${run.alreadyNotified.length} caller(s) notified before, ${run.noAddress.length} without an e-mail address` +
            `${run.noAddress.length ? ` (mdapi set-email): ${run.noAddress.join(', ')}` : ''}\n`,
        );
      }
    },
  },
  'revoke-key': {
    synopsis: 'revoke-key ID|PREFIX',
    description: '  revoke a key by id or by its printed prefix',
    operands: 1,
    run: async (_values, [target]) => {
      const { revokeKey } = await import('../src/keys.ts');
      if (!target) usageError('revoke-key needs a key id or prefix');
      const count = await withDatabase((sql) => revokeKey(sql, target));
      if (count === 0) fail(`no active key matches ${target}`);
      process.stderr.write(`revoked ${count} key(s)\n`);
    },
  },
  'list-keys': {
    synopsis: 'list-keys',
    description: '  list keys, one a line: id, prefix, owner, plan, scope, created, state (never the keys themselves)',
    run: async () => {
      const { listKeys } = await import('../src/keys.ts');
      const keys = await withDatabase(listKeys);
      for (const key of keys) {
        process.stdout.write(
          [key.id, key.prefix, key.owner, key.plan, key.scope, key.created_at.toISOString(), key.revoked_at ? 'revoked' : 'active'].join('\t') + '\n',
        );
      }
    },
  },
  'db-url': {
    synopsis: 'db-url [--analyst]',
    description: '  print the psql connection URL (--analyst: as the read-only analyst role)',
    options: { analyst: { type: 'boolean', default: false } },
    run: async (values) => {
      const config = loadConfig();
      process.stdout.write(`${config.database.embedded ? embeddedUrl(config.EMBEDDED_DB_PORT, values.analyst ? 'analyst' : 'postgres') : config.database.url}\n`);
    },
  },
  db: {
    synopsis: 'db',
    description: '  run the embedded database alone, in the foreground',
    run: async () => {
      const { openDatabase } = await import('../src/db/open.ts');
      const { embedded } = await openDatabase(loadConfig());
      if (!embedded) fail('DATABASE_URL is set: there is no embedded database to run');
      if (!embedded.started) fail(`the embedded database already runs on port ${embedded.port}`);
      process.stderr.write(`embedded database on ${embeddedUrl(embedded.port)}\n`);
      await untilSignal();
      await embedded.stop();
    },
  },
  worker: {
    synopsis: 'worker',
    description: '  run the job worker alone, in the foreground',
    run: async () => {
      const [{ openDatabase }, { startWorker }, { schedule }] = await Promise.all([import('../src/db/open.ts'), import('../src/worker.ts'), import('../jobs/index.ts')]);
      const { config, embedded } = await openDatabase(loadConfig());
      const worker = await startWorker(config, schedule);
      process.stderr.write('worker running\n');
      await untilSignal();
      await worker.stop();
      await embedded?.stop();
      // A job given back by stop() may still be running on its connection: end it with the process.
      process.exit(0);
    },
  },
  stream: {
    synopsis: 'stream',
    description: '  hold the live venue streams, in the foreground (every running holder takes its share of the venues, each venue held by one; a worker with STREAM=on is a holder too)',
    run: async () => {
      const [{ openDatabase }, { StreamHolder }, { createLogger }] = await Promise.all([import('../src/db/open.ts'), import('../src/sources/stream/index.ts'), import('../src/log.ts')]);
      const { config, embedded } = await openDatabase(loadConfig());
      if (config.MARKET_SOURCE === 'none') throw new Error('MARKET_SOURCE=none: there are no venue streams to hold');
      const holder = new StreamHolder(config, createLogger(config)).start();
      process.stderr.write('stream holder running\n');
      await untilSignal();
      await holder.stop();
      await embedded?.stop();
      // a venue request or connection the stop abandoned must not keep the process
      process.exit(0);
    },
  },
  backup: {
    synopsis: 'backup FILE',
    description: '  back the database up (embedded: a .tar.gz of DATA_DIR/pgdata)',
    operands: 1,
    run: async (_values, [file]) => {
      const { backup } = await import('../src/db/backup.ts');
      if (!file) usageError('backup needs a file name');
      await backup(loadConfig(), file);
      process.stderr.write(`backed up to ${file}\n`);
    },
  },
  restore: {
    synopsis: 'restore FILE',
    description: '  restore a backup (embedded: the service must be stopped)',
    operands: 1,
    run: async (_values, [file]) => {
      const { restore } = await import('../src/db/backup.ts');
      if (!file) usageError('restore needs a file name');
      const kept = await restore(loadConfig(), file).catch((error: Error) => fail(error.message));
      process.stderr.write(`restored ${file}${kept ? `; the previous database is kept in ${kept}` : ''}\n`);
    },
  },
  'import-candles': {
    synopsis: 'import-candles --slug S [--symbol X --name N] [--format csv|binance-kline] FILE',
    description: [
      '  import OHLCV history for coin S (any case; stored lowercase), creating it when --symbol and',
      '  --name are given: csv (time,open,high,low,close,volume) or a Binance kline dump (.csv or .zip;',
      '  quote volume as USD)',
    ].join('\n'),
    options: { slug: { type: 'string' }, symbol: { type: 'string' }, name: { type: 'string' }, format: { type: 'string', default: 'csv' } },
    operands: 1,
    run: async (values, [file]) => {
      if (values.slug === undefined) usageError('import-candles needs --slug');
      const coin = valid('--slug', slug('coin'), values.slug as string);
      if (!file) usageError('import-candles needs a CSV file');
      const format = values.format;
      if (format !== 'csv' && format !== 'binance-kline') fail(`--format must be csv or binance-kline, not ${JSON.stringify(format)}`);
      const [{ migrate }, { readKlineZip }, { CandleImportError, importCandles }] = await Promise.all([
        import('../src/db/migrate.ts'), import('../src/sources/files/binance-klines.ts'), import('../src/sources/files/candles.ts'),
      ]);
      let raw: Buffer;
      try {
        raw = readFileSync(file);
      } catch {
        fail(`cannot read ${file}`);
      }
      try {
        const csv = format === 'binance-kline' && file.toLowerCase().endsWith('.zip') ? await readKlineZip(raw) : raw.toString('utf8');
        const result = await withDatabase(async (sql) => {
          await migrate(sql);
          return importCandles(sql, { slug: coin, symbol: values.symbol as string | undefined, name: values.name as string | undefined, csv, format });
        });
        process.stderr.write(
          `${coin}: ${result.bars} bars from ${result.windowStart} to ${result.windowEnd}` +
            `${result.coinCreated ? ' (new coin)' : ''}: ${result.inserted} inserted, ${result.updated} updated, ${result.removed} removed\n`,
        );
      } catch (error) {
        if (!(error instanceof CandleImportError)) throw error;
        fail([`${file}: ${error.message}`, ...error.problems.map((problem) => `  ${problem}`)].join('\n'));
      }
    },
  },
  'import-coins': {
    synopsis: 'import-coins [FILE]',
    description: [
      '  import or update the coin catalogue (default: the shipped src/sources/catalogue/coins.json):',
      '  validated, all or nothing',
    ].join('\n'),
    operands: 1,
    run: async (_values, [given]) => {
      const [{ migrate }, { queryOf }, { CATALOGUE_PATH, CatalogueImportError, importCoins, parseCatalogue }] = await Promise.all([
        import('../src/db/migrate.ts'), import('../src/db/query.ts'), import('../src/sources/catalogue/index.ts'),
      ]);
      const file = given ?? CATALOGUE_PATH.pathname;
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        fail(`cannot read ${file}`);
      }
      try {
        // a bad file fails here, before any database is opened
        parseCatalogue(text);
        const result = await withDatabase(async (sql) => {
          await migrate(sql);
          return importCoins(queryOf(sql), text);
        });
        process.stderr.write(
          `${file}: ${result.coins} coins, ${result.inserted} new, ${result.updated} updated, ` +
            `${result.venue_symbols} venue symbols, ${result.rows_written} rows written\n`,
        );
      } catch (error) {
        if (!(error instanceof CatalogueImportError)) throw error;
        fail([`${file}: ${error.message}`, ...error.problems.map((problem) => `  ${problem}`)].join('\n'));
      }
    },
  },
  backfill: {
    synopsis: 'backfill [--coins all|a,b] [--since YYYY-MM-DD] [--interval daily|hourly|minutely]',
    description: [
      '  history from the venues of EXCHANGES through ccxt: daily to 6 months ago, hourly to 8 days ago,',
      '  1-minute since; each venue paced by its rate limit; resumable (Ctrl-C stops after the request in',
      '  flight); prints an estimate (requests, minutes) first, then progress with the time left',
      '  --coins all|a,b     every coin any venue of EXCHANGES lists (all, the default), or only these (slugs, any case)',
      '  --since YYYY-MM-DD  start no earlier than this day (UTC)',
      '  --interval I        daily, hourly or minutely; repeatable or comma-separated (default: all three)',
    ].join('\n'),
    options: { coins: { type: 'string' }, since: { type: 'string' }, interval: { type: 'string', multiple: true } },
    run: async (values) => {
      // `all` (or no --coins): every coin the venues list; a list names known coins only
      const coins = values.coins === undefined || (values.coins as string).trim().toLowerCase() === 'all'
        ? undefined
        : valid('--coins', slugList('coin', 10_000).refine((list) => list.length > 0, 'Must name at least one coin.').refine((list) => !list.includes('all'), 'Must be all or a list of coin slugs, not both.'), values.coins as string);
      let since: Date | undefined;
      if (values.since !== undefined) {
        since = new Date(`${valid('--since', date(), values.since as string)}T00:00:00Z`);
        if (since.getTime() > Date.now()) fail('--since is in the future');
      }
      const [{ migrate }, { ensureCoinCatalogue }, { refreshCoinList }, { withReservedQuery }, { backfill, BACKFILL_INTERVALS }, { backfillReporter }, { ExchangesSource }, { parseExchanges, parseExchangeUrls }] = await Promise.all([
        import('../src/db/migrate.ts'),
        import('../src/sources/catalogue/index.ts'),
        import('../src/sources/coinpaprika.ts'),
        import('../src/db/query.ts'),
        import('../src/sources/exchanges/backfill.ts'),
        import('../src/sources/exchanges/backfill-report.ts'),
        import('../src/sources/exchanges/index.ts'),
        import('../src/sources/exchanges/venues.ts'),
      ]);
      const intervals = ((values.interval as string[] | undefined) ?? ['daily,hourly,minutely']).flatMap((value) => value.split(',')).map((value) => value.trim());
      for (const interval of intervals) {
        if (!(BACKFILL_INTERVALS as readonly string[]).includes(interval)) fail(`--interval must be daily, hourly or minutely, not ${JSON.stringify(interval)}`);
      }
      const config = loadConfig();
      let source: InstanceType<typeof ExchangesSource>;
      try {
        source = new ExchangesSource({ venues: parseExchanges(config.EXCHANGES), urls: parseExchangeUrls(config.EXCHANGE_URLS), timeoutMs: config.EXCHANGE_TIMEOUT_MS });
      } catch (error) {
        fail((error as Error).message);
      }
      // Ctrl-C stops after the page in flight; the run resumes from there next time
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      const reporter = backfillReporter(process.stdout);
      const outcome = await withDatabase(async (sql) => {
        await migrate(sql);
        // a first backfill may come before the service ever ran: the coin universe first, and the coin
        // list that names what the venues bring (else each would be named after its venue for good)
        await withReservedQuery(sql, ensureCoinCatalogue);
        if (config.METADATA_SOURCE === 'coinpaprika') {
          await withReservedQuery(sql, (query) => refreshCoinList(query, config.COINPAPRIKA_URL)).catch((error: Error) =>
            process.stderr.write(`backfill: CoinPaprika's coin list could not be loaded (${error.message}); coins it would name are named after their venue until it is\n`));
        }
        const known = new Set((await sql<{ slug: string }[]>`select slug from market.coins where slug = any(${coins ?? []})`).map((row) => row.slug));
        const unknown = (coins ?? []).filter((slug) => !known.has(slug));
        // the database is closed before failing (an embedded one this command started stops with it)
        if (unknown.length > 0) return { unknown, result: null };
        const result = await withReservedQuery(sql, (query) =>
          backfill(query, source, { coins, since, intervals: intervals as (typeof BACKFILL_INTERVALS)[number][], onProgress: reporter.onProgress, signal: stop.signal }),
        );
        return { unknown, result };
      });
      const { unknown, result } = outcome;
      if (!result) fail(`unknown coin${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')} (coin slugs as in /coins, or --coins all)`);
      reporter.finish(result);
      // every venue failing is a failed run; some failing is reported and left to the next run
      if (Object.values(result.venues).every((run) => run.state !== 'up')) process.exit(1);
    },
  },
  'import-content': {
    synopsis: 'import-content DIR',
    description: [
      '  import curated content (wallets.json, articles.json, videos.json, insights.json in DIR):',
      '  validated, all or nothing, idempotent',
    ].join('\n'),
    operands: 1,
    run: async (_values, [dir]) => {
      const [{ migrate }, { ContentImportError, describeImport, importContent }] = await Promise.all([import('../src/db/migrate.ts'), import('../src/content/import.ts')]);
      if (!dir) usageError('import-content needs a directory');
      try {
        const results = await withDatabase(async (sql) => {
          await migrate(sql);
          return importContent(sql, dir);
        });
        process.stderr.write(`${describeImport(results).join('\n')}\n`);
      } catch (error) {
        if (!(error instanceof ContentImportError)) throw error;
        fail([error.message, ...error.problems.map((problem) => `  ${problem}`)].join('\n'));
      }
    },
  },
};

const HELP = `usage: mdapi <command> [options]      (mdapi <command> --help: that command's usage)

${Object.values(COMMANDS)
  .map((command) => `  ${command.synopsis}\n${command.description.replace(/^ {2}/gm, '      ')}`)
  .join('\n')}
`;

/** Runs the command line; only when this file is the program (a test imports COMMANDS). */
async function main() {
  // A server the service cannot run on is an operator's problem to fix, not a crash to read.
  process.on('uncaughtException', (error) => {
    if (error instanceof UnsupportedServerError) fail(error.message);
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exit(1);
  });

  const [name, ...rest] = process.argv.slice(2);
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    const topic = name === 'help' ? rest[0] : undefined;
    if (topic !== undefined && !Object.hasOwn(COMMANDS, topic)) {
      process.stderr.write(`mdapi: no command ${JSON.stringify(topic)}\n\n${HELP}`);
      process.exit(2);
    }
    process.stdout.write(topic === undefined ? HELP : usage(COMMANDS[topic]!));
    process.exit(0);
  }
  if (!Object.hasOwn(COMMANDS, name)) {
    process.stderr.write(`mdapi: no command ${JSON.stringify(name)}\n\n${HELP}`);
    process.exit(2);
  }
  const command = COMMANDS[name]!;
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: rest, allowPositionals: true, strict: true, options: { ...command.options, help: { type: 'boolean', short: 'h' } } });
  } catch (error) {
    // --help wins over a malformed line: the usage is what its author is looking for
    if (rest.some((arg) => arg === '--help' || arg === '-h')) {
      process.stdout.write(usage(command));
      process.exit(0);
    }
    usageError((error as Error).message);
  }
  if (parsed.values.help) {
    process.stdout.write(usage(command));
    process.exit(0);
  }
  const { help: _help, ...values } = parsed.values;
  if (parsed.positionals.length > (command.operands ?? 0)) {
    usageError(`unexpected argument${parsed.positionals.length - (command.operands ?? 0) > 1 ? 's' : ''}: ${parsed.positionals.slice(command.operands ?? 0).join(' ')}`);
  }
  await command.run(values, parsed.positionals);
}

if (process.argv[1] && realpathSync(process.argv[1]) === import.meta.filename) await main();
