// `make chaos`: fault injection on loopback. The embedded database (`mdapi db`), the API
// (`node bin/main.ts`, WORKER=off) and a job worker (`mdapi worker`, demo market) run as separate
// processes on a fresh DATA_DIR; for CHAOS_ROUNDS rounds one of them is killed at a random moment
// (first during the demo backfill, then during ticks) and started again, while API requests keep
// coming and alarms wait for the market to cross them. Once the market has settled it checks: no
// missing minute in the 1-minute bars, every aggregate equal to a recomputation from the bars, every
// crossed alarm triggered exactly once and no other, every webhook event delivered with one event id,
// every alarm e-mail accepted by a loopback SMTP server under one Message-ID.
// With CHAOS_MARKET=exchanges (issue 46) the market is the venues' loopback replay (dev/venues/serve.ts,
// CHAOS_COINS coins, a process of its own) with streams on: the worker runs the minute job (STREAM=off)
// and two `mdapi stream` holders share the venues' ticker and candle streams; the holders are killed
// too, and the checks add every venue market's minutes (no minute missing between a market's first and
// last candle, none written twice).
// Prints the figures; exits 1 when a check fails or a request got a 5xx other than 503.
//   CHAOS_ROUNDS (6)  CHAOS_SEED (random, printed)  CHAOS_HISTORY ('6 days')  CHAOS_KEEP=1 keeps the logs
//   CHAOS_MARKET (simulated | exchanges)  CHAOS_COINS (40, exchanges)
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureCatalogue } from '../src/sources/simulated/index.ts';
import { embeddedUrl } from '../src/config.ts';
import { createSql } from '../src/db/client.ts';
import { portAnswers } from '../src/db/embedded/launcher.ts';
import { migrate } from '../src/db/migrate.ts';
import { createKey, setOwnerEmail } from '../src/keys.ts';
import { refreshCoinAggregates } from '../src/sources/aggregates.ts';
import { withReservedQuery } from '../src/db/query.ts';
import { seededRandom } from '../dev/random.ts';
import { startReceiver } from '../dev/webhook-receiver.ts';
import { startMailbox } from '../dev/mailbox.ts';
import { poll, sleep, until } from '../dev/wait.ts';
import { createAlarms } from './chaos/alarms.ts';
import { aggregateFigures, alarmRows, barFigures, emailRows, eventRows, recordBarVersions, settled, venueBarFigures } from './chaos/checks.ts';
import { freePort, isAlive, Managed, parentOf, startReplay, tail, cleanUpOnSignal } from './chaos/processes.ts';

const MARKET = process.env.CHAOS_MARKET === 'exchanges' ? 'exchanges' : 'simulated';
const COINS = Number(process.env.CHAOS_COINS ?? 40);
const ROUNDS = Number(process.env.CHAOS_ROUNDS ?? (MARKET === 'exchanges' ? 8 : 6));
const SEED = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const HISTORY = process.env.CHAOS_HISTORY ?? '6 days';
const KEEP = process.env.CHAOS_KEEP === '1' || process.env.CHAOS_KEEP === 'true';
const HEARTBEAT_MS = 1_000;
const OWNER = 'chaos';
/** A process of the service is expected back (answering) within this after it was started again. */
const RECOVERY_MS = 90_000;
/** The market has this long to catch up and the webhooks to be delivered once the kills are over. */
const SETTLE_MS = 180_000;

// ---------------------------------------------------------------------------------------------
// The reproducible part of a run: which process, which signal, how long to wait. Timing-dependent
// choices (which request to send) draw from another generator so as not to shift this sequence.
const random = seededRandom(SEED);
const trafficRandom = seededRandom(SEED ^ 0x5bd1e995);
const between = (low: number, high: number, next = random) => Math.round(low + next() * (high - low));
const pick = <T>(items: readonly T[], next = random): T => items[Math.floor(next() * items.length)]!;
function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

// ---------------------------------------------------------------------------------------------
const started = Date.now();
const root = mkdtempSync(join(tmpdir(), 'mdapi-chaos-'));
const dataDir = join(root, 'data');
const logDir = join(root, 'logs');
mkdirSync(logDir, { recursive: true });
const dbPort = await freePort();
const apiPort = await freePort();
const dbUrl = embeddedUrl(dbPort);
const apiUrl = `http://127.0.0.1:${apiPort}`;

