// `make topology`: several processes on one database behave as one service. On a fresh database
// (TOPOLOGY_DATABASE_URL: a superuser URL of a TimescaleDB server, on which a new database is created
// and dropped at the end; without it the embedded database, `mdapi db`) it starts TOPOLOGY_APIS API
// processes (WORKER=off, one port each) and TOPOLOGY_WORKERS job workers (`mdapi worker`, demo
// market with a short history), then checks, from the database's own counters and a ledger its
// triggers keep (bench/topology/ledger.ts):
//   - one key's per-minute rate limit and monthly quota are one limit through every API process;
//   - each cron minute of each task is queued and run once, each market piece and backfill window
//     is written and refreshed once, each TimescaleDB job run by the service once per interval,
//     and the 1-minute bars have no gap and no duplicate;
//   - each crossed alarm triggers once, and each webhook attempt runs once, numbered 1..n.
// Prints the figures; exits 1 when a check fails.
//   TOPOLOGY_DATABASE_URL  TOPOLOGY_APIS (2)  TOPOLOGY_WORKERS (2)  TOPOLOGY_HISTORY ('1 day')
//   TOPOLOGY_MINUTES (3, minutes of ticks after the alarms)  TOPOLOGY_KEEP=1 keeps the database and logs
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureCatalogue } from '../src/sources/simulated/index.ts';
import { embeddedUrl } from '../src/config.ts';
import { createSql, type Sql } from '../src/db/client.ts';
import { portAnswers } from '../src/db/embedded/launcher.ts';
import { migrate } from '../src/db/migrate.ts';
import { createKey } from '../src/keys.ts';
import { withReservedQuery } from '../src/db/query.ts';
import { startReceiver } from '../dev/webhook-receiver.ts';
import { sleep, until } from '../dev/wait.ts';
import { createAlarms } from './chaos/alarms.ts';
import { alarmRows, barFigures, settled } from './chaos/checks.ts';
import { freePort, Managed, tail, cleanUpOnSignal } from './chaos/processes.ts';
import { attemptRows, backfillFigures, coverageFigures, cronFigures, installLedger, runRows, timescaledbJobRows } from './topology/ledger.ts';

const SERVER_URL = process.env.TOPOLOGY_DATABASE_URL || null;
const APIS = Math.max(1, Number(process.env.TOPOLOGY_APIS ?? 2));
const WORKERS = Math.max(1, Number(process.env.TOPOLOGY_WORKERS ?? 2));
const HISTORY = process.env.TOPOLOGY_HISTORY ?? '1 day';
const MINUTES = Number(process.env.TOPOLOGY_MINUTES ?? 3);
const KEEP = process.env.TOPOLOGY_KEEP === '1' || process.env.TOPOLOGY_KEEP === 'true';
const OWNER = 'topology';
const START_MS = 120_000;
const SETTLE_MS = 180_000;

