// One client must not stall the embedded database for everyone: outside clients' statements are
// cancelled after the time-out while the service's own connections are exempt, a client killed
// mid-statement holds the backend no longer than that, a CancelRequest is honoured, and a
// transaction left idle is cut off after the short default.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import test from 'ava';
import postgres from 'postgres';
import { loadConfig } from '../../src/config.ts';
import { embeddedOnly } from '../helpers/targets.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { sleep } from '../../dev/wait.ts';

const embedded = embeddedOnly(test, "outside clients' time-out is the embedded multiplexer's; a server has statement_timeout");

const run = promisify(execFile);
const TIMEOUT_MS = 2000;
let db: TestDatabase;

const outside = (name = 'psql-like', url = db.url) =>
  postgres(url, { prepare: false, max: 1, onnotice: () => {}, connection: { application_name: name } });

/** Times a service query (db.sql carries the service's application_name). */
async function serviceAnswer(): Promise<number> {
  const started = Date.now();
  const [row] = await db.sql`select 1 as ok`;
  if (row!.ok !== 1) throw new Error('no answer');
  return Date.now() - started;
}

test.before(async () => {
  // The idle-in-transaction limit is left at its default.
  db = await testDatabase({ statementTimeoutMs: TIMEOUT_MS });
});
test.after.always(() => db?.close());

embedded('the defaults are a few seconds', (t) => {
  const config = loadConfig({});
  t.is(config.EMBEDDED_STATEMENT_TIMEOUT_MS, 5000);
  t.is(config.EMBEDDED_IDLE_TX_TIMEOUT_MS, 10_000);
});

embedded.serial('psql pg_sleep(30) gets a statement time-out while the service keeps answering', async (t) => {
  const started = Date.now();
  const psql = run('psql', ['-X', '-At', db.url, '-c', 'select pg_sleep(30)'], { env: { ...process.env, PGAPPNAME: 'psql' } })
    .then(() => null, (error: { stderr?: string }) => error.stderr ?? 'failed');
  await sleep(300);
  const waits = await Promise.all([serviceAnswer(), serviceAnswer(), serviceAnswer()]);
  for (const wait of waits) t.true(wait < TIMEOUT_MS + 1500, `service query waited ${wait} ms`);
  const stderr = await psql;
  t.regex(stderr ?? '', /canceling statement due to statement timeout/);
  t.true(Date.now() - started < TIMEOUT_MS + 2000, 'the sleeper was cut off');
});

embedded.serial('postgres.js pg_sleep(30) fails with 57014 and the connection stays usable', async (t) => {
  const sql = outside();
  const error = await t.throwsAsync(sql`select pg_sleep(30)`);
  t.is((error as { code?: string }).code, '57014');
  const [row] = await sql`select 2 as two`;
  t.is(row!.two, 2);
  await sql.end();
});

embedded.serial('the analyst is an outside client too', async (t) => {
  const analyst = outside('analyst-tool', db.urlAs('analyst'));
  const error = await t.throwsAsync(analyst`select pg_sleep(30)`);
  t.is((error as { code?: string }).code, '57014');
  await analyst.end();
});

embedded.serial('the service’s own connections are exempt', async (t) => {
  const [row] = await db.sql`select pg_sleep(${(TIMEOUT_MS + 500) / 1000}) is not null as slept`;
  t.true(row!.slept);
});

embedded.serial('a client killed mid-statement blocks the others no longer than the time-out', async (t) => {
  const script = `
    import postgres from 'postgres';
    const sql = postgres(${JSON.stringify(db.url)}, { prepare: false, max: 1, connection: { application_name: 'doomed' } });
    await sql\`select 1\`;
    process.stdout.write('connected\\n');
    await sql\`select pg_sleep(30)\`;
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk) => String(chunk).includes('connected') && resolve());
    child.once('exit', (code) => reject(new Error(`the client process exited early (${code})`)));
  });
  await sleep(300);
  child.kill('SIGKILL');
  const wait = await serviceAnswer();
  t.true(wait < TIMEOUT_MS + 1500, `service query waited ${wait} ms`);
});

embedded.serial('a CancelRequest cancels a statement waiting for the backend', async (t) => {
  // While a statement runs the process sees no socket: a cancel can reach a statement that
  // waits behind another client's open transaction.
  const blocker = outside('blocker');
  const victim = outside('victim');
  await victim`select 1`;
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const blocking = blocker.begin(async (tx) => {
    await tx`select 1`;
    entered();
    await sleep(800);
  });
  await inside;
  const started = Date.now();
  const waiting = victim`select pg_sleep(1.5) is not null as slept`.execute();
  await sleep(200);
  waiting.cancel();
  const error = await t.throwsAsync(waiting);
  t.is((error as { code?: string }).code, '57014');
  t.regex((error as Error).message, /user request/);
  t.true(Date.now() - started < 1500, 'cancelled before its sleep ran out');
  await blocking;
  const [row] = await victim`select 3 as three`;
  t.is(row!.three, 3);
  await Promise.all([blocker.end(), victim.end()]);
});

embedded.serial('a client idle in a transaction is cut off after the short default', async (t) => {
  const idle = outside('idle');
  let cutOff = false;
  const holding = idle.begin(async (tx) => {
    await tx`select 1`;
    await sleep(12_000);
    await tx`select 1`;
  }).catch(() => (cutOff = true));
  await sleep(300);
  const wait = await serviceAnswer();
  t.true(wait > 5000 && wait < 11_500, `service query waited ${wait} ms`);
  await holding;
  t.true(cutOff);
  await idle.end().catch(() => {});
});