const findings: string[] = [];
const failures: string[] = [];
/** worth knowing, not a failure */
const notes: string[] = [];
const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
const kills = new Map<string, number>();
const restarts = new Map<string, number>();
const statuses = new Map<string, number>();
const roundLog: string[] = [];
const say = (line: string) => process.stdout.write(`[chaos ${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);

// the alarms' e-mails go to a real SMTP server on loopback (the one the tests use)
const mailbox = await startMailbox();
const { DATABASE_URL: _url, DATABASE_POOLED: _pooled, ...inherited } = process.env;
const common = {
  ...inherited, LOG_LEVEL: 'info', LOG_REQUESTS: 'false', LOG_FORMAT: 'json', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  SMTP_URL: mailbox.url, MAIL_FROM: 'Chaos <chaos@example.com>',
};
const client = { ...common, DATABASE_URL: dbUrl, DATABASE_POOLED: 'true' };
const registry = new Set<Managed>();
// the venues' replay, and its environment for every process of the service (exchanges only)
const replay = MARKET === 'exchanges' ? await startReplay(COINS, logDir, registry) : null;
const marketEnv: Record<string, string> = replay ? { ...replay.env, STREAM: 'off' } : { MARKET_SOURCE: 'simulated' };
const db = new Managed('db', ['bin/cli.ts', 'db'], { ...common, DATA_DIR: dataDir, EMBEDDED_DB_PORT: String(dbPort) }, logDir, registry);
const api = new Managed('api', ['bin/main.ts'], { ...client, HOST: '127.0.0.1', PORT: String(apiPort), WORKER: 'off', MARKET_SOURCE: 'none' }, logDir, registry);
const worker = new Managed(
  'worker',
  ['bin/cli.ts', 'worker'],
  { ...client, ...marketEnv, WORKER_HEARTBEAT_MS: String(HEARTBEAT_MS), WEBHOOK_RETRY_BASE_MS: '200', WEBHOOK_TIMEOUT_MS: '5000', EMAIL_RETRY_BASE_MS: '200' },
  logDir,
  registry,
);
// two stream holders sharing the venues, on a short lease so that a killed one's venues move within seconds
const holders = replay
  ? ['holder-a', 'holder-b'].map((name) => new Managed(name, ['bin/cli.ts', 'stream'], { ...client, ...replay.env, STREAM_LEASE_SECONDS: '5' }, logDir, registry))
  : [];
// A process that ends without a kill of ours (a crash) is a finding; it is started again so
// that the run goes on.
for (const [managed, restart] of [
  [db, () => startDatabase()],
  [api, () => startApi()],
  [worker, () => startWorkerProcess()],
  ...holders.map((holder) => [holder, () => startHolder(holder)] as const),
] as const) {
  managed.onUnexpectedExit = (code, signal) => {
    if (cleaning) return;
    findings.push(`${managed.name} exited by itself (${signal ?? `code ${code}`}) at ${((Date.now() - started) / 1000).toFixed(1)} s:\n${tail(managed.log, 8)}`);
    count(restarts, `${managed.name} (after a crash)`);
    setTimeout(() => restart().catch((error: Error) => failures.push(`starting ${managed.name} again after its crash: ${error.message}`)), 1_000);
  };
}
/** Every database process (server.ts) seen, so that none outlives the run. */
const serverPids = new Set<number>();

const sql = createSql({ url: dbUrl, pooled: true, embedded: false }, { max: 3 });
const receiver = await startReceiver(204);

// ---------------------------------------------------------------------------------------------
let cleaning: Promise<void> | null = null;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    traffic.running = false;
    extraTicks.running = false;
    for (const managed of registry) managed.signal('SIGKILL');
    for (const pid of serverPids) if (isServer(pid)) process.kill(pid, 'SIGKILL');
    await Promise.all([...registry].map((managed) => managed.exited()));
    await until('the database processes to end', () => ![...serverPids].some(isServer), { timeoutMs: 10_000, everyMs: 200 }).catch(() => {});
    await receiver.close().catch(() => {});
    await mailbox.stop().catch(() => {});
    await sql.end({ timeout: 1 }).catch(() => {});
    if (KEEP || failures.length > 0 || findings.length > 0) process.stdout.write(`logs and data kept in ${root}\n`);
    else rmSync(root, { recursive: true, force: true });
  })();
  return cleaning;
}
cleanUpOnSignal(cleanup);

function isServer(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('embedded/server.ts');
  } catch {
    return false;
  }
}

/** The database process `mdapi db` supervises now: its child running src/db/embedded/server.ts. */
function serverPid(): number | null {
  if (db.pid === null) return null;
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || parentOf(pid) !== db.pid || !isServer(pid)) continue;
    serverPids.add(pid);
    return pid;
  }
  return null;
}

const answers = async (probe: () => Promise<unknown>) => {
  try {
    await probe();
    return true;
  } catch {
    return false;
  }
};
const databaseAnswers = () => answers(() => sql`select 1`);

/** Retries a statement while the database is away (a kill of ours), up to `timeoutMs`. */
async function retried<T>(what: string, work: () => Promise<T>, timeoutMs = RECOVERY_MS): Promise<T> {
  let failure: Error | null = null;
  const attempt = async () => {
    try {
      return { value: await work() };
    } catch (error) {
      failure = error as Error;
      return null;
    }
  };
  const done = await poll(attempt, Boolean, { timeoutMs, everyMs: 500 });
  if (!done) throw new Error(`${what}: ${failure!.message}`);
  return done.value;
}

async function startDatabase(): Promise<number> {
  await until('the database port to be free', async () => !(await portAnswers(dbPort)), { timeoutMs: 30_000, everyMs: 200 });
  db.start();
  const pid = await until(
    'the embedded database to listen',
    async () => {
      if (!db.running) throw new Error(`mdapi db exited (${db.child?.exitCode ?? db.child?.signalCode}):\n${tail(db.log)}`);
      return (await portAnswers(dbPort)) && serverPid();
    },
    { timeoutMs: RECOVERY_MS, everyMs: 200 },
  );
  await until('the embedded database to answer', databaseAnswers, { timeoutMs: RECOVERY_MS, everyMs: 200 });
  return pid;
}

async function startApi(): Promise<void> {
  api.start();
  await until(
    'the API to answer /healthz',
    async () => {
      if (!api.running) throw new Error(`the API exited (${api.child?.exitCode ?? api.child?.signalCode}):\n${tail(api.log)}`);
      return answers(async () => {
        const response = await fetch(`${apiUrl}/healthz`, { signal: AbortSignal.timeout(2_000) });
        if (response.status !== 200) throw new Error(String(response.status));
      });
    },
    { timeoutMs: RECOVERY_MS, everyMs: 200 },
  );
}

async function startWorkerProcess(): Promise<void> {
  worker.start();
  const pid = worker.pid!;
  // It is up once its pool beats (worker ids are per pool, the process column is host:pid).
  await until(
    'the worker to beat',
    async () => {
      if (!worker.running) throw new Error(`the worker exited (${worker.child?.exitCode ?? worker.child?.signalCode}):\n${tail(worker.log)}`);
      return answers(async () => {
        const [row] = await sql`select 1 from app.worker_heartbeats where process like ${`%:${pid}`} and beat_at > now() - interval '5 seconds'`;
        if (!row) throw new Error('no beat yet');
      });
    },
    { timeoutMs: RECOVERY_MS, everyMs: 200 },
  );
}

/** A stream holder is up once it has announced itself (market.stream_holders; its id is host:pid:nonce). */
async function startHolder(holder: Managed): Promise<void> {
  holder.start();
  const pid = holder.pid!;
  await until(
    `${holder.name} to announce itself`,
    async () => {
      if (!holder.running) throw new Error(`${holder.name} exited (${holder.child?.exitCode ?? holder.child?.signalCode}):\n${tail(holder.log)}`);
      return answers(async () => {
        const [row] = await sql`select 1 from market.stream_holders where holder like ${`%:${pid}:%`} and expires_at > now()`;
        if (!row) throw new Error('not yet');
      });
    },
    { timeoutMs: RECOVERY_MS, everyMs: 200 },
  );
}

// ---------------------------------------------------------------------------------------------
// API traffic throughout the run: a few requests a second, every status counted. A 503 is expected
// while the database is away; any other 5xx is a finding.
/** 5xx answers other than 503, by status and by whether the database was away */
const serverErrors = new Map<string, { count: number; routes: Set<string>; sample: string }>();
const traffic = { running: true, databaseAway: false, outages: 0, apiDown: false, loop: Promise.resolve() };
let apiKey = '';
let slugs: string[] = ['bitcoin'];
/** A request of the traffic: [route, path]. */
const nextRequest = (): [string, string] => {
  const slug = pick(slugs, trafficRandom);
  const [route, query] = pick(
    [
      ['/api/v1/ping', ''],
      ['/api/v1/coins', '?per_page=10'],
      ['/api/v1/coins/{slug}', ''],
      ['/api/v1/coins/{slug}/history', '?interval=minutely&limit=60'],
      ['/api/v1/coins/{slug}/history', '?interval=hourly&limit=48'],
      ['/api/v1/prices/{slug}', ''],
      ['/api/v1/coins/gainers', ''],
      ['/api/v1/alarms', '?per_page=5'],
      ['/api/v1/webhooks', ''],
    ] as const,
    trafficRandom,
  );
  return [route, `${route.replace('{slug}', slug)}${query}`];
};
function startTraffic() {
  traffic.loop = (async () => {
    while (traffic.running) {
      const [route, path] = nextRequest();
      const outage = traffic.outages;
      const awayAtStart = traffic.databaseAway || !db.running;
      try {
        const response = await fetch(`${apiUrl}${path}`, { headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(15_000) });
        const text = await response.text();
        // a request in flight when the database was killed counts as one made while it was away
        const away = awayAtStart || traffic.databaseAway || traffic.outages !== outage;
        count(statuses, `${response.status}${response.status >= 500 ? (away ? ' (database away)' : ' (all up)') : ''}`);
        if (response.status >= 500 && response.status !== 503) {
          const group = `${response.status} ${away ? 'while the database was away' : 'with every process up'}`;
          const seen = serverErrors.get(group) ?? { count: 0, routes: new Set<string>(), sample: text.slice(0, 300) };
          seen.count++;
          seen.routes.add(route);
          serverErrors.set(group, seen);
        }
        if (response.status === 503 && !text.includes('"error"')) findings.push(`503 without the error envelope on GET ${path}: ${text.slice(0, 200)}`);
      } catch (error) {
        const how = (error as Error).name === 'TimeoutError' ? 'timed out' : 'refused';
        count(statuses, traffic.apiDown || !api.running ? 'no answer (API down)' : `no answer (API up, ${how})`);
      }
      await sleep(between(150, 450, trafficRandom));
    }
  })();
}

/** Queues simulate_market ticks more often than the crontab's one a minute. */
const extraTicks = { running: false, queued: 0, loop: Promise.resolve() };
// the venues' minute job runs once a minute by the crontab: a kill aimed at a tick waits for it
const queueTick = () => (MARKET === 'simulated' ? sql`select graphile_worker.add_job('simulate_market', '{}', queue_name => 'market')` : Promise.resolve());
function startExtraTicks() {
  extraTicks.running = true;
  extraTicks.loop = (async () => {
    while (extraTicks.running) {
      if (await answers(queueTick)) extraTicks.queued++;
      await sleep(4_000);
    }
  })();
}

async function http(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${apiUrl}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: response.status, json: await response.json().catch(() => null) };
}

// ---------------------------------------------------------------------------------------------
type Target = 'worker' | 'api' | 'database' | 'holder';
// backfilling: the demo market's history being written, or the venues' first run (no price yet)
const marketState = async () => {
  const [row] = await sql<{ backfilling: boolean; running: boolean }[]>`
    select case when ${MARKET} = 'simulated'
        then coalesce((select covered_until < date_trunc('minute', now()) - interval '2 minutes' or settings ? 'history_until'
          from market.data_sources where name = 'simulated'), true)
        else not exists (select from market.coin_state where price is not null) end as backfilling,
      exists (select 1 from graphile_worker._private_job_queues where queue_name = 'market' and locked_by is not null) as running`;
  return row!;
};
const lastCompleteMinute = () => new Date(Math.floor(Date.now() / 60_000) * 60_000 - 60_000);

// Each target's ways to die, taken in turn (the order drawn per run), so that six rounds see them all.
const variants: Record<Target, string[]> = {
  // SIGINT twice: an impatient Ctrl-C cuts the graceful stop short
  worker: shuffled(['SIGKILL', 'SIGINT', 'SIGINT twice']),
  api: ['SIGKILL'],
  database: shuffled(['server SIGKILL', 'mdapi db SIGKILL']),
  holder: shuffled(['SIGKILL', 'SIGTERM']),
};
const taken: Record<Target, number> = { worker: 0, api: 0, database: 0, holder: 0 };
const nextVariant = (target: Target) => variants[target][taken[target]++ % variants[target].length]!;

async function round(index: number, phase: 'backfill' | 'tick', target: Target) {
  const variant = nextVariant(target);
  const wait = phase === 'backfill' ? between(300, 2_500) : between(4_000, 15_000);
  // In the tick phase, most kills aim at a tick in flight rather than at the quiet between two.
  const aimAtTick = phase === 'tick' && target !== 'api' && random() < 0.6;
  const restartAfter = between(200, 2_500);
  if (phase === 'backfill') {
    // the moment counts from the first backfill piece in flight (the worker may just be taking the queue back)
    await until('the backfill to run', async () => {
      const state = await marketState().catch(() => null);
      return state && (!state.backfilling || state.running);
    }, { timeoutMs: 60_000, everyMs: 50 }).catch(() => {});
  }
  await sleep(wait);
  if (aimAtTick) {
    await answers(queueTick);
    await until('a tick to run', async () => (await marketState().catch(() => null))?.running, { timeoutMs: MARKET === 'simulated' ? 20_000 : 65_000, everyMs: 50 }).catch(() => {});
    await sleep(between(0, 400));
  }
  const state = await marketState().catch(() => null);
  const during = state ? `${state.backfilling ? 'backfill' : 'ticks'}${state.running ? ', market job running' : ''}` : 'database unreachable';
  const label = `${target} ${variant}`;
  count(kills, label);
  const killedAt = Date.now();
  let note = '';

  if (target === 'worker') {
    if (variant === 'SIGINT twice') {
      worker.signal('SIGINT');
      await sleep(between(50, 500));
    }
    const { tookMs, forced } = await worker.kill(variant === 'SIGKILL' ? 'SIGKILL' : 'SIGINT', 15_000);
    if (variant !== 'SIGKILL') {
      note = `exited ${tookMs} ms after the ${variant === 'SIGINT' ? '' : 'second '}SIGINT`;
      if (forced) findings.push(`round ${index}: the worker ignored ${variant} for 15 s during ${during} (it was SIGKILLed)`);
      // the bound worker_crash.test.ts holds the worker to
      else if (variant === 'SIGINT' && tookMs > 10_000) findings.push(`round ${index}: the worker took ${tookMs} ms to exit after SIGINT during ${during}`);
      else if (variant === 'SIGINT' && worker.child?.exitCode !== 0) findings.push(`round ${index}: the worker exited with ${worker.child?.exitCode} after SIGINT`);
    }
    await sleep(restartAfter);
    await startWorkerProcess();
    count(restarts, 'worker (by the run)');
  } else if (target === 'holder') {
    const holder = pick(holders);
    const { tookMs, forced } = await holder.kill(variant as NodeJS.Signals, 15_000);
    note = `${holder.name} ${variant === 'SIGKILL' ? 'killed' : `stopped in ${tookMs} ms`}`;
    if (forced) findings.push(`round ${index}: ${holder.name} ignored SIGTERM for 15 s (it was SIGKILLed)`);
    await sleep(restartAfter);
    await startHolder(holder);
    count(restarts, 'holder (by the run)');
  } else if (target === 'api') {
    traffic.apiDown = true;
    await api.kill('SIGKILL');
    await sleep(restartAfter);
    await startApi();
    traffic.apiDown = false;
    count(restarts, 'api (by the run)');
  } else if (variant === 'server SIGKILL') {
    const pid = serverPid() ?? (await until('the database process', serverPid, { timeoutMs: 30_000, everyMs: 200 }));
    traffic.databaseAway = true;
    traffic.outages++;
    process.kill(pid, 'SIGKILL');
    const next = await until('the supervisor to start the database again', () => {
      const now = serverPid();
      return now !== null && now !== pid ? now : null;
    }, { timeoutMs: RECOVERY_MS, everyMs: 200 });
    await until('the database to answer again', databaseAnswers, { timeoutMs: RECOVERY_MS, everyMs: 200 });
    traffic.databaseAway = false;
    note = `supervisor restarted it as pid ${next} in ${Date.now() - killedAt} ms`;
    count(restarts, 'database (by its supervisor)');
  } else {
    const pid = serverPid();
    traffic.databaseAway = true;
    traffic.outages++;
    await db.kill('SIGKILL');
    // The database process notices its launcher is gone and stops by itself.
    const gone = await until('the orphaned database process to stop', () => pid === null || !isAlive(pid), { timeoutMs: 20_000, everyMs: 200 }).catch(() => false);
    if (!gone) {
      findings.push(`round ${index}: the database process outlived its killed launcher by 20 s (SIGKILLed by the run)`);
      process.kill(pid!, 'SIGKILL');
    }
    note = `orphaned database process stopped in ${Date.now() - killedAt} ms`;
    await sleep(restartAfter);
    await startDatabase();
    traffic.databaseAway = false;
    count(restarts, 'database (mdapi db, by the run)');
  }

  // Back to service: the API answers an authenticated request again (through the database).
  await until(
    'the API to serve again',
    () => answers(async () => {
      const response = await fetch(`${apiUrl}/api/v1/ping`, { headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(5_000) });
      if (response.status !== 200) throw new Error(String(response.status));
    }),
    { timeoutMs: RECOVERY_MS, everyMs: 200 },
  );
  const line = `round ${index} (${phase}): ${label} during ${during}${aimAtTick ? ' (aimed at a tick)' : ''}; back in ${Date.now() - killedAt} ms${note ? `; ${note}` : ''}`;
  roundLog.push(line);
  say(line);
}

// ---------------------------------------------------------------------------------------------
const summary: [string, string][] = [];
const figure = (name: string, value: string | number, ok = true) => summary.push([`${ok ? ' ' : '!'} ${name}`, String(value)]);

try {
  say(`seed ${SEED}, ${ROUNDS} rounds, history ${HISTORY}, data and logs in ${root}`);
  const dbStarted = Date.now();
  await startDatabase();
  say(`embedded database on port ${dbPort} (${Date.now() - dbStarted} ms)`);
  await migrate(sql);
  // the demo market's coins and history; the venues' market brings its own (the worker's first run)
  if (MARKET === 'simulated') {
    await withReservedQuery(sql, (query) => ensureCatalogue(query));
    await sql`update market.data_sources set settings = settings || jsonb_build_object('history', ${HISTORY}::text) where name = 'simulated'`;
  }
  ({ key: apiKey } = await createKey(sql, { plan: 'pro', owner: OWNER, scope: 'data-api' }));
  await setOwnerEmail(sql, OWNER, 'chaos@example.com', true);
  await sql`insert into app.alarm_inventory (owner, balance) values (${OWNER}, 1000)
            on conflict (owner) do update set balance = 1000`;
  say(`migrated${MARKET === 'simulated' ? ', catalogue loaded' : ''}, key created`);

  await startApi();
  await startWorkerProcess();
  for (const holder of holders) await startHolder(holder);
  say(`API on ${apiUrl}, worker beating every ${HEARTBEAT_MS} ms${replay ? `, ${holders.length} stream holders on the ${replay.served}` : ''}; backfill under way`);
  startTraffic();

  // Which process each round kills: the worker first (the backfill's lock is what froze the
  // market), then every target in turn, in a shuffled order per cycle.
  const all: Target[] = MARKET === 'exchanges' ? ['worker', 'api', 'database', 'holder'] : ['worker', 'api', 'database'];
  const targets: Target[] = ['worker', ...shuffled(all.filter((target) => target !== 'worker'))];
  while (targets.length < ROUNDS) targets.push(...shuffled(all));
  const backfillRounds = Math.min(ROUNDS, Math.max(1, Math.round(ROUNDS / 3)));

  for (let i = 0; i < backfillRounds; i++) await round(i + 1, 'backfill', targets[i]!);

  const backfilled = Date.now();
  await until('the backfill to end and the prices to be set', async () =>
    answers(async () => {
      const [row] = MARKET === 'simulated'
        ? await sql`select 1 from market.data_sources d where d.name = 'simulated'
            and d.covered_until >= date_trunc('minute', now()) - interval '1 minute'
            and exists (select 1 from market.coin_state where price is not null)`
        : await sql`select 1 where exists (select 1 from market.coin_state where price is not null)`;
      if (!row) throw new Error('not yet');
    }), { timeoutMs: 300_000, everyMs: 500 });
  say(`backfill done (${Date.now() - backfilled} ms after the last backfill round)`);

  const endpoint = await retried('register the webhook endpoint', async () => {
    const answer = await http('POST', '/webhooks', { url: receiver.url, events: ['alarm.triggered'] });
    if (answer.status !== 201) throw new Error(`${answer.status} ${JSON.stringify(answer.json)}`);
    return answer.json.data as { id: number };
  });
  say(`webhook endpoint ${endpoint.id} -> ${receiver.url}`);
  await retried('record the bars\' versions', () => recordBarVersions(sql));
  const { created, refused, unexpected, slugs: priced } = await createAlarms(sql, {
    post: (body) => http('POST', '/alarms', body),
    random,
    name: OWNER,
    retry: retried,
  });
  slugs = priced;
  failures.push(...unexpected);
  say(`${created.length} alarms created (${refused} refused by the instant-trigger guard)`);

  if (MARKET === 'simulated') startExtraTicks();
  for (let i = backfillRounds; i < ROUNDS; i++) {
    if (i === backfillRounds || random() < 0.5) receiver.reply(503, 204); // one failed delivery to retry
    await round(i + 1, 'tick', targets[i]!);
  }
  // Leave a minute for the market to cross alarms after the last kill.
  const quiet = Math.max(0, 60_000 - between(0, 20_000));
  say(`kills done; ${Math.round(quiet / 1000)} s of quiet ticks`);
  await sleep(quiet);
  extraTicks.running = false;
  await extraTicks.loop;

  // Settle: the market at the last complete minute, evaluated, nothing left to deliver; then the
  // worker stops (gracefully), so that no tick moves the figures while they are read.
  let through = lastCompleteMinute();
  let settledAt = 0;
  for (let attempt = 1; attempt <= 3 && !settledAt; attempt++) {
    through = lastCompleteMinute();
    const rest = await until('the market to settle', async () => {
      const state = await settled(sql, through, MARKET).catch(() => null);
      return state && state.caughtUp && state.evaluated && state.pendingDeliveries === 0 ? state : null;
    }, { timeoutMs: SETTLE_MS, everyMs: 500 }).catch((error: Error) => {
      failures.push(`${error.message} (through ${through.toISOString()})`);
      return null;
    });
    if (!rest) break;
    // the holders write candles and index bars too: stopped with the worker
    await Promise.all([worker, ...holders].map((managed) => managed.kill('SIGTERM')));
    const after = await settled(sql, through, MARKET);
    if (after.evaluated && after.pendingDeliveries === 0) settledAt = Date.now();
    else {
      await startWorkerProcess();
      for (const holder of holders) await startHolder(holder);
    }
  }
  if (!settledAt && !failures.some((line) => line.includes('settle'))) failures.push('the market and the webhooks did not settle in 3 tries');
  traffic.running = false;
  await traffic.loop;
  if (settledAt) say(`settled through ${through.toISOString()}; worker stopped for the checks`);

  // 1. No missing minute.
  const bars = await barFigures(sql, through, MARKET);
  figure('coins with bars', bars.coins);
  figure('1-minute bars', bars.bars);
  figure('minutes missing inside the bars', bars.missing, bars.missing === 0);
  figure(`trading coins behind ${through.toISOString().slice(11, 16)} UTC`, `${bars.lagging} of ${bars.live}`, bars.lagging === 0);
  if (bars.missing > 0) failures.push(`${bars.missing} minutes missing between first and last bars`);
  if (bars.lagging > 0) failures.push(`${bars.lagging} trading coins have no bar at ${through.toISOString()}`);
  if (MARKET === 'exchanges') {
    // every venue market's candles: from its first to its last minute, none missing (the primary key makes two impossible)
    const venues = await venueBarFigures(sql);
    figure('venue markets with candles / candles (of them streamed)', `${venues.markets} / ${venues.candles} (${venues.streamed})`, venues.streamed > 0);
    figure('minutes missing inside the venue markets\' candles', venues.missing, venues.missing === 0);
    if (venues.missing > 0) failures.push(`${venues.missing} minutes missing inside venue markets' candles, e.g.\n    ${venues.examples.join('\n    ')}`);
    if (venues.streamed === 0) failures.push('no candle came from a stream: the run did not test the streams');
  }

  // 2. Aggregates: as served, then after a refresh over the whole window (the policies run every
  // few minutes; the refresh is what the design relies on to make them exact).
  const served = await aggregateFigures(sql);
  const [span] = await sql<{ start: Date; end: Date }[]>`select min(time) as start, max(time) + interval '1 minute' as "end" from market.coin_bars_1m`;
  await withReservedQuery(sql, (query) => refreshCoinAggregates(query, span!.start.toISOString(), span!.end.toISOString()));
  const refreshed = await aggregateFigures(sql);
  for (const [view, after] of Object.entries(refreshed)) {
    const before = served[view]!;
    figure(`${view} buckets compared / mismatched`, `${after.compared} / ${after.mismatched} (as served before the refresh: ${before.mismatched})`, after.mismatched === 0);
    if (after.mismatched > 0) failures.push(`${view}: ${after.mismatched} buckets differ from the bars, e.g.\n    ${after.examples.join('\n    ')}`);
    if (before.mismatched > 0) notes.push(`${view} served ${before.mismatched} stale buckets before an explicit refresh, e.g.\n    ${before.examples.join('\n    ')}`);
  }

  // 3. Alarms: triggered once when a final bar crossed; never unless a bar as served did (a minute's
  // first build, before its late candles, is served and compared: a trigger on it stands when the
  // minute is built again lower).
  const alarms = await alarmRows(sql, OWNER);
  const crossed = alarms.filter((alarm) => alarm.crossed);
  const triggered = alarms.filter((alarm) => alarm.status === 'triggered');
  const missed = crossed.filter((alarm) => alarm.status !== 'triggered');
  const wrong = triggered.filter((alarm) => !alarm.crossed && !alarm.served);
  const onServed = triggered.filter((alarm) => !alarm.crossed && alarm.served);
  const badEvents = alarms.filter((alarm) => alarm.events !== (alarm.status === 'triggered' && alarm.notification === 'webhook' ? 1 : 0));
  figure('alarms (refused by the guard)', `${alarms.length} (${refused})`);
  figure('alarms crossed / triggered', `${crossed.length} / ${triggered.length}`, missed.length === 0 && wrong.length === 0);
  figure('alarms crossed, not triggered / triggered, not crossed', `${missed.length} / ${wrong.length}`, missed.length === 0 && wrong.length === 0);
  figure('alarms triggered by a bar as served, its final build short of the target', onServed.length);
  figure('alarms with a wrong number of events', badEvents.length, badEvents.length === 0);
  for (const alarm of missed) failures.push(`alarm ${alarm.id} (${alarm.coin} ${alarm.direction} ${alarm.target}) crossed but is ${alarm.status}`);
  for (const alarm of wrong) failures.push(`alarm ${alarm.id} (${alarm.coin} ${alarm.direction} ${alarm.target}) triggered without a bar, as served or final, reaching its target`);
  for (const alarm of badEvents) failures.push(`alarm ${alarm.id} (${alarm.status}, ${alarm.notification}) has ${alarm.events} alarm.triggered events`);
  if (crossed.length === 0) failures.push('no alarm crossed during the run: the alarm check proved nothing');
  if (crossed.length === alarms.length) failures.push('every alarm crossed: the check never saw an alarm that must stay quiet');

  // 4. Webhooks: every event delivered, one event id per event.
  const events = await eventRows(sql, OWNER);
  const eventIds = new Set(events.map((event) => event.id));
  const receipts = receiver.received.filter((receipt) => !receipt.body.test);
  const seen = new Map<string, number>();
  const idsByAlarm = new Map<number, Set<string>>();
  let headerMismatches = 0;
  for (const receipt of receipts) {
    const id = receipt.body.id;
    if (receipt.headers['x-service-event-id'] !== id) headerMismatches++;
    seen.set(id, (seen.get(id) ?? 0) + 1);
    const alarmId = Number((receipt.body.data.alarm as { id: number }).id);
    if (!idsByAlarm.has(alarmId)) idsByAlarm.set(alarmId, new Set());
    idsByAlarm.get(alarmId)!.add(id);
  }
  const undelivered = events.filter((event) => !seen.has(event.id) || event.succeeded < event.deliveries);
  const unknown = [...seen.keys()].filter((id) => !eventIds.has(id));
  const splitEvents = [...idsByAlarm.entries()].filter(([, ids]) => ids.size > 1);
  const redeliveries = receipts.length - seen.size;
  figure('webhook events / receipts / redeliveries', `${events.length} / ${receipts.length} / ${redeliveries}`);
  figure('events not delivered', undelivered.length, undelivered.length === 0);
  figure('receipts of unknown events / header id != body id', `${unknown.length} / ${headerMismatches}`, unknown.length === 0 && headerMismatches === 0);
  figure('alarms received under several event ids', splitEvents.length, splitEvents.length === 0);
  for (const event of undelivered) failures.push(`event ${event.id} (alarm ${event.alarm_id}): ${seen.get(event.id) ?? 0} receipts, ${event.succeeded}/${event.deliveries} deliveries succeeded`);
  for (const id of unknown) failures.push(`the receiver got event ${id}, which app.webhook_events does not have`);
  if (headerMismatches > 0) failures.push(`${headerMismatches} receipts whose X-Service-Event-Id differs from the body id`);
  for (const [alarmId, ids] of splitEvents) failures.push(`alarm ${alarmId} arrived under ${ids.size} event ids: ${[...ids].join(', ')}`);

  // 5. E-mails: one message per triggered e-mail alarm, delivered; a send the worker died in may
  // reach the mailbox twice, under the same Message-ID.
  const emails = await emailRows(sql, OWNER);
  const byMessageId = new Map<string, number>();
  for (const mail of mailbox.accepted) {
    const id = /^<([^@>]+)@/.exec(mail.headers['message-id'] ?? '')?.[1] ?? '';
    byMessageId.set(id, (byMessageId.get(id) ?? 0) + 1);
  }
  const emailAlarms = triggered.filter((alarm) => alarm.notification === 'email');
  const mailsByAlarm = new Map<number, number>();
  for (const email of emails) mailsByAlarm.set(email.alarm_id, (mailsByAlarm.get(email.alarm_id) ?? 0) + 1);
  const wrongMails = alarms.filter((alarm) => (mailsByAlarm.get(alarm.id) ?? 0) !== (alarm.status === 'triggered' && alarm.notification === 'email' ? 1 : 0));
  const unsent = emails.filter((email) => email.status !== 'delivered' || !byMessageId.has(email.id));
  const strangers = [...byMessageId.keys()].filter((id) => !emails.some((email) => email.id === id));
  figure('e-mail alarms triggered / messages / received (twice)', `${emailAlarms.length} / ${emails.length} / ${byMessageId.size} (${[...byMessageId.values()].filter((n) => n > 1).length})`);
  figure('alarms with a wrong number of e-mails / e-mails not delivered / unknown', `${wrongMails.length} / ${unsent.length} / ${strangers.length}`,
    wrongMails.length === 0 && unsent.length === 0 && strangers.length === 0);
  for (const alarm of wrongMails) failures.push(`alarm ${alarm.id} (${alarm.status}, ${alarm.notification}) has ${mailsByAlarm.get(alarm.id) ?? 0} e-mails`);
  for (const email of unsent) failures.push(`e-mail ${email.id} (alarm ${email.alarm_id}) is ${email.status}, received ${byMessageId.get(email.id) ?? 0} times`);
  for (const id of strangers) failures.push(`the mailbox got Message-ID ${id}, which app.email_messages does not have`);
} catch (error) {
  failures.push(`the run stopped: ${(error as Error).stack ?? error}`);
} finally {
  traffic.running = false;
  extraTicks.running = false;
  await traffic.loop;
  for (const [group, seen] of serverErrors) {
    findings.unshift(`${seen.count} x ${group}, on ${[...seen.routes].join(', ')}: ${seen.sample}`);
  }
  await cleanup();
}

