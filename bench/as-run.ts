// `make bench BENCH_MODE=as-run`: warm answers as users run the service. The service is started as
// `make start` starts it (its own process, `node bin/main.ts`: the inline worker, request logs on,
// the demo market on a fresh database) and, separately, with WORKER=off beside `mdapi worker`; a bare
// Koa process (bench/as-run/bare.ts) answers the same bytes; this process is the load generator
// (autocannon, 16 connections). Each figure comes from interleaved rounds, ceiling and route
// alternating (BENCH_ROUNDS of BENCH_ROUND_SECONDS each), so that the machine's swings show in the
// spread and cancel out of the median share. Phases:
//   backfill  while the demo market's first-start history is written (rounds until it is done)
//   steady    after it, every route in turn
//   tick      a load across the minute's market tick (the refresh, the versions bumped)
// Both databases: the embedded one, or a server with BENCH_DATABASE_URL (a new database per run).
//   BENCH_TOPOLOGY (inline,separate)  BENCH_PHASES (backfill,steady,tick)  BENCH_ROUNDS (5)
//   BENCH_ROUND_SECONDS (3)  BENCH_HTTP_CONNECTIONS (16)  BENCH_AS_RUN_ENV (extra settings for the
//   service, e.g. LOG_REQUESTS=false,CACHE_FRESHNESS=notify)  BENCH_KEEP=1 keeps the logs
//   BENCH_LOG_LINE=off skips the cost of a request log line (measured first)
//   BENCH_PROFILE=1: the API process runs with --cpu-prof; its busiest functions and packages are
//   printed at the end (with BENCH_PHASES=steady, the profile is of warm answers)
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { embeddedUrl } from '../src/config.ts';
import { createSql, type Sql } from '../src/db/client.ts';
import { createKey, createWidgetKey } from '../src/keys.ts';
import { sleep, until } from '../dev/wait.ts';
import { Managed, cleanUpOnSignal, freePort, tail } from './chaos/processes.ts';
import { fetchRaw, printColumns, quantile, startCeiling, type RawAnswer } from './harness.ts';

const SERVER_URL = process.env.BENCH_DATABASE_URL || null;
const TOPOLOGIES = (process.env.BENCH_TOPOLOGY ?? 'inline,separate').split(',').map((name) => name.trim()).filter((name) => name === 'inline' || name === 'separate') as Topology[];
const PHASES = new Set((process.env.BENCH_PHASES ?? 'backfill,steady,tick').split(',').map((name) => name.trim()));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_HTTP_CONNECTIONS ?? 16);
const KEEP = process.env.BENCH_KEEP === '1';
const EXTRA_ENV = Object.fromEntries((process.env.BENCH_AS_RUN_ENV ?? '').split(',').filter(Boolean).map((pair) => pair.split('=') as [string, string]));
const HISTORY_WRITTEN = /demo market: history written/;
const WIDGET_ORIGIN = 'https://shop.example';
const PROFILE = process.env.BENCH_PROFILE === '1';
const CEILING_BODY_ONLY = process.env.BENCH_CEILING === 'body';

type Topology = 'inline' | 'separate';

interface Round {
  rps: number;
  p50: number;
  p99: number;
  max: number;
  statuses: Record<string, number>;
}
interface Figure {
  topology: Topology;
  phase: string;
  route: string;
  rounds: { route: Round; ceiling: Round }[];
}

const root = mkdtempSync(join(tmpdir(), 'mdapi-as-run-'));
const registry = new Set<Managed>();
const figures: Figure[] = [];
const started = Date.now();
const say = (line: string) => process.stdout.write(`[as-run ${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s] ${line}\n`);

const { DATABASE_URL: _url, DATABASE_POOLED: _pooled, ...inherited } = process.env;
// as `make start` has it: only what a fresh checkout has, plus the ports and the data directory
const serviceEnv = { ...inherited, ...EXTRA_ENV };

// The ceiling process, for every phase of every run.
const bare = await startCeiling();
const bareUrl = bare.url;

let admin: Sql | null = SERVER_URL ? createSql({ url: SERVER_URL, pooled: false, embedded: false }, { max: 1 }) : null;
const databases: string[] = [];
let cleaning: Promise<void> | null = null;
const cleanup = () =>
  (cleaning ??= (async () => {
    await Promise.all([...registry].map((managed) => managed.kill('SIGTERM', 20_000)));
    bare.close();
    if (admin) {
      for (const name of databases) await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end({ timeout: 2 }).catch(() => {});
      admin = null;
    }
    if (KEEP) process.stdout.write(`logs kept in ${root}\n`);
    else rmSync(root, { recursive: true, force: true });
  })());
