// The first five minutes: what `make start` prints on a terminal (a few readable lines, the banner)
// and in JSON elsewhere, `mdapi create-key` answering while the embedded database is busy, and the
// README's tour answering with prices within seconds of the API, the demo's history still being written.
import { execFile, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import test from 'ava';
import type { WorkerEvents } from 'graphile-worker';
import { embeddedUrl, loadConfig } from '../src/config.ts';
import { announceListening } from '../src/banner.ts';
import { createKey } from '../src/keys.ts';
import { createSql } from '../src/db/client.ts';
import { openDatabase } from '../src/db/open.ts';
import { migrate, migrationFiles, pendingMigrations } from '../src/db/migrate.ts';
import { observeJobs } from '../src/job-runs.ts';
import { createLogger, graphileLogger, NOTICE, type LogSettings, type Logger } from '../src/log.ts';
import { startService } from '../src/service.ts';
import { testDatabase, type TestDatabase } from './helpers/database.ts';
import { embeddedOnly, onServer } from './helpers/targets.ts';
import { poll, sleep, until } from '../dev/wait.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
});
test.after.always(() => db?.close());

/** A logger as `make start` builds it, its output kept: `tty` says whether stderr is a terminal. */
function captured(settings: Partial<LogSettings>, tty: boolean): { logger: Logger; lines(): string[] } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  const logger = createLogger({ LOG_LEVEL: 'info', ...settings }, stream, tty);
  return { logger, lines: () => text.split('\n').filter(Boolean) };
}

const isJson = (line: string) => {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
};