// ---------------------------------------------------------------------------------------------
const format = (map: Map<string, number>) => [...map.entries()].sort().map(([key, n]) => `${key}: ${n}`).join(', ') || 'none';
const head: [string, string][] = [
  ['  seed / rounds', `${SEED} / ${ROUNDS}`],
  ['  kills', format(kills)],
  ['  restarts', format(restarts)],
  ['  extra ticks queued', String(extraTicks.queued)],
  ['  API statuses', format(statuses)],
];
const rows = [...head, ...summary, ['  run time', `${((Date.now() - started) / 1000).toFixed(0)} s`] as [string, string]];
const width = Math.max(...rows.map(([name]) => name.length));
process.stdout.write(`\nchaos run\n${roundLog.map((line) => `  ${line}`).join('\n')}\n\n`);
for (const [name, value] of rows) process.stdout.write(`${name.padEnd(width)}  ${value}\n`);
if (notes.length > 0) process.stdout.write(`\nnotes:\n${notes.map((line) => `  - ${line}`).join('\n')}\n`);
if (findings.length > 0) process.stdout.write(`\nfindings (${findings.length}):\n${[...new Set(findings)].map((line) => `  - ${line}`).join('\n')}\n`);
if (failures.length > 0) process.stdout.write(`\nFAILED (${failures.length}):\n${failures.map((line) => `  - ${line}`).join('\n')}\n`);
process.stdout.write(`\n${failures.length === 0 && findings.length === 0 ? 'chaos: all checks passed' : 'chaos: FAILED'} (CHAOS_SEED=${SEED} CHAOS_ROUNDS=${ROUNDS} to repeat the sequence)\n`);
process.exit(failures.length === 0 && findings.length === 0 ? 0 : 1);