cleanUpOnSignal(cleanup);

/** One autocannon load: any status counts (the table shows them). */
async function load(url: string, headers: Record<string, string>, seconds: number): Promise<Round> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers, workers: 1 });
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [code, stat.count ?? 0]));
  const total = Object.values(statuses).reduce((sum, count) => sum + count, 0);
  return { rps: total / result.duration, p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max, statuses };
}

/** The ceiling answers the same bytes on the wire (BENCH_CEILING=body: the body and its type only, as this bench did first). */
const setCeiling = (name: string, answer: RawAnswer) => bare.serve(name, answer, CEILING_BODY_ONLY);

interface Target {
  label: string;
  path: string;
  headers: Record<string, string>;
}

/** A round: ceiling then route, or route then ceiling (alternating), on the bytes the route gives now. */
async function round(api: string, target: Target, index: number, seconds = ROUND_SECONDS): Promise<{ route: Round; ceiling: Round }> {
  const answer = await fetchRaw(`${api}${target.path}`, target.headers);
  const name = `r${Buffer.from(target.label).toString('hex').slice(0, 40)}`;
  await setCeiling(name, answer);
  const runRoute = () => load(`${api}${target.path}`, target.headers, seconds);
  const runCeiling = () => load(`${bareUrl}/${name}`, {}, seconds);
  if (index % 2 === 0) {
    const ceiling = await runCeiling();
    return { ceiling, route: await runRoute() };
  }
  const route = await runRoute();
  return { route, ceiling: await runCeiling() };
}

