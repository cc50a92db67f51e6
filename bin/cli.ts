// mdapi: the operator's command line. It talks to the running embedded database when there is
// one, starts it for the length of the command when there is none, and uses DATABASE_URL when set.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { embeddedUrl, loadConfig } from '../src/config.ts';
import { createSql } from '../src/db/client.ts';
import { backup, restore } from '../src/db/backup.ts';
import { inMigratedTransaction, migrate } from '../src/db/migrate.ts';
import { UnsupportedServerError } from '../src/db/server-check.ts';
import { createLogger } from '../src/log.ts';
import { ContentImportError, describeImport, importContent } from '../src/content/import.ts';
import { readKlineZip } from '../src/sources/files/binance-klines.ts';
import { CATALOGUE_PATH, CatalogueImportError, ensureCoinCatalogue, importCoins, parseCatalogue } from '../src/sources/catalogue/index.ts';
import { CandleImportError, importCandles } from '../src/sources/files/candles.ts';
import { createKey, InvalidEmailError, listKeys, revokeKey, setOwnerEmail } from '../src/keys.ts';
import { emailEnabled } from '../src/mail/smtp.ts';
import { PLANS_BY_SCOPE } from '../src/plans.ts';
import { openDatabase } from '../src/db/open.ts';
import { withReservedQuery } from '../src/sources/source.ts';
import { startWorker } from '../src/worker.ts';

const USAGE = `usage: mdapi <command> [options]

  migrate                                   apply sql/migrations and re-apply sql/functions
  create-key --plan free|starter|pro [--owner NAME] [--scope data-api|mcp] [--email ADDR [--verified]]
                                            create an API key; prints only the key; an MCP key
                                            (--scope mcp) takes an MCP plan: --plan mcp-free|mcp-pro;
                                            --email sets the owner's e-mail address (as set-email)
  set-email OWNER ADDR [--verified]         set a key owner's e-mail address (alarm e-mails, deprecation
                                            notices); unverified unless --verified
  notify-deprecation                        e-mail a notice of each deprecated operation (sunset date in
                                            src/api/) to every key holder who called it in the last 90
                                            days, once per holder, operation and sunset; the worker sends
  revoke-key ID|PREFIX                      revoke a key by id or by its printed prefix
  list-keys                                 list keys (never the keys themselves)
  db-url [--analyst]                        print the psql connection URL
  db                                        run the embedded database alone, in the foreground
  worker                                    run the job worker alone, in the foreground
  backup FILE                               back the database up (embedded: a .tar.gz of DATA_DIR/pgdata)
  restore FILE                              restore a backup (embedded: the service must be stopped)
  import-candles --slug S [--symbol X --name N] [--format csv|binance-kline] FILE
                                            import OHLCV history for coin S, creating it when --symbol
                                            and --name are given: csv (time,open,high,low,close,volume)
                                            or a Binance kline dump (.csv or .zip; quote volume as USD)
  import-coins [FILE]                       import or update the coin catalogue (default: the shipped
                                            src/sources/catalogue/coins.json): validated, all or nothing
  backfill [--coins a,b] [--since YYYY-MM-DD] [--interval daily|hourly|minutely]
                                            history from the venues of EXCHANGES through ccxt: daily to
                                            6 months ago, hourly to 8 days ago, 1-minute since (--interval
                                            picks some, repeatable or comma-separated); resumable
  import-content DIR                        import curated content (wallets.json, articles.json, videos.json,
                                            insights.json in DIR): validated, all or nothing, idempotent
`;

function fail(message: string): never {
  process.stderr.write(`mdapi: ${message}\n`);
  process.exit(2);
}

async function withDatabase<T>(work: (sql: ReturnType<typeof createSql>) => Promise<T>): Promise<T> {
  const { config, embedded } = await openDatabase(loadConfig());
  const sql = createSql(config.database, { max: 2 });
  try {
    return await work(sql);
  } finally {
    await sql.end({ timeout: 5 });
    await embedded?.stop();
  }
}

// A server the service cannot run on is an operator's problem to fix, not a crash to read.
process.on('uncaughtException', (error) => {
  if (error instanceof UnsupportedServerError) fail(error.message);
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});

const [command, ...rest] = process.argv.slice(2);
const { values, positionals } = parseOptions();