const started = Date.now();
const say = (line: string) => process.stdout.write(`[topology ${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
const root = mkdtempSync(join(tmpdir(), 'mdapi-topology-'));
const logDir = join(root, 'logs');
mkdirSync(logDir, { recursive: true });

const failures: string[] = [];
const notes: string[] = [];
const summary: [string, string][] = [];
const figure = (name: string, value: string | number, ok = true) => summary.push([`${ok ? ' ' : '!'} ${name}`, String(value)]);
const section = (name: string) => summary.push([name, '']);
/** records a check: the figure, and the failure when it does not hold */
const check = (name: string, value: string | number, ok: boolean, failure: string) => {
  figure(name, value, ok);
  if (!ok) failures.push(failure);
};

// ---------------------------------------------------------------------------------------------
// The database: a new one on the server, or a fresh embedded one.
const { DATABASE_URL: _url, DATABASE_POOLED: _pooled, ...inherited } = process.env;
const common = { ...inherited, LOG_LEVEL: 'info', LOG_REQUESTS: 'false', LOG_FORMAT: 'json', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };
const registry = new Set<Managed>();
const databaseName = `mdapi_topology_${process.pid}_${Date.now()}`;
let admin: Sql | null = null;
let db: Managed | null = null;
let embeddedPort = 0;
let dbUrl: string;
let pooled: boolean;
if (SERVER_URL) {
  admin = createSql({ url: SERVER_URL, pooled: false, embedded: false }, { max: 1 });
  const url = new URL(SERVER_URL);
  url.pathname = `/${databaseName}`;
  dbUrl = url.toString();
  pooled = false;
} else {
  embeddedPort = await freePort();
  db = new Managed('db', ['bin/cli.ts', 'db'], { ...common, DATA_DIR: join(root, 'data'), EMBEDDED_DB_PORT: String(embeddedPort) }, logDir, registry);
  dbUrl = embeddedUrl(embeddedPort);
  pooled = true;
}
const sql = createSql({ url: dbUrl, pooled, embedded: false }, { max: 4 });
const client = { ...common, DATABASE_URL: dbUrl, DATABASE_POOLED: String(pooled) };

const apis = Array.from({ length: APIS }, (_, i) => ({
  name: `api${i + 1}`,
  url: '',
  process: null as Managed | null,
}));
const workers: Managed[] = [];
let receiver: Awaited<ReturnType<typeof startReceiver>> | null = null;
let databaseCreated = false;

let cleaning: Promise<void> | null = null;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const managed of registry) if (managed !== db) managed.signal('SIGKILL');
    await Promise.all([...registry].filter((managed) => managed !== db).map((managed) => managed.exited()));
    await receiver?.close().catch(() => {});
    await sql.end({ timeout: 2 }).catch(() => {});
    if (db) await db.kill('SIGTERM', 20_000);
    const keep = KEEP || failures.length > 0;
    if (admin) {
      if (databaseCreated && !keep) await admin.unsafe(`drop database if exists ${databaseName} with (force)`).catch((error: Error) => notes.push(`dropping ${databaseName}: ${error.message}`));
      else if (databaseCreated) process.stdout.write(`database ${databaseName} kept\n`);
      await admin.end({ timeout: 2 }).catch(() => {});
    }
    if (keep) process.stdout.write(`logs${db ? ' and data' : ''} kept in ${root}\n`);
    else rmSync(root, { recursive: true, force: true });
  })();
  return cleaning;
}
cleanUpOnSignal(cleanup);

const answers = async (probe: () => Promise<unknown>) => {
  try {
    await probe();
    return true;
  } catch {
    return false;
  }
};

async function startApi(api: (typeof apis)[number]): Promise<void> {
  const port = await freePort();
  api.url = `http://127.0.0.1:${port}`;
  const managed = new Managed(api.name, ['bin/main.ts'], { ...client, HOST: '127.0.0.1', PORT: String(port), WORKER: 'off', MARKET_SOURCE: 'none' }, logDir, registry);
  api.process = managed;
  managed.onUnexpectedExit = (code, signal) => {
    if (!cleaning) failures.push(`${api.name} exited by itself (${signal ?? `code ${code}`}):\n${tail(managed.log, 8)}`);
  };
  managed.start();
  await until(`${api.name} to answer /healthz`, async () => {
    if (!managed.running) throw new Error(`${api.name} exited:\n${tail(managed.log)}`);
    return answers(async () => {
      const response = await fetch(`${api.url}/healthz`, { signal: AbortSignal.timeout(2_000) });
      if (response.status !== 200) throw new Error(String(response.status));
    });
  }, { timeoutMs: START_MS, everyMs: 200 });
}

async function startWorker(index: number): Promise<void> {
  const managed = new Managed(
    `worker${index + 1}`,
    ['bin/cli.ts', 'worker'],
    { ...client, MARKET_SOURCE: 'simulated', WORKER_HEARTBEAT_MS: '1000', WEBHOOK_RETRY_BASE_MS: '200', WEBHOOK_TIMEOUT_MS: '5000' },
    logDir,
    registry,
  );
  workers.push(managed);
  managed.onUnexpectedExit = (code, signal) => {
    if (!cleaning) failures.push(`${managed.name} exited by itself (${signal ?? `code ${code}`}):\n${tail(managed.log, 8)}`);
  };
  managed.start();
  const pid = managed.pid!;
  await until(`${managed.name} to beat`, async () => {
    if (!managed.running) throw new Error(`${managed.name} exited:\n${tail(managed.log)}`);
    const [row] = await sql`select 1 from app.worker_heartbeats where process like ${`%:${pid}`} and beat_at > now() - interval '5 seconds'`;
    return Boolean(row);
  }, { timeoutMs: START_MS, everyMs: 200 });
}