async function run(topology: Topology) {
  const dir = join(root, topology);
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  let dbUrl: string;
  let pooled: boolean;
  const env: Record<string, string | undefined> = { ...serviceEnv, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: join(dir, 'data') };
  if (SERVER_URL) {
    const name = `mdapi_as_run_${topology}_${process.pid}`;
    await admin!.unsafe(`create database ${name}`);
    databases.push(name);
    const url = new URL(SERVER_URL);
    url.pathname = `/${name}`;
    dbUrl = url.toString();
    pooled = false;
    env.DATABASE_URL = dbUrl;
  } else {
    const dbPort = await freePort();
    env.EMBEDDED_DB_PORT = String(dbPort);
    dbUrl = embeddedUrl(dbPort);
    pooled = true;
  }
  if (topology === 'separate') env.WORKER = 'off';
  const profileDir = join(dir, 'profile');
  const apiProcess = new Managed(`api-${topology}`, [...(PROFILE ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []), 'bin/main.ts'], env, dir, registry);
  apiProcess.onUnexpectedExit = (code, signal) => say(`the API exited by itself (${signal ?? code}):\n${tail(apiProcess.log)}`);
  apiProcess.start();
  say(`${topology}: the service starting as make start starts it${topology === 'separate' ? ' (WORKER=off), with mdapi worker' : ''}; logs in ${dir}`);
  await until('the API to answer /healthz', async () => {
    if (!apiProcess.running) throw new Error(`the API exited:\n${tail(apiProcess.log)}`);
    return fetch(`${api}/healthz`, { signal: AbortSignal.timeout(2_000) }).then((response) => response.status === 200, () => false);
  }, { timeoutMs: 180_000, everyMs: 200 });
  let historyLog = apiProcess.log;
  if (topology === 'separate') {
    const worker = new Managed('worker', ['bin/cli.ts', 'worker'], { ...serviceEnv, DATABASE_URL: dbUrl, DATABASE_POOLED: String(pooled), DATA_DIR: join(dir, 'data') }, dir, registry);
    worker.start();
    historyLog = worker.log;
  }
  const historyWritten = () => HISTORY_WRITTEN.test(readFileSync(historyLog, 'utf8'));

  // a plan without practical limits, so that the figures measure work, not 429s
  const sql = createSql({ url: dbUrl, pooled, embedded: false }, { max: 1 });
  await sql`insert into app.plans (name, rank, monthly_quota, requests_per_minute, per_page_cap)
            values ('bench', 100, 1000000000, 1000000000, 250) on conflict (name) do nothing`;
  const { key } = await createKey(sql, { plan: 'bench' as never, owner: 'bench-as-run', scope: 'data-api' });
  await sql`update app.plans set monthly_quota = 1000000000 where name = 'widget-pro'`;
  const widget = await createWidgetKey(sql, { owner: 'bench-as-run', plan: 'widget-pro', name: 'bench', origins: [WIDGET_ORIGIN] });
  const slugs = await until('the catalogue', async () => {
    const rows = await sql<{ slug: string }[]>`select slug from market.coins order by id limit 10`;
    return rows.length === 10 ? rows.map((row) => row.slug) : null;
  }, { timeoutMs: 180_000, everyMs: 500 });
  await sql.end({ timeout: 5 });

  const auth = { authorization: `Bearer ${key}` };
  const targets: Target[] = [
    { label: '/prices?slugs=<10>', path: `/api/v1/prices?slugs=${slugs.join(',')}`, headers: auth },
    { label: '/coins/bitcoin', path: '/api/v1/coins/bitcoin', headers: auth },
    { label: '/coins?per_page=100', path: '/api/v1/coins?per_page=100', headers: auth },
    { label: '/global', path: '/api/v1/global', headers: auth },
    { label: '/tickers?per_page=100', path: '/api/v1/tickers?per_page=100', headers: auth },
    { label: 'widget coin-card', path: `/widgets/coin-card?coin=bitcoin&key=${widget.key}`, headers: { referer: `${WIDGET_ORIGIN}/`, 'sec-fetch-dest': 'iframe', 'sec-fetch-site': 'cross-site' } },
  ];
  const figure = (phase: string, target: Target) => {
    let found = figures.find((one) => one.topology === topology && one.phase === phase && one.route === target.label);
    if (!found) figures.push((found = { topology, phase, route: target.label, rounds: [] }));
    return found;
  };

  if (PHASES.has('backfill')) {
    // every route in turn, a round each, until the history is written
    let index = 0;
    const backfillStart = Date.now();
    while (!historyWritten()) {
      const target = targets[index % targets.length]!;
      figure('backfill', target).rounds.push(await round(api, target, Math.floor(index / targets.length), 2));
      index++;
      if (Date.now() - backfillStart > 30 * 60_000) throw new Error('the history was not written in 30 minutes');
    }
    say(`${topology}: history written after ${((Date.now() - backfillStart) / 1000).toFixed(0)} s of load (${index} rounds)`);
  } else {
    await until('the demo history', historyWritten, { timeoutMs: 30 * 60_000, everyMs: 1000 });
  }

  if (PHASES.has('steady')) {
    await sleep(5_000);
    for (const target of targets) {
      await load(`${api}${target.path}`, target.headers, 1); // warm: the JIT, the cache entry
      for (let index = 0; index < ROUNDS; index++) figure('steady', target).rounds.push(await round(api, target, index));
      say(`${topology}: steady ${target.label}`);
    }
  }

  if (PHASES.has('tick')) {
    // a load from a second before the minute (the tick's cron) to five after, then its ceiling
    for (const target of [targets[0]!, targets[3]!]) {
      const toMinute = 60_000 - (Date.now() % 60_000);
      await sleep(toMinute > 2_000 ? toMinute - 1_000 : toMinute + 59_000);
      const route = await load(`${api}${target.path}`, target.headers, 6);
      const answer = await fetchRaw(`${api}${target.path}`, target.headers);
      await setCeiling('tick', answer);
      figure('tick', target).rounds.push({ route, ceiling: await load(`${bareUrl}/tick`, {}, 6) });
      say(`${topology}: across a tick ${target.label}`);
    }
  }

  for (const managed of [...registry]) {
    await managed.kill('SIGTERM', 20_000);
    registry.delete(managed);
  }
  if (PROFILE) printProfile(topology, profileDir);
}