/** A database no migration has touched: a new DATA_DIR, or a new database on the test server. */
async function emptyDatabase(): Promise<{ env: Record<string, string>; close(): Promise<void> }> {
  if (onServer) {
    const admin = createSql({ url: process.env.TEST_DATABASE_URL!, pooled: false, embedded: false }, { max: 1 });
    const name = `mdapi_first_run_${process.pid}`;
    await admin.unsafe(`create database ${name}`);
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = `/${name}`;
    return {
      env: { DATABASE_URL: url.toString() },
      async close() {
        await admin.unsafe(`drop database if exists ${name} with (force)`);
        await admin.end({ timeout: 5 });
      },
    };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'mdapi-first-run-'));
  return { env: { DATA_DIR: dataDir, EMBEDDED_DB_PORT: '0' }, close: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

test.serial('a first start on a terminal: one line for all the migrations, then the banner with the pages it names', async (t) => {
  const empty = await emptyDatabase();
  const { logger, lines } = captured({}, true);
  const settings = { PORT: '0', WORKER: 'off', MARKET_SOURCE: 'none', LOG_REQUESTS: 'false' };
  // the database never migrated: every file is pending
  const opened = await openDatabase(loadConfig({ ...empty.env, ...settings }));
  const probe = createSql(opened.config.database, { max: 1 });
  t.deepEqual(await pendingMigrations(probe), migrationFiles());
  await probe.end({ timeout: 5 });
  const config = loadConfig({ ...empty.env, ...settings, ...(opened.embedded ? { EMBEDDED_DB_PORT: String(opened.embedded.port) } : {}) });
  t.is(config.LOG_FORMAT, undefined, 'unset: the terminal decides');
  const service = await startService(config, logger);
  try {
    t.deepEqual(await pendingMigrations(service.sql), []);
    announceListening(logger, service.url, service.config);
    const output = lines();
    t.false(output.some(isJson), 'readable lines, not JSON');
    const migrations = output.filter((line) => /migration/.test(line));
    t.is(migrations.length, 1, output.join('\n'));
    t.regex(migrations[0]!, new RegExp(`applied ${migrationFiles().length} migrations`));
    t.true(output.length <= 12, `a few lines, not a wall:\n${output.join('\n')}`);
    const text = output.join('\n');
    t.regex(text, new RegExp(`listening on ${service.url} `));
    t.regex(text, /make key/);
    for (const path of ['/status', '/docs/api', '/mcp', '/console']) t.true(text.includes(`${service.url}${path}`), path);
    // the pages it names are there
    for (const path of ['/status', '/docs/api']) t.is((await fetch(`${service.url}${path}`)).status, 200, path);
    t.not((await fetch(`${service.url}/mcp`, { method: 'POST' })).status, 404);
  } finally {
    await service.close();
    await opened.embedded?.stop();
    await empty.close();
  }
});

test.serial('not a terminal, or LOG_FORMAT=json on one: JSON lines, every migration step and the listening line as before', async (t) => {
  for (const [settings, tty] of [[{}, false], [{ LOG_FORMAT: 'json' as const }, true]] as const) {
    const { logger, lines } = captured(settings, tty);
    await migrate(db.sql, logger);
    announceListening(logger, 'http://127.0.0.1:3000', db.config());
    const parsed = lines().map((line) => JSON.parse(line) as Record<string, unknown>);
    t.deepEqual(parsed.map((line) => line.msg).slice(0, 2), ['database server supported', 'function files re-applied']);
    t.like(parsed.at(-1), { msg: 'market-data-api listening on http://127.0.0.1:3000/api/v1', url: 'http://127.0.0.1:3000/api/v1', level: 'info' });
  }
  // LOG_FORMAT=pretty wins off a terminal too
  const pretty = captured({ LOG_FORMAT: 'pretty' }, false);
  await migrate(db.sql, pretty.logger);
  t.is(pretty.lines().length, 1);
  t.regex(pretty.lines()[0]!, /INFO.*database ready .*no migration to apply/);
});

test.serial('on a terminal the routine job runs show at debug only; failures and notices always', (t) => {
  const job = (id: string) => ({ id, task_identifier: 'simulate_market', attempts: 1, max_attempts: 1 });
  for (const [settings, tty, successLines] of [[{}, true, 0], [{ LOG_LEVEL: 'debug' as const }, true, 1], [{}, false, 1]] as const) {
    const { logger, lines } = captured(settings, tty);
    const emitter = new EventEmitter();
    observeJobs({ events: emitter as unknown as WorkerEvents }, logger);
    emitter.emit('job:start', { job: job('1') });
    emitter.emit('job:success', { job: job('1') });
    t.is(lines().filter((line) => line.includes('job run')).length, successLines, JSON.stringify(settings));
    emitter.emit('job:error', { job: job('2'), error: new Error('venue down') });
    t.true(lines().some((line) => line.includes('venue down')), 'a failed run is always shown');
    // a task's own notes are debug, unless marked as a notice (the demo market's backfill)
    const taskLogger = graphileLogger(logger).scope({ label: 'job', taskIdentifier: 'simulate_market' });
    taskLogger.info('routine note');
    taskLogger.info('demo market: writing its price history', NOTICE);
    t.is(lines().some((line) => line.includes('routine note')), settings.LOG_LEVEL === 'debug');
    const notice = lines().find((line) => line.includes('demo market: writing'));
    t.truthy(notice);
    if (!tty) t.like(JSON.parse(notice!), { level: 'info' });
    t.false(notice!.includes('"notice"'), 'the marker is not logged');
  }
});

test.serial('pendingMigrations: none on a migrated database, the missing one when a record is gone', async (t) => {
  t.deepEqual(await pendingMigrations(db.sql), []);
  const last = migrationFiles().at(-1)!;
  const pending = await db.sql
    .begin(async (tx) => {
      await tx`delete from app.migrations where name = ${last}`;
      const seen = await pendingMigrations(tx as unknown as typeof db.sql);
      throw Object.assign(new Error('roll back'), { seen });
    })
    .catch((error: { seen?: string[] }) => error.seen);
  t.deepEqual(pending, [last]);
  t.deepEqual(await pendingMigrations(db.sql), []);
});

const run = promisify(execFile);
const embedded = embeddedOnly(test, 'the embedded database runs one statement at a time for all its clients; a server runs them side by side');

embedded.serial('create-key answers within a few turns while another client keeps the embedded database busy (as the first-start backfill does)', async (t) => {
  // One-second statements back to back, as the backfill's pieces come.
  const busy = createSql({ url: db.url, pooled: true, embedded: true }, { max: 1 });
  let stop = false;
  let statements = 0;
  const load = (async () => {
    while (!stop) {
      await busy`select pg_sleep(1)`;
      statements++;
    }
  })();
  try {
    await until('two busy statements', () => statements >= 2, { timeoutMs: 30_000, everyMs: 100 });
    const env = { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', DATA_DIR: db.dataDir!, EMBEDDED_DB_PORT: String(db.embeddedPort) };
    const cli = async (args: string[]) => {
      const before = statements;
      const { stdout } = await run(process.execPath, ['bin/cli.ts', ...args], { env });
      return { stdout, waited: statements - before };
    };
    // the CLI's own start (loading its modules), without the database: on a loaded machine, seconds
    const start = await cli(['db-url']);
    const created = await cli(['create-key', '--plan', 'free', '--owner', 'busy-start']);
    t.regex(created.stdout, /^mdk_/);
    // A migration run is a turn per file, each behind a statement of the load: fifty-odd seconds.
    // The check inside the key's transaction is two turns (the type query, then the transaction);
    // the start-up is answered at once, as the backend runs on a thread of its own. The bound
    // leaves room for a loaded machine.
    t.true(created.waited - start.waited <= 6, `create-key waited for ${created.waited} one-second statements, its start alone ${start.waited}`);
  } finally {
    stop = true;
    await load;
    await busy.end({ timeout: 5 });
  }
});

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** The SSE stream's text as it comes, until closed. */
function openStream(url: string, key: string) {
  let text = '';
  const req = httpRequest(url, { headers: { authorization: `Bearer ${key}` } }, (response) => {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => (text += chunk));
  });
  req.on('error', () => {});
  req.end();
  return { text: () => text, close: () => req.destroy() };
}

test.serial('make start on a fresh database: within seconds of the API answering the tour has prices: /coins, the analyst query, a live stream', async (t) => {
  const empty = await emptyDatabase();
  const [port, dbPort] = [await freePort(), await freePort()];
  const env = {
    ...process.env, ...empty.env, HOST: '127.0.0.1', PORT: String(port), LOG_FORMAT: 'json', LOG_REQUESTS: 'false',
    ...(onServer ? {} : { EMBEDDED_DB_PORT: String(dbPort) }),
  };
  // as `make start` runs it: its own process, the inline worker, the demo market
  const child = spawn(process.execPath, ['bin/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const base = `http://127.0.0.1:${port}`;
  const sql = createSql({ url: onServer ? empty.env.DATABASE_URL! : embeddedUrl(dbPort), pooled: false, embedded: !onServer }, { max: 1 });
  const analyst = onServer ? null : createSql({ url: embeddedUrl(dbPort, 'analyst'), pooled: false, embedded: true }, { max: 1 });
  let stream: ReturnType<typeof openStream> | null = null;
  try {
    await until('the API to answer', async () => (await fetch(`${base}/healthz`).catch(() => null))?.ok === true, { timeoutMs: 240_000, everyMs: 100 });
    const answered = Date.now();
    const since = () => `${((Date.now() - answered) / 1000).toFixed(1)} s after the API answered`;
    const { key } = await createKey(sql, { plan: 'starter', owner: 'first-minutes', scope: 'data-api' });
    const headers = { authorization: `Bearer ${key}` };

    const coins = await poll(
      async () => (await (await fetch(`${base}/api/v1/coins?per_page=5`, { headers })).json()) as { data?: { slug: string; price: string | null; rank: number | null }[] },
      (body) => body.data?.find((coin) => coin.slug === 'bitcoin')?.price != null,
      { timeoutMs: 10_000, everyMs: 200 },
    );
    t.log(`/coins: bitcoin priced ${since()}`);
    const btc = coins.data?.find((coin) => coin.slug === 'bitcoin');
    t.truthy(btc?.price, `bitcoin has a price within 10 s of the API answering: ${JSON.stringify(coins).slice(0, 300)}`);
    t.is(btc?.rank, 1);
    t.is(coins.data?.length, 5);

    // the README's analyst query, as the analyst (on a server, the role is the operator's to grant)
    const rows = await (analyst ?? sql)`
      select c.slug, s.price, s.change_24h from market.coin_state s join market.coins c on c.id = s.coin_id
      order by s.rank limit 5`;
    t.is(rows.filter((row) => row.price !== null).length, 5, 'five coins with a price');

    // a stream opened 5 s after: a snapshot with bitcoin, then a price within 20 s (the demo's moves come
    // every few seconds; alone a price comes within 2 s, but under a full test run's load the first start's
    // backfill job has held the embedded database 9-13 s, the snapshot and the first move with it)
    await sleep(Math.max(0, answered + 5_000 - Date.now()));
    stream = openStream(`${base}/api/v1/stream/prices?slugs=bitcoin,ethereum`, key);
    const opened = Date.now();
    const open = stream;
    await until('the snapshot', () => /event: snapshot\ndata: .*\n\n/.test(open.text()), { timeoutMs: 15_000, everyMs: 20 }).catch(() => {});
    const snapshot = /event: snapshot\ndata: (.*)\n/.exec(open.text());
    t.truthy(snapshot, `a snapshot within 15 s of opening the stream, ${since()}: ${open.text()}`);
    const data = JSON.parse(snapshot?.[1] ?? '{"data":[]}') as { data: { slug: string; price: string; kind: string }[] };
    t.true(data.data.some((row) => row.slug === 'bitcoin' && Number(row.price) > 0), `bitcoin in the snapshot: ${snapshot?.[1]}`);
    await until('a price event', () => /event: price\n/.test(open.text()), { timeoutMs: Math.max(0, opened + 20_000 - Date.now()), everyMs: 20 }).catch(() => {});
    t.regex(open.text(), /event: price\n/, `a price within 20 s of opening the stream, ${since()}`);
    t.log(`stream: ${data.data.map((row) => `${row.slug} ${row.kind}`).join(', ')} in the snapshot; a price event ${since()}`);
  } finally {
    stream?.close();
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(20_000)]);
    if (child.exitCode === null) child.kill('SIGKILL');
    await sql.end({ timeout: 1 }).catch(() => {});
    await analyst?.end({ timeout: 1 }).catch(() => {});
    await empty.close();
    if (t.passed === false) t.log(output.slice(-3000));
  }
});