// ---------------------------------------------------------------------------------------------
// Requests, each counted by the API process that answered it.
interface Answer {
  api: string;
  status: number;
  code: string | null;
  quotaUsed: number | null;
  remaining: number | null;
}
const statuses = new Map<string, number>();
async function request(api: (typeof apis)[number], key: string, path = '/ping', init: RequestInit = {}): Promise<Answer & { json: any }> {
  const response = await fetch(`${api.url}/api/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    signal: AbortSignal.timeout(30_000),
  });
  const json = await response.json().catch(() => null);
  const label = `${api.name} ${response.status}`;
  statuses.set(label, (statuses.get(label) ?? 0) + 1);
  const header = (name: string) => (response.headers.get(name) === null ? null : Number(response.headers.get(name)));
  return {
    api: api.name,
    status: response.status,
    code: json?.error?.code ?? null,
    quotaUsed: header('x-quota-used'),
    remaining: header('x-ratelimit-remaining'),
    json,
  };
}
/** `count` requests at once, spread over the API processes in turn. */
const burst = (key: string, count: number) => Promise.all(Array.from({ length: count }, (_, i) => request(apis[i % apis.length]!, key)));
const byApi = (answers: Answer[]) =>
  apis.map((api) => {
    const mine = answers.filter((answer) => answer.api === api.name);
    const ok = mine.filter((answer) => answer.status === 200).length;
    return `${api.name} ${ok}/${mine.length - ok}`;
  }).join(', ');
/** Whether the values are exactly from..to, each once. */
function exactly(values: (number | null)[], from: number, to: number): boolean {
  const sorted = [...values].sort((a, b) => (a ?? -1) - (b ?? -1));
  return sorted.length === to - from + 1 && sorted.every((value, i) => value === from + i);
}

// ---------------------------------------------------------------------------------------------
// 1. The rate limit: one key, hammered through every API process at once within one minute.
async function rateLimitCheck(key: string, keyId: number) {
  const [plan] = await sql<{ rpm: number }[]>`select requests_per_minute as rpm from app.plans where name = 'free'`;
  const limit = plan!.rpm;
  const count = limit * 2 + 20;
  // well inside one minute window, so that the burst counts against one limit (checked below anyway)
  await until('a fresh part of the minute', () => new Date().getSeconds() <= 40, { timeoutMs: 30_000, everyMs: 250 });
  const result = await burst(key, count);
  const ok = result.filter((answer) => answer.status === 200);
  const limited = result.filter((answer) => answer.status === 429 && answer.code === 'rate_limited');
  const [db] = await sql<{ windows: number; requests: number; allowed: number; used: number; endpoints: number }[]>`
    select (select count(*) from app.rate_windows where key_id = ${keyId})::int as windows,
      (select coalesce(sum(requests), 0) from app.rate_windows where key_id = ${keyId})::int as requests,
      (select coalesce(sum(least(requests, ${limit})), 0) from app.rate_windows where key_id = ${keyId})::int as allowed,
      (select coalesce(sum(used), 0) from app.usage_monthly where key_id = ${keyId})::int as used,
      (select coalesce(sum(requests), 0) from app.usage_endpoints where key_id = ${keyId})::int as endpoints`;
  section(`rate limit: a free key (${limit}/min), ${count} requests at once through ${apis.length} API processes`);
  check('200 / 429 rate_limited / other', `${ok.length} / ${limited.length} / ${count - ok.length - limited.length}`,
    ok.length === db!.allowed && limited.length === count - db!.allowed && db!.windows === 1,
    `rate limit: ${ok.length} succeeded and ${limited.length} were limited of ${count}; the limit allows ${db!.allowed} in ${db!.windows} window(s)`);
  figure('answered 200/429 by process', byApi(result));
  check('X-Quota-Used of the 200s', ok.length ? `each of 1..${ok.length} once` : 'none', exactly(ok.map((a) => a.quotaUsed), 1, ok.length),
    `rate limit: X-Quota-Used of the successes is ${ok.map((a) => a.quotaUsed).sort((a, b) => a! - b!).join(',')}, not 1..${ok.length} once each`);
  check('X-RateLimit-Remaining of the 200s', `each of 0..${limit - 1} once`, exactly(ok.map((a) => a.remaining), limit - ok.length, limit - 1),
    `rate limit: X-RateLimit-Remaining of the successes is ${ok.map((a) => a.remaining).sort((a, b) => a! - b!).join(',')}`);
  check('database: requests counted / used / by endpoint', `${db!.requests} / ${db!.used} / ${db!.endpoints}`,
    db!.requests === count && db!.used === ok.length && db!.endpoints === ok.length,
    `rate limit: the database counted ${db!.requests} requests (sent ${count}), ${db!.used} used and ${db!.endpoints} by endpoint (${ok.length} succeeded)`);
}

// 2. The monthly quota: a key 25 requests short of it, in turn then all at once through every process.
async function quotaCheck(key: string, keyId: number) {
  const [plan] = await sql<{ quota: number; rpm: number }[]>`select monthly_quota::int as quota, requests_per_minute as rpm from app.plans where name = 'starter'`;
  const quota = plan!.quota;
  const left = 25;
  const inTurn = 10;
  const atOnce = 60;
  await sql`insert into app.usage_monthly (key_id, month, used)
            values (${keyId}, date_trunc('month', now() at time zone 'utc')::date, ${quota - left})`;
  const sequence: Answer[] = [];
  for (let i = 0; i < inTurn; i++) sequence.push(await request(apis[i % apis.length]!, key));
  const result = await burst(key, atOnce);
  const ok = result.filter((answer) => answer.status === 200);
  const exhausted = result.filter((answer) => answer.status === 429 && answer.code === 'quota_exceeded');
  const [db] = await sql<{ used: number; endpoints: number }[]>`
    select (select coalesce(sum(used), 0) from app.usage_monthly where key_id = ${keyId})::int as used,
      (select coalesce(sum(requests), 0) from app.usage_endpoints where key_id = ${keyId})::int as endpoints`;
  section(`monthly quota: a starter key ${left} requests short of ${quota}, ${inTurn} in turn then ${atOnce} at once`);
  const turns = sequence.map((answer) => `${answer.api}:${answer.quotaUsed}`);
  check('X-Quota-Used in turn', turns.join(' '),
    sequence.every((answer, i) => answer.status === 200 && answer.quotaUsed === quota - left + i + 1),
    `quota: the requests in turn answered ${sequence.map((a) => `${a.status} used=${a.quotaUsed}`).join(', ')}`);
  check('at once: 200 / 429 quota_exceeded / other', `${ok.length} / ${exhausted.length} / ${atOnce - ok.length - exhausted.length}`,
    ok.length === left - inTurn && exhausted.length === atOnce - (left - inTurn),
    `quota: ${ok.length} of ${atOnce} succeeded with ${left - inTurn} left`);
  figure('answered 200/429 by process', byApi(result));
  check('X-Quota-Used of the 200s', `each of ${quota - left + inTurn + 1}..${quota} once`, exactly(ok.map((a) => a.quotaUsed), quota - left + inTurn + 1, quota),
    `quota: X-Quota-Used of the successes is ${ok.map((a) => a.quotaUsed).sort((a, b) => a! - b!).join(',')}`);
  check('database: used / by endpoint', `${db!.used} / ${db!.endpoints}`, db!.used === quota && db!.endpoints === left,
    `quota: the database counted ${db!.used} used (quota ${quota}) and ${db!.endpoints} by endpoint (${left} succeeded)`);
}

// ---------------------------------------------------------------------------------------------
const lastCompleteMinute = () => new Date(Math.floor(Date.now() / 60_000) * 60_000 - 60_000);
let workerStops = '';

try {
  say(`${APIS} API processes, ${WORKERS} workers, history ${HISTORY}, logs in ${logDir}`);
  if (admin) {
    await admin.unsafe(`create database ${databaseName}`);
    databaseCreated = true;
  } else {
    db!.start();
    await until('the embedded database to answer', async () => {
      if (!db!.running) throw new Error(`mdapi db exited:\n${tail(db!.log)}`);
      return (await portAnswers(embeddedPort)) && answers(() => sql`select 1`);
    }, { timeoutMs: START_MS, everyMs: 200 });
  }
  await migrate(sql);
  const [server] = await sql<{ postgres: string; timescaledb: string }[]>`
    select current_setting('server_version') as postgres, (select extversion from pg_extension where extname = 'timescaledb') as timescaledb`;
  const kind = admin
    ? `server ${new URL(SERVER_URL!).host}, database ${databaseName}: PostgreSQL ${server!.postgres}, TimescaleDB ${server!.timescaledb}`
    : `embedded database (PostgreSQL ${server!.postgres}, TimescaleDB ${server!.timescaledb})`;
  say(kind);
  if (!admin) notes.push('the embedded database serves one statement at a time (its multiplexer serialises every session), so races between processes are rarer than on a server: the check is weaker here');
  await withReservedQuery(sql, (query) => ensureCatalogue(query));
  await sql`update market.data_sources set settings = settings || jsonb_build_object('history', ${HISTORY}::text) where name = 'simulated'`;
  await installLedger(sql);
  const free = await createKey(sql, { plan: 'free', owner: `${OWNER}-rate`, scope: 'data-api' });
  const starter = await createKey(sql, { plan: 'starter', owner: `${OWNER}-quota`, scope: 'data-api' });
  const pro = await createKey(sql, { plan: 'pro', owner: OWNER, scope: 'data-api' });
  await sql`insert into app.alarm_inventory (owner, balance) values (${OWNER}, 1000) on conflict (owner) do update set balance = 1000`;
  say('migrated, catalogue loaded, ledger installed, keys created');

  // Every API process migrates at start: they start together, as a rolling deployment would.
  await Promise.all(apis.map(startApi));
  say(`API processes: ${apis.map((api) => `${api.name} ${api.url} (pid ${api.process!.pid})`).join(', ')}`);
  await Promise.all(Array.from({ length: WORKERS }, (_, i) => startWorker(i)));
  say(`workers: ${workers.map((worker) => `${worker.name} (pid ${worker.pid})`).join(', ')}; backfill under way`);

  // The limits are checked while the backfill loads the database.
  await rateLimitCheck(free.key, free.id);
  await quotaCheck(starter.key, starter.id);
  say('rate limit and quota checked');

  const backfillFrom = Date.now();
  await until('the backfill to end and the prices to be set', async () => {
    const [row] = await sql`select 1 from market.data_sources d where d.name = 'simulated'
      and d.covered_until >= date_trunc('minute', now()) - interval '1 minute'
      and exists (select 1 from market.coin_state where price is not null)`;
    return Boolean(row);
  }, { timeoutMs: 300_000, everyMs: 500 });
  say(`backfill done (${((Date.now() - backfillFrom) / 1000).toFixed(1)} s after the limit checks)`);

  // Every third delivery attempt fails, so that deliveries retry (up to 3 retries, 0.2 s base).
  receiver = await startReceiver(...Array.from({ length: 3000 }, (_, i) => (i % 3 === 0 ? 503 : 204)));
  const hook = await request(apis[apis.length - 1]!, pro.key, '/webhooks', { method: 'POST', body: JSON.stringify({ url: receiver.url, events: ['alarm.triggered'] }) });
  if (hook.status !== 201) throw new Error(`registering the webhook endpoint: ${hook.status} ${JSON.stringify(hook.json)}`);
  let turn = 0;
  const alarmSet = await createAlarms(sql, {
    post: (body) => request(apis[turn++ % apis.length]!, pro.key, '/alarms', { method: 'POST', body: JSON.stringify(body) }),
    random: Math.random,
    name: OWNER,
  });
  failures.push(...alarmSet.unexpected);
  say(`webhook endpoint -> ${receiver.url}; ${alarmSet.created.length} alarms created through ${apis.length} API processes (${alarmSet.refused} refused by the guard)`);

  say(`${MINUTES} minutes of ticks`);
  await sleep(MINUTES * 60_000);

  // Settle, then stop the workers gracefully so that nothing moves while the figures are read.
  const through = lastCompleteMinute();
  await until('the market and the webhooks to settle', async () => {
    const state = await settled(sql, through).catch(() => null);
    return state && state.caughtUp && state.evaluated && state.pendingDeliveries === 0;
  }, { timeoutMs: SETTLE_MS, everyMs: 500 });
  // which process each worker pool belongs to (a graceful stop deletes its heartbeat)
  const pools = new Map((await sql<{ worker_id: string; process: string }[]>`select worker_id, process from app.worker_heartbeats`).map((row) => [row.worker_id, row.process]));
  const stopAt = new Date();
  const stops = await Promise.all(workers.map((worker) => worker.kill('SIGTERM', 15_000)));
  workerStops = workers.map((worker, i) => `${worker.name} ${stops[i]!.tookMs} ms${stops[i]!.forced ? ' (SIGKILLed)' : ''}, exit ${worker.child?.exitCode}`).join('; ');
  for (const [i, stop] of stops.entries()) {
    if (stop.forced || workers[i]!.child?.exitCode !== 0) failures.push(`${workers[i]!.name} did not stop cleanly on SIGTERM: ${workerStops}`);
  }
  const after = await settled(sql, through);
  if (!after.evaluated || after.pendingDeliveries > 0) failures.push(`the workers stopped with work left: ${JSON.stringify(after)}`);
  say(`settled through ${through.toISOString()}; workers stopped (${workerStops})`);

  // 3. Jobs: every cron minute queued once and run once; which process ran what.
  const cron = await cronFigures(sql, new Date(stopAt.getTime() - 120_000));
  section(`cron jobs of ${workers.length} workers (minutes / jobs / runs; duplicated minutes, missing minutes, jobs run twice, never run)`);
  for (const task of cron) {
    const ok = task.duplicated === 0 && task.missing === 0 && task.rerun === 0 && task.overdue === 0;
    check(task.task, `${task.minutes} / ${task.jobs} / ${task.runs}; ${task.duplicated}, ${task.missing}, ${task.rerun}, ${task.unrun}`, ok,
      `${task.task}: ${task.duplicated} minutes queued twice, ${task.missing} minutes missing, ${task.rerun} jobs run more than once, ${task.overdue} jobs never run`);
    if (task.unrun > task.overdue) notes.push(`${task.task}: ${task.unrun - task.overdue} cron jobs queued in the last 2 minutes were still waiting when the workers stopped`);
  }
  if (!cron.some((task) => task.task === 'simulate_market' && task.minutes >= MINUTES)) failures.push(`simulate_market was queued for fewer than ${MINUTES} minutes`);
  const runs = await runRows(sql);
  const byProcess = new Map<string, number>();
  for (const run of runs) {
    const pid = Number((run.process ?? pools.get(run.locked_by))?.split(':').pop());
    const name = workers.find((worker) => worker.child?.pid === pid)?.name ?? `unknown (${run.locked_by})`;
    byProcess.set(name, (byProcess.get(name) ?? 0) + 1);
  }
  figure('job runs by process (all tasks)', [...byProcess.entries()].sort().map(([name, n]) => `${name} ${n}`).join(', '));
  if (workers.length > 1 && byProcess.size < 2) notes.push('only one worker ran jobs: the other never got one');
  // The workers' own log lines: one outcome per run, never two for the same job and attempt.
  const outcomes = new Map<string, { count: number; outcome: string; worker: string }>();
  let errors = 0;
  for (const worker of workers) {
    for (const line of readFileSync(worker.log, 'utf8').split('\n')) {
      if (!line.includes('"job run"')) continue;
      const entry = JSON.parse(line) as { job: { id: string; task: string; attempt: number }; outcome: string };
      const key = `${entry.job.task} job ${entry.job.id} attempt ${entry.job.attempt}`;
      const seen = outcomes.get(key);
      outcomes.set(key, { count: (seen?.count ?? 0) + 1, outcome: entry.outcome, worker: seen ? `${seen.worker}, ${worker.name}` : worker.name });
      if (entry.outcome !== 'success') errors++;
    }
  }
  const twice = [...outcomes.entries()].filter(([, seen]) => seen.count > 1);
  check('runs logged / logged twice / failed', `${outcomes.size} / ${twice.length} / ${errors}`, twice.length === 0 && errors === 0,
    `job runs: ${twice.length} logged twice (${twice.slice(0, 5).map(([key, seen]) => `${key} by ${seen.worker}`).join('; ')}), ${errors} failed (see ${logDir})`);
  check('runs started (locks) / logged', `${runs.length} / ${outcomes.size}`, runs.length >= outcomes.size,
    `job runs: ${outcomes.size} outcomes logged for ${runs.length} runs started`);

  // 4. The market: pieces, backfill windows, TimescaleDB jobs, bars.
  section('market');
  const coverage = await coverageFigures(sql);
  check('market pieces / out of chain / written twice', `${coverage.pieces} / ${coverage.broken} / ${coverage.repeated}`, coverage.broken === 0 && coverage.repeated === 0 && coverage.pieces > 1,
    `market pieces: ${coverage.broken} did not start where the previous ended, ${coverage.repeated} windows written twice (of ${coverage.pieces})`);
  const backfills = await backfillFigures(sql);
  check('backfill windows / recorded twice / not refreshed once / open', `${backfills.windows} / ${backfills.repeated} / ${backfills.closedWrongly} / ${backfills.open}`,
    backfills.repeated === 0 && backfills.closedWrongly === 0 && backfills.open === 0 && backfills.windows > 0,
    `backfill windows: ${backfills.repeated} recorded twice, ${backfills.closedWrongly} not refreshed exactly once, ${backfills.open} left open (of ${backfills.windows})`);
  const [runner] = await sql<{ runner: string; reason: string }[]>`select runner, reason from app.timescaledb_job_runner`;
  figure('TimescaleDB jobs run by', runner ? `${runner.runner} (${runner.reason})` : 'not decided yet');
  for (const job of await timescaledbJobRows(sql)) {
    const ok = job.min_gap_s === null || job.min_gap_s >= job.interval_s - 1;
    check(`  job ${job.job_id} ${job.proc_name} ${job.hypertable} (every ${job.interval_s} s)`,
      `service runs ${job.service_runs} (closest ${job.min_gap_s ?? '-'} s apart, ${job.errors} failed)${job.scheduler_runs === null ? '' : `, scheduler runs ${job.scheduler_runs} (${job.scheduler_failures} failed)`}`,
      ok, `TimescaleDB job ${job.job_id} (${job.proc_name}) ran twice within its interval (${job.min_gap_s} s < ${job.interval_s} s)`);
  }
  const bars = await barFigures(sql, through);
  const [dup] = await sql<{ duplicates: number }[]>`select (count(*) - count(distinct (coin_id, time)))::int as duplicates from market.coin_bars_1m`;
  figure('coins / 1-minute bars', `${bars.coins} / ${bars.bars}`);
  check('bars duplicated / minutes missing', `${dup!.duplicates} / ${bars.missing}`, dup!.duplicates === 0 && bars.missing === 0,
    `bars: ${dup!.duplicates} duplicates, ${bars.missing} minutes missing`);
  check(`trading coins behind ${through.toISOString().slice(11, 16)} UTC`, `${bars.lagging} of ${bars.live}`, bars.lagging === 0, `${bars.lagging} trading coins have no bar at ${through.toISOString()}`);

  // 5. Alarms: every crossed alarm triggered once, no other; one event per webhook alarm.
  section('alarms and webhooks');
  const alarms = await alarmRows(sql, OWNER);
  const crossed = alarms.filter((alarm) => alarm.crossed);
  const triggered = alarms.filter((alarm) => alarm.status === 'triggered');
  const missed = crossed.filter((alarm) => alarm.status !== 'triggered');
  const wrong = triggered.filter((alarm) => !alarm.crossed);
  const badEvents = alarms.filter((alarm) => alarm.events !== (alarm.status === 'triggered' && alarm.notification === 'webhook' ? 1 : 0));
  check('alarms / crossed / triggered', `${alarms.length} / ${crossed.length} / ${triggered.length}`,
    missed.length === 0 && wrong.length === 0 && crossed.length > 0 && crossed.length < alarms.length,
    `alarms: ${missed.length} crossed but not triggered, ${wrong.length} triggered but not crossed, ${crossed.length} of ${alarms.length} crossed (the check needs some of each)`);
  check('alarms with a wrong number of events', badEvents.length, badEvents.length === 0,
    `alarms with a wrong number of events: ${badEvents.map((alarm) => `${alarm.id} (${alarm.status}, ${alarm.notification}): ${alarm.events}`).join(', ')}`);

  // 6. Webhook attempts: numbered 1..n in the database and at the receiver, each once.
  const deliveries = await attemptRows(sql, OWNER);
  const receipts = receiver.received.filter((receipt) => !receipt.body.test);
  const received = new Map<string, number[]>();
  for (const receipt of receipts) {
    const numbers = received.get(receipt.body.id) ?? [];
    numbers.push(Number(receipt.headers['x-service-delivery-attempt']));
    received.set(receipt.body.id, numbers);
  }
  const badRows = deliveries.filter((d) => d.outcomes.length !== d.counted || d.outcomes.some((outcome) => outcome !== 'failed' && outcome !== 'succeeded')
    || d.outcomes.filter((outcome) => outcome === 'succeeded').length > (d.status === 'succeeded' ? 1 : 0)
    || (d.status === 'succeeded' && d.outcomes.at(-1) !== 'succeeded'));
  const badReceipts = deliveries.filter((d) => !exactly(received.get(d.event_id) ?? [], 1, d.counted));
  const unknown = [...received.keys()].filter((id) => !deliveries.some((d) => d.event_id === id));
  const attempts = deliveries.reduce((sum, d) => sum + d.counted, 0);
  const retried = deliveries.filter((d) => d.counted > 1).length;
  figure('deliveries (succeeded / failed) / attempts / receipts', `${deliveries.length} (${deliveries.filter((d) => d.status === 'succeeded').length} / ${deliveries.filter((d) => d.status === 'failed').length}) / ${attempts} / ${receipts.length}`);
  check('deliveries retried', retried, retried > 0, 'no delivery was retried: the attempt check proved little');
  check('deliveries whose attempt rows are not 1..n, one outcome each', badRows.length, badRows.length === 0,
    `webhook attempts: ${badRows.map((d) => `delivery ${d.delivery_id} counts ${d.counted}, rows ${d.outcomes.join(',')}`).join('; ')}`);
  check('events whose receipts are not attempts 1..n once each', `${badReceipts.length} (unknown events ${unknown.length})`, badReceipts.length === 0 && unknown.length === 0,
    `webhook receipts: ${badReceipts.map((d) => `event ${d.event_id}: attempts ${(received.get(d.event_id) ?? []).join(',')} for ${d.counted}`).join('; ')}${unknown.length ? `; unknown events ${unknown.join(', ')}` : ''}`);
} catch (error) {
  failures.push(`the run stopped: ${(error as Error).stack ?? error}`);
} finally {
  await cleanup();
}

// ---------------------------------------------------------------------------------------------
const format = (map: Map<string, number>) => [...map.entries()].sort().map(([key, n]) => `${key}: ${n}`).join(', ') || 'none';
const rows: [string, string][] = [
  ['  database', SERVER_URL ? `server (${new URL(SERVER_URL).host})` : 'embedded'],
  ['  processes', `${APIS} API, ${WORKERS} workers (history ${HISTORY}, ${MINUTES} minutes of ticks)`],
  ['  API statuses', format(statuses)],
  ['  worker stops (SIGTERM)', workerStops || '-'],
  ...summary,
  ['  run time', `${((Date.now() - started) / 1000).toFixed(0)} s`],
];
const width = Math.max(...rows.filter(([, value]) => value !== '').map(([name]) => name.length));
process.stdout.write('\ntopology run\n');
for (const [name, value] of rows) process.stdout.write(value === '' ? `${name}\n` : `${name.padEnd(width)}  ${value}\n`);
if (notes.length > 0) process.stdout.write(`\nnotes:\n${notes.map((line) => `  - ${line}`).join('\n')}\n`);
if (failures.length > 0) process.stdout.write(`\nFAILED (${failures.length}):\n${failures.map((line) => `  - ${line}`).join('\n')}\n`);
process.stdout.write(`\n${failures.length === 0 ? 'topology: all checks passed' : 'topology: FAILED'}\n`);
process.exit(failures.length === 0 ? 0 : 1);