/** The API process's CPU profile: self time by function, and by package or source file. */
function printProfile(topology: Topology, dir: string) {
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  if (!file) return say(`${topology}: no CPU profile in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
    nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const functions = new Map<string, number>();
  const places = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const frame = byId.get(id)!;
    const us = profile.timeDeltas[index] ?? 0;
    total += us;
    const url = frame.url.replace(/^file:\/\//, '').replace(`${process.cwd()}/`, '');
    const place = frame.url === '' ? `(${frame.functionName || 'native'})` : url.startsWith('node_modules/') ? url.split('/').slice(1, url.split('/')[1]!.startsWith('@') ? 3 : 2).join('/') : url.startsWith('node:') ? 'node internals' : url;
    const name = `${frame.functionName || '(anonymous)'} ${url ? `${url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    places.set(place, (places.get(place) ?? 0) + us);
  });
  const top = (map: Map<string, number>, count: number) =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, count).map(([name, us]) => [name, `${(us / 1000).toFixed(0)} ms`, `${((100 * us) / total).toFixed(1)} %`]);
  console.log(`\n${topology}: the API process's CPU profile (${(total / 1e6).toFixed(1)} s sampled, ${join(dir, file)}), self time by package or file:`);
  printColumns(['package or file', 'self', 'share'], top(places, 15));
  console.log(`\nby function:`);
  printColumns(['function', 'self', 'share'], top(functions, 25));
}


/**
 * What a request log line costs the process writing it (bench/as-run/log-line.ts, stderr to a file):
 * JSON and pretty as the service writes them now and as it did before (synchronously, formatted on the
 * main thread), in interleaved rounds.
 */
function logLineCost() {
  const formats = ['json-sync', 'json', 'pretty-sync', 'pretty'] as const;
  const costs = new Map<string, number[]>(formats.map((format) => [format, []]));
  for (let index = 0; index < ROUNDS; index++) {
    for (const format of index % 2 === 0 ? formats : [...formats].reverse()) {
      const out = openSync(join(root, `log-line-${format}.log`), 'w');
      const result = spawnSync(process.execPath, ['--disable-warning=ExperimentalWarning', new URL('./as-run/log-line.ts', import.meta.url).pathname, format, '20000'], { stdio: ['ignore', 'pipe', out], encoding: 'utf8' });
      closeSync(out);
      costs.get(format)!.push((JSON.parse(result.stdout) as { handedUs: number }).handedUs);
    }
  }
  console.log(`\na request log line (20 000 lines a round, ${ROUNDS} rounds; µs of the writing thread per line, median and middle half):`);
  printColumns(['destination', 'µs/line', '(middle half)'], formats.map((format) => {
    const values = costs.get(format)!;
    return [{
      'json-sync': 'JSON, written synchronously (before)', json: 'JSON, written asynchronously (default off a terminal)',
      'pretty-sync': 'pretty, formatted on the main thread (before)', pretty: 'pretty, formatted in a worker thread (default on a terminal)',
    }[format], quantile(values, 0.5).toFixed(1), `${quantile(values, 0.25).toFixed(1)}–${quantile(values, 0.75).toFixed(1)}`];
  }));
}

try {
  if (process.env.BENCH_LOG_LINE !== 'off') logLineCost();
  for (const topology of TOPOLOGIES) await run(topology);
} finally {
  await cleanup();
}

const database = SERVER_URL ? 'database server' : 'embedded database';
console.log(`\nwarm answers as run (${database}; ${CONNECTIONS} connections; rounds of ${ROUND_SECONDS} s, ceiling and route alternating; ` +
  `share = route req/s / the bare Koa process's req/s for the same bytes in the same round; middle half of the rounds in brackets)` +
  (Object.keys(EXTRA_ENV).length ? `; service settings ${JSON.stringify(EXTRA_ENV)}` : '') + ':');
printColumns(
  ['topology', 'phase', 'route', 'rounds', 'req/s', 'ceiling', 'share', '(middle half)', 'p50 ms', 'p99 ms', 'worst p99', 'statuses'],
  figures.map(({ topology, phase, route, rounds }) => {
    const shares = rounds.map((one) => (100 * one.route.rps) / one.ceiling.rps);
    const statuses: Record<string, number> = {};
    for (const one of rounds) for (const [code, count] of Object.entries(one.route.statuses)) statuses[code] = (statuses[code] ?? 0) + count;
    return [
      topology, phase, route, String(rounds.length),
      quantile(rounds.map((one) => one.route.rps), 0.5).toFixed(0), quantile(rounds.map((one) => one.ceiling.rps), 0.5).toFixed(0),
      `${quantile(shares, 0.5).toFixed(1)} %`, `${quantile(shares, 0.25).toFixed(1)}–${quantile(shares, 0.75).toFixed(1)}`,
      quantile(rounds.map((one) => one.route.p50), 0.5).toFixed(1), quantile(rounds.map((one) => one.route.p99), 0.5).toFixed(1),
      Math.max(...rounds.map((one) => one.route.p99)).toFixed(0),
      Object.entries(statuses).map(([code, count]) => `${code}:${count}`).join(' '),
    ];
  }),
);
process.exit(0);