function parseOptions() {
  try {
    return parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
    plan: { type: 'string' },
    owner: { type: 'string', default: 'default' },
    scope: { type: 'string', default: 'data-api' },
    analyst: { type: 'boolean', default: false },
    slug: { type: 'string' },
    symbol: { type: 'string' },
    name: { type: 'string' },
    format: { type: 'string', default: 'csv' },
    coins: { type: 'string' },
    since: { type: 'string' },
    interval: { type: 'string', multiple: true },
    email: { type: 'string' },
    verified: { type: 'boolean', default: false },
  },
    });
  } catch (error) {
    // an unknown or malformed option is the operator's to fix, like any bad argument
    fail((error as Error).message);
  }
}

switch (command) {
  case 'migrate': {
    await withDatabase((sql) => migrate(sql, createLogger(loadConfig())));
    break;
  }
  case 'create-key': {
    const scope = values.scope;
    if (scope !== 'data-api' && scope !== 'mcp') fail('--scope must be data-api or mcp');
    // A plan belongs to one scope (app.plans.scope): an MCP key never carries a Data API plan, nor the reverse.
    const plans: readonly string[] = PLANS_BY_SCOPE[scope];
    const plan = values.plan as (typeof PLANS_BY_SCOPE)[typeof scope][number];
    if (!plans.includes(plan)) fail(`--plan must be ${plans.join(', ')} for a ${scope} key`);
    const owner = values.owner!;
    if (!/^[\w.@-]{1,100}$/.test(owner)) fail('--owner must be 1-100 letters, digits or ._@-');
    const email = values.email;
    // one transaction: no key of an owner whose address was refused
    const { key } = await withDatabase((sql) =>
      inMigratedTransaction(sql, async (tx) => {
        if (email !== undefined) await setOwnerEmail(tx, owner, email, values.verified);
        return createKey(tx, { plan, owner, scope });
      }),
    ).catch((error) => {
      if (error instanceof InvalidEmailError) fail('--email must be an e-mail address such as ops@example.com');
      throw error;
    });
    process.stdout.write(`${key}\n`);
    break;
  }
  case 'set-email': {
    const [owner, email] = positionals;
    if (!owner || !email) fail('set-email needs an owner and an address: mdapi set-email OWNER ADDR');
    const keys = await withDatabase((sql) =>
      inMigratedTransaction(sql, async (tx) => {
        await setOwnerEmail(tx, owner, email, values.verified);
        return (await tx`select 1 from app.api_keys where owner = ${owner}`).length;
      }),
    ).catch((error) => {
      if (error instanceof InvalidEmailError) fail(`not an e-mail address: ${JSON.stringify(email)}`);
      throw error;
    });
    process.stderr.write(`e-mail address of ${owner} set${values.verified ? ' (verified)' : ''}${keys === 0 ? '; note: this owner has no key yet' : ''}\n`);
    break;
  }
  case 'notify-deprecation': {
    const config = loadConfig();
    if (!emailEnabled(config)) fail('e-mail is not configured: set SMTP_URL and MAIL_FROM (see README, "E-mail")');
    const [{ apiRoutes }, { notifyDeprecations }] = await Promise.all([import('../src/api/index.ts'), import('../src/mail/deprecation.ts')]);
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
    break;
  }
  case 'revoke-key': {
    const target = positionals[0] ?? fail('revoke-key needs a key id or prefix');
    const count = await withDatabase((sql) => revokeKey(sql, target));
    if (count === 0) fail(`no active key matches ${target}`);
    process.stderr.write(`revoked ${count} key(s)\n`);
    break;
  }
  case 'list-keys': {
    const keys = await withDatabase(listKeys);
    for (const key of keys) {
      process.stdout.write(
        [key.id, key.prefix, key.owner, key.plan, key.scope, key.created_at.toISOString(), key.revoked_at ? 'revoked' : 'active'].join('\t') + '\n',
      );
    }
    break;
  }
  case 'db-url': {
    const config = loadConfig();
    process.stdout.write(`${config.database.embedded ? embeddedUrl(config.EMBEDDED_DB_PORT, values.analyst ? 'analyst' : 'postgres') : config.database.url}\n`);
    break;
  }
  case 'db': {
    const { embedded } = await openDatabase(loadConfig());
    if (!embedded) fail('DATABASE_URL is set: there is no embedded database to run');
    if (!embedded.started) fail(`the embedded database already runs on port ${embedded.port}`);
    process.stderr.write(`embedded database on ${embeddedUrl(embedded.port)}\n`);
    await new Promise<void>((resolve) => process.once('SIGINT', resolve).once('SIGTERM', resolve));
    await embedded.stop();
    break;
  }
  case 'worker': {
    const { config, embedded } = await openDatabase(loadConfig());
    // the job modules load for this command only
    const { schedule } = await import('../jobs/index.ts');
    const worker = await startWorker(config, schedule);
    process.stderr.write('worker running\n');
    await new Promise<void>((resolve) => process.once('SIGINT', resolve).once('SIGTERM', resolve));
    await worker.stop();
    await embedded?.stop();
    // A job given back by stop() may still be running on its connection: end it with the process.
    process.exit(0);
  }
  case 'backup': {
    const file = positionals[0] ?? fail('backup needs a file name');
    await backup(loadConfig(), file);
    process.stderr.write(`backed up to ${file}\n`);
    break;
  }
  case 'restore': {
    const file = positionals[0] ?? fail('restore needs a file name');
    const kept = await restore(loadConfig(), file).catch((error: Error) => fail(error.message));
    process.stderr.write(`restored ${file}${kept ? `; the previous database is kept in ${kept}` : ''}\n`);
    break;
  }
  case 'import-candles': {
    const slug = values.slug ?? fail('import-candles needs --slug');
    const file = positionals[0] ?? fail('import-candles needs a CSV file');
    const format = values.format;
    if (format !== 'csv' && format !== 'binance-kline') fail(`--format must be csv or binance-kline, not ${JSON.stringify(format)}`);
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
        return importCandles(sql, { slug, symbol: values.symbol, name: values.name, csv, format });
      });
      process.stderr.write(
        `${slug}: ${result.bars} bars from ${result.windowStart} to ${result.windowEnd}` +
          `${result.coinCreated ? ' (new coin)' : ''}: ${result.inserted} inserted, ${result.updated} updated, ${result.removed} removed\n`,
      );
    } catch (error) {
      if (!(error instanceof CandleImportError)) throw error;
      fail([`${file}: ${error.message}`, ...error.problems.map((problem) => `  ${problem}`)].join('\n'));
    }
    break;
  }
  case 'import-coins': {
    const file = positionals[0] ?? CATALOGUE_PATH.pathname;
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
        return importCoins(async (query, values = []) => (await sql.unsafe(query, values as never[])) as Record<string, unknown>[], text);
      });
      process.stderr.write(
        `${file}: ${result.coins} coins, ${result.inserted} new, ${result.updated} updated, ` +
          `${result.venue_symbols} venue symbols, ${result.rows_written} rows written\n`,
      );
    } catch (error) {
      if (!(error instanceof CatalogueImportError)) throw error;
      fail([`${file}: ${error.message}`, ...error.problems.map((problem) => `  ${problem}`)].join('\n'));
    }
    break;
  }
  case 'backfill': {
    const [{ backfill, BACKFILL_INTERVALS }, { backfillReporter }, { ExchangesSource }, { parseExchanges, parseExchangeUrls }] = await Promise.all([
      import('../src/sources/exchanges/backfill.ts'),
      import('../src/sources/exchanges/backfill-report.ts'),
      import('../src/sources/exchanges/index.ts'),
      import('../src/sources/exchanges/venues.ts'),
    ]);
    const intervals = (values.interval ?? ['daily,hourly,minutely']).flatMap((value) => value.split(',')).map((value) => value.trim());
    for (const interval of intervals) {
      if (!(BACKFILL_INTERVALS as readonly string[]).includes(interval)) fail(`--interval must be daily, hourly or minutely, not ${JSON.stringify(interval)}`);
    }
    const coins = values.coins?.split(',').map((slug) => slug.trim()).filter(Boolean);
    if (coins && (coins.length === 0 || coins.some((slug) => !/^[a-z0-9][a-z0-9-]{0,99}$/.test(slug)))) fail('--coins must be comma-separated coin slugs such as bitcoin,ethereum');
    let since: Date | undefined;
    if (values.since !== undefined) {
      since = new Date(`${values.since}T00:00:00Z`);
      if (!/^\d{4}-\d{2}-\d{2}$/.test(values.since) || Number.isNaN(since.getTime()) || since.toISOString().slice(0, 10) !== values.since) {
        fail(`--since must be a date YYYY-MM-DD, not ${JSON.stringify(values.since)}`);
      }
      if (since.getTime() > Date.now()) fail('--since is in the future');
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
      // a first backfill may come before the service ever ran: the coin universe first
      await withReservedQuery(sql, ensureCoinCatalogue);
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
    if (!result) fail(`unknown coin${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`);
    reporter.finish(result);
    // every venue failing is a failed run; some failing is reported and left to the next run
    if (Object.values(result.venues).every((run) => run.state !== 'up')) process.exit(1);
    break;
  }
  case 'import-content': {
    const dir = positionals[0] ?? fail('import-content needs a directory');
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
    break;
  }
  default:
    process.stderr.write(USAGE);
    process.exit(command === undefined || command === 'help' || command === '--help' ? 0 : 2);
}
