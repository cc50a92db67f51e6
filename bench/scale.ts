// The minute tick and the big lists at size (issue 45): the loopback replay of BENCH_VENUES_COINS
// coins (default 300; 2 500 for the issue's size) as `make venues-replay COINS=…` serves it (its own
// process, dev/venues/serve.ts), and the service as `make start` starts it on it (its own process,
// `node bin/main.ts`, with the environment the replay prints, BENCH_SCALE_ENV's settings added, e.g.
// EXCHANGE_TIMEOUT_MS=60000; the inline worker's cron running the minute tick). The tick's phases are read
// from the service's /metrics (mdapi_exchange_tick_phase_seconds, one observation per phase a run):
// the first run (markets, catalogue, ten minutes of candles) and BENCH_SCALE_TICKS (3) minutes after
// it, median and range. Then this process, the load generator, measures GET /coins?per_page=250 and
// GET /prices with 100 slugs, one request at a time: cold (the first request after the market's data
// version moved, as a refresh moves it) and warm (the median of five after it), in
// BENCH_SCALE_ROUNDS (10) rounds, each beside the same bytes from a bare Koa process (the ceiling,
// bench/as-run/bare.ts), in alternating order; ratios per round, median and middle half. The ticks go
// on while it measures, as they do for users. Then every operation of the contract at that size
// (bench/scale-checks.ts contractAtSize), after `mdapi backfill` gave the 10 best-ranked coins 210 days of
// history from one venue (the requests look back up to 200 days). Embedded database, or a new database of the server
// BENCH_DATABASE_URL (dropped afterwards). In `make bench` (BENCH_SCALE=off skips it) or alone:
// node bench/scale.ts. BENCH_KEEP=1 keeps the service's log.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { embeddedUrl } from '../src/config.ts';
import { createSql, type Sql } from '../src/db/client.ts';
import { loadDemoContentIfEmpty } from '../src/content/demo.ts';
import { createKey } from '../src/keys.ts';
import { TICK_PHASES } from '../src/sources/exchanges/index.ts';
import { until } from '../dev/wait.ts';
import { Managed, freePort, startReplay, tail } from './chaos/processes.ts';
import { fetchRaw, printColumns, quantile, rawGet, startCeiling } from './harness.ts';
import { checkAtSize, contractAtSize, coverage, type SizeCheck } from './scale-checks.ts';

const WARM_REQUESTS = 5;
const TICK_TIMEOUT_MS = 5 * 60_000;
/** the history the contract's requests look back over (the profit-loss calculator's 200 days), and the venue it is read from */
const CONTRACT_HISTORY_DAYS = 210;
const CONTRACT_HISTORY_VENUE = 'binance';
/** the best-ranked coins it is read for: the contract's own (bitcoin, ethereum, tether) and enough for the market's sentiment readings */
const CONTRACT_HISTORY_COINS = 10;

/** BENCH_SCALE_ENV's settings (NAME=value,NAME=value) for the service */
function benchScaleEnv(): Record<string, string> {
  return Object.fromEntries((process.env.BENCH_SCALE_ENV ?? '').split(',').filter(Boolean).map((pair) => pair.split('=') as [string, string]));
}

/** The service as `make start` starts it on the replay (its own process), on the embedded database or a new database of the server; answering /healthz. */
async function startService(options: {
  root: string; registry: Set<Managed>; replayEnv: Record<string, string>; extraEnv: Record<string, string>;
  admin: Sql | null; serverUrl: string | null; database: string; say: (line: string) => void;
}) {
  const { root, registry, replayEnv, extraEnv, admin, serverUrl, database, say } = options;
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  const { DATABASE_URL: _url, DATABASE_POOLED: _pooled, ...inherited } = process.env;
  // the contract's webhook operations make endpoints on an example host, which need no lookup then
  const env: NodeJS.ProcessEnv = { ...inherited, ...replayEnv, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', ...extraEnv, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: join(root, 'data') };
  let dbUrl: string;
  if (admin) {
    await admin.unsafe(`create database ${database}`);
    const url = new URL(serverUrl!);
    url.pathname = `/${database}`;
    env.DATABASE_URL = dbUrl = url.toString();
  } else {
    const dbPort = await freePort();
    env.EMBEDDED_DB_PORT = String(dbPort);
    dbUrl = embeddedUrl(dbPort);
  }
  const service = new Managed('service', ['bin/main.ts'], env, root, registry);
  service.onUnexpectedExit = (code, signal) => say(`the service exited by itself (${signal ?? code}):\n${tail(service.log)}`);
  service.start();
  say(`the service starting as make start starts it${Object.keys(extraEnv).length ? `, with ${JSON.stringify(extraEnv)}` : ''} (log: ${service.log})`);
  await until('the service to answer /healthz', async () => {
    if (!service.running) throw new Error(`the service exited:\n${tail(service.log)}`);
    return fetch(`${api}/healthz`, { signal: AbortSignal.timeout(2_000) }).then((response) => response.status === 200, () => false);
  }, { timeoutMs: 300_000, everyMs: 500 });
  return { service, api, env, dbUrl };
}

/** The minute tick's phases from the service's /metrics: runs so far and each phase's total seconds (their sums and counts move together). */
async function scrapeTicks(api: string) {
  const text = await (await fetch(`${api}/metrics`)).text();
  const figures = new Map<string, number>();
  for (const match of text.matchAll(/^mdapi_exchange_tick_phase_seconds_(sum|count)\{phase="(\w+)"\} (\S+)$/gm)) figures.set(`${match[1]} ${match[2]}`, Number(match[3]));
  return { count: figures.get('count fetch') ?? 0, sums: Object.fromEntries(TICK_PHASES.map((phase) => [phase, figures.get(`sum ${phase}`) ?? 0])) };
}

/**
 * Streams against REST polling (issue 46): the same replay and service twice, with STREAM_CANDLES=on
 * (the holder takes the minutes from the venues' candle streams, the replay streaming its own candles,
 * Coinbase's trades aside) and off (REST polling alone). After the first minute tick, over
 * BENCH_SCALE_STREAMS_MINUTES (3) closed minutes (after BENCH_SCALE_STREAMS_WARMUP_MINUTES, 0): the delay from each minute's close to its index bar
 * (market.index_bar_delays: per venue and minute, the minute's final build with the venue's candles,
 * read a minute after the last closed), p50/p99, and each venue's REST requests per minute, counted by the
 * replay (its `requests` lines). In `make bench` after the scale run (BENCH_SCALE_STREAMS=off skips it) or
 * alone: BENCH_SCALE_MODE=streams node bench/scale.ts.
 */
export async function benchStreamsAgainstPolling(): Promise<void> {
  const coins = Number(process.env.BENCH_VENUES_COINS ?? 300);
  const minutes = Number(process.env.BENCH_SCALE_STREAMS_MINUTES ?? 3);
  // at the real size the start (every market's last ten minutes from REST, at each venue's pace) takes minutes
  const warmup = Number(process.env.BENCH_SCALE_STREAMS_WARMUP_MINUTES ?? 0);
  const serverUrl = process.env.BENCH_DATABASE_URL || null;
  const started = Date.now();
  const say = (line: string) => process.stdout.write(`[streams ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
  const results: { mode: string; bars: number; p50: number; p99: number; venues: Record<string, { p50: number; max: number }>; requests: Record<string, number>; where: string; served: string }[] = [];
  for (const mode of ['on', 'off'] as const) {
    const root = mkdtempSync(join(tmpdir(), `mdapi-bench-streams-${mode}-`));
    const registry = new Set<Managed>();
    const admin = serverUrl ? createSql({ url: serverUrl, pooled: false, embedded: false }, { max: 1 }) : null;
    const database = `mdapi_bench_streams_${mode}_${process.pid}`;
    let sql: Sql | null = null;
    try {
      const { managed: replay, served, env: replayEnv } = await startReplay(coins, root, registry, ['--requests-every', '5000']);
      say(`STREAM_CANDLES=${mode}: ${served}`);
      const { service, api, dbUrl } = await startService({ root, registry, replayEnv, extraEnv: { ...benchScaleEnv(), STREAM_CANDLES: mode }, admin, serverUrl, database, say });
      await until('the first minute tick', async () => {
        if (!service.running) throw new Error(`the service exited:\n${tail(service.log)}`);
        // a scrape the busy service drops is tried again
        return (await scrapeTicks(api).catch(() => ({ count: 0 }))).count > 0;
      }, { timeoutMs: TICK_TIMEOUT_MS, everyMs: 2_000 });
      // the measured minutes: from the next one to begin, `minutes` of them; read a minute after the last closed
      const from = Math.ceil(Date.now() / 60_000) * 60_000 + warmup * 60_000;
      const to = from + minutes * 60_000;
      say(`measuring the minutes ${new Date(from).toISOString()} to ${new Date(to).toISOString()}`);
      await new Promise((resolve) => setTimeout(resolve, to + 60_000 - Date.now()));
      if (!service.running) throw new Error(`the service exited:\n${tail(service.log)}`);
      // the replay's request counts at the window's ends (its lines every 5 s)
      const counts = readFileSync(replay.log, 'utf8').split('\n').filter((line) => line.startsWith('requests '))
        .map((line) => { const [, at, json] = line.split(' '); return { at: Number(at), requests: JSON.parse(json!) as Record<string, number> }; });
      const at = (time: number) => counts.filter((one) => one.at <= time).at(-1) ?? counts[0]!;
      const [first, last] = [at(from), at(to)];
      const span = (last.at - first.at) / 60_000;
      const requests = Object.fromEntries(Object.keys(last.requests).map((venue) => [venue, (last.requests[venue]! - (first.requests[venue] ?? 0)) / span]));
      sql = createSql({ url: dbUrl, pooled: !admin, embedded: false }, { max: 1 });
      const [delay] = await sql<{ bars: number; p50: number | null; p99: number | null; version: string }[]>`
        select count(*)::int as bars,
          percentile_cont(0.5) within group (order by d.delay_seconds)::float8 as p50,
          percentile_cont(0.99) within group (order by d.delay_seconds)::float8 as p99,
          current_setting('server_version') as version
        from market.index_bar_delays d
        where d.minute >= ${new Date(from).toISOString()} and d.minute < ${new Date(to).toISOString()}`;
      // per venue: a venue whose minutes no stream brings (MEXC) is told apart from the streamed ones
      const byVenue = await sql<{ venue: string; p50: number; max: number }[]>`
        select e.slug as venue, percentile_cont(0.5) within group (order by d.delay_seconds)::float8 as p50, max(d.delay_seconds)::float8 as max
        from market.index_bar_delays d join market.exchanges e on e.id = d.exchange_id
        where d.minute >= ${new Date(from).toISOString()} and d.minute < ${new Date(to).toISOString()}
        group by e.slug`;
      const venues = Object.fromEntries(byVenue.map((row) => [row.venue, { p50: row.p50, max: row.max }]));
      const where = `${admin ? 'database server' : 'embedded database'} (PostgreSQL ${delay!.version})`;
      results.push({ mode, bars: delay!.bars, p50: delay!.p50 ?? NaN, p99: delay!.p99 ?? NaN, venues, requests, where, served });
      say(`STREAM_CANDLES=${mode}: ${delay!.bars} venue minutes, delay p50 ${delay!.p50?.toFixed(1)} s, p99 ${delay!.p99?.toFixed(1)} s`);
    } finally {
      await Promise.all([...registry].map((managed) => managed.kill('SIGTERM', 20_000)));
      await sql?.end({ timeout: 5 });
      if (admin) {
        await admin.unsafe(`drop database if exists ${database} with (force)`).catch(() => {});
        await admin.end({ timeout: 5 });
      }
      if (process.env.BENCH_KEEP === '1') say(`kept ${root}`);
      else rmSync(root, { recursive: true, force: true });
    }
  }
  const [on, off] = results as [typeof results[number], typeof results[number]];
  console.log(`\nstreams against REST polling, ${on.where}, on the ${on.served}: ${minutes} closed minutes ${warmup ? `from ${warmup} minutes ` : ''}after the first minute tick each\n`);
  printColumns(['', 'streams (STREAM_CANDLES=on)', 'REST polling (off)'], [
    ['index bars of those minutes', String(on.bars), String(off.bars)],
    ['delay after the minute\'s close p50 s', on.p50.toFixed(1), off.p50.toFixed(1)],
    ['delay after the minute\'s close p99 s', on.p99.toFixed(1), off.p99.toFixed(1)],
    ...Object.keys(off.requests).sort().map((venue) => [`${venue} REST requests / minute`, (on.requests[venue] ?? 0).toFixed(0), off.requests[venue]!.toFixed(0)]),
    ...Object.keys({ ...on.venues, ...off.venues }).sort().map((venue) => [`${venue} delay p50 / max s`,
      on.venues[venue] ? `${on.venues[venue]!.p50.toFixed(1)} / ${on.venues[venue]!.max.toFixed(1)}` : '-',
      off.venues[venue] ? `${off.venues[venue]!.p50.toFixed(1)} / ${off.venues[venue]!.max.toFixed(1)}` : '-']),
  ]);
}

export async function benchScale(): Promise<void> {
  const coins = Number(process.env.BENCH_VENUES_COINS ?? 300);
  const ticks = Number(process.env.BENCH_SCALE_TICKS ?? 3);
  const rounds = Number(process.env.BENCH_SCALE_ROUNDS ?? 10);
  const serverUrl = process.env.BENCH_DATABASE_URL || null;
  const root = mkdtempSync(join(tmpdir(), 'mdapi-bench-scale-'));
  const registry = new Set<Managed>();
  const started = Date.now();
  const say = (line: string) => process.stdout.write(`[scale ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
  const extraEnv = benchScaleEnv();
  const { served, env: replayEnv } = await startReplay(coins, root, registry);
  say(served);
  const ceiling = await startCeiling();
  const admin = serverUrl ? createSql({ url: serverUrl, pooled: false, embedded: false }, { max: 1 }) : null;
  const database = `mdapi_bench_scale_${process.pid}`;
  let sql: Sql | null = null;
  try {
    const { service, api, env, dbUrl } = await startService({ root, registry, replayEnv, extraEnv, admin, serverUrl, database, say });
    const scrape = () => scrapeTicks(api);
    const runs: Record<string, number>[] = [];
    let last = await scrape();
    while (runs.length < 1 + ticks) {
      const before = last;
      last = await until(`tick ${runs.length + 1} of ${1 + ticks}`, async () => {
        if (!service.running) throw new Error(`the service exited:\n${tail(service.log)}`);
        const now = await scrape();
        return now.count > before.count ? now : null;
      }, { timeoutMs: TICK_TIMEOUT_MS, everyMs: 2_000 });
      const runsSeen = last.count - before.count;
      for (let i = 0; i < runsSeen; i++) runs.push(Object.fromEntries(TICK_PHASES.map((phase) => [phase, ((last.sums[phase]! - before.sums[phase]!) * 1000) / runsSeen])));
      say(`tick ${runs.length}: ${TICK_PHASES.map((phase) => `${phase} ${runs.at(-1)![phase]!.toFixed(0)} ms`).join(', ')}`);
    }

    sql = createSql({ url: dbUrl, pooled: !admin, embedded: false }, { max: 1 });
    const [size] = await sql<{ coins: number; priced: number; markets: number; venues: number; up: number; version: string }[]>`
      select (select count(*) from market.coins)::int as coins,
             (select count(*) from market.coin_state where price is not null)::int as priced,
             (select count(*) from market.venue_markets where active and instrument = 'spot')::int as markets,
             (select count(distinct exchange_id) from market.venue_markets where active)::int as venues,
             (select count(*) from market.source_health h, jsonb_each_text(h.venues) v where h.name = 'exchanges' and v.value = 'up')::int as up,
             current_setting('server_version') as version`;
    const where = `${admin ? 'database server' : 'embedded database'} (PostgreSQL ${size!.version})`;
    console.log(`\nthe minute tick as run, ${where}, on the ${served}\n` +
      `the service has ${size!.coins} coins, ${size!.priced} priced, ${size!.markets} active spot markets on ${size!.venues} venues (${size!.up} up in the last tick)\n`);
    const steady = runs.slice(1);
    const row = (label: string, pick: (run: Record<string, number>) => number) => {
      const values = steady.map(pick);
      return [label, pick(runs[0]!).toFixed(0), quantile(values, 0.5).toFixed(0), `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`];
    };
    const total = (run: Record<string, number>) => TICK_PHASES.reduce((sum, phase) => sum + run[phase]!, 0);
    printColumns(['phase', 'first run ms', `median of ${steady.length} ms`, 'range ms'], [...TICK_PHASES.map((phase) => row(phase, (run) => run[phase]!)), row('the whole tick', total)]);

    const covered = await coverage(sql);
    console.log(`\ncoins with a USD-convertible spot market (against USD, EUR, a USD stablecoin, BTC or ETH): ${covered.convertible}; ` +
      `priced ${covered.priced}, with minute bars of the last 10 minutes ${covered.minutes}, answering /indicators ${covered.indicators}` +
      `${covered.missing.length ? `; missing: ${covered.missing.join(', ')}` : ''}`);

    // the lists, cold and warm, against the same bytes from the ceiling
    await sql`insert into app.plans (name, rank, monthly_quota, requests_per_minute, per_page_cap)
              values ('bench', 100, 1000000000, 1000000000, 250) on conflict (name) do nothing`;
    const { key } = await createKey(sql, { plan: 'bench' as never, owner: 'bench-scale', scope: 'data-api' });
    const checks = await checkAtSize(api, key, sql);
    console.log(`\nthe market operations at that size, each answer checked against the service's own OpenAPI response schema and the reference's fields and types (the contract test's reviewed differences allowed):\n`);
    const table = (rows: SizeCheck[]) => printColumns(['request', 'status', 'items', 'ms', 'own schema', 'reference fields'],
      rows.map((check) => [check.path.slice(0, 70), String(check.status), String(check.items), check.ms.toFixed(0), check.problem ?? 'ok', check.reference.join('; ') || 'ok']));
    table(checks);
    const slugs = (await sql<{ slug: string }[]>`
      select c.slug from market.coins c join market.coin_state s on s.coin_id = c.id
      where s.price is not null order by s.rank nulls last, c.id limit 100`).map((coin) => coin.slug);
    const headers = { authorization: `Bearer ${key}`, 'accept-encoding': 'identity' };
    const targets = [
      { label: 'GET /coins?per_page=250', path: '/api/v1/coins?per_page=250' },
      { label: `GET /prices?slugs=<${slugs.length}>`, path: `/api/v1/prices?slugs=${slugs.join(',')}` },
    ];
    const timed = async (url: string, withKey: boolean) => {
      const begun = performance.now();
      const answer = await rawGet(url, withKey ? headers : { 'accept-encoding': 'identity' });
      if (answer.status !== 200) throw new Error(`${url}: ${answer.status} ${answer.body.toString().slice(0, 200)}`);
      return performance.now() - begun;
    };
    const median = async (count: number, call: () => Promise<number>) => {
      const values: number[] = [];
      for (let i = 0; i < count; i++) values.push(await call());
      return quantile(values, 0.5);
    };
    const rows: string[][] = [];
    for (const [index, target] of targets.entries()) {
      const url = `${api}${target.path}`;
      const answer = await fetchRaw(url, headers);
      const name = `scale${index}`;
      await ceiling.serve(name, answer);
      const figures: { cold: number; warm: number; bare: number }[] = [];
      for (let round = 0; round < rounds; round++) {
        const bare = () => median(WARM_REQUESTS, () => timed(`${ceiling.url}/${name}`, false));
        const route = async () => {
          // a data change, as the tick's refresh makes: the cached bodies of the market's routes retire
          await sql!`select app.bump_data_version('market')`;
          const cold = await timed(url, true);
          return { cold, warm: await median(WARM_REQUESTS, () => timed(url, true)) };
        };
        if (round % 2 === 0) {
          const measured = await route();
          figures.push({ ...measured, bare: await bare() });
        } else {
          const reference = await bare();
          figures.push({ ...(await route()), bare: reference });
        }
      }
      const spread = (values: number[], digits: number) => `${quantile(values, 0.5).toFixed(digits)} (${quantile(values, 0.25).toFixed(digits)}–${quantile(values, 0.75).toFixed(digits)})`;
      rows.push([
        target.label, String(answer.body.length), String(rounds),
        spread(figures.map((one) => one.cold), 1), spread(figures.map((one) => one.warm), 1), spread(figures.map((one) => one.bare), 1),
        spread(figures.map((one) => one.cold / one.bare), 1), spread(figures.map((one) => one.warm / one.bare), 2),
      ]);
      say(`measured ${target.label}`);
    }
    console.log(`\nthe lists at that size, ${where}, one request at a time from this process (a fresh connection each), ${rounds} rounds; ` +
      `cold: the first request after the market's data version moved; warm: the median of ${WARM_REQUESTS} after it; ` +
      `bare: the same bytes from a bare Koa process in the same round; median (middle half) of the rounds:\n`);
    printColumns(['route', 'bytes', 'rounds', 'cold ms', 'warm ms', 'bare ms', 'cold / bare', 'warm / bare'], rows);

    // The contract at that size, as an operator brings the service there: history first (the
    // calculators, historical prices, sentiment and indicator readings look back up to 200 days, and
    // a new install has ten minutes), with `mdapi backfill` for the 10 best-ranked coins from one venue
    // (its own process, paced as always), then the sentiment job's refresh; content, which the service
    // starts without on the venues' market (an operator imports theirs): the demo's, as make start loads it.
    const top = (await sql<{ slug: string }[]>`
      select c.slug from market.coins c join market.coin_state s on s.coin_id = c.id where s.rank is not null order by s.rank limit ${CONTRACT_HISTORY_COINS}`).map((coin) => coin.slug);
    const since = new Date(Date.now() - CONTRACT_HISTORY_DAYS * 86_400_000).toISOString().slice(0, 10);
    const backfillStarted = performance.now();
    const backfill = new Managed('backfill', ['bin/cli.ts', 'backfill', '--coins', top.join(','), '--since', since], {
      ...env, DATABASE_URL: dbUrl, DATABASE_POOLED: String(!admin), EXCHANGES: CONTRACT_HISTORY_VENUE,
      EXCHANGE_URLS: env.EXCHANGE_URLS!.split(',').filter((pair) => pair.startsWith(`${CONTRACT_HISTORY_VENUE}=`)).join(','),
    }, root, registry);
    const finished = new Promise<number | null>((resolve) => (backfill.onUnexpectedExit = (code) => resolve(code)));
    backfill.start();
    const code = await finished;
    if (code !== 0) throw new Error(`the backfill failed (${code}):\n${tail(backfill.log)}`);
    await sql`select market.refresh_sentiment(now())`;
    await loadDemoContentIfEmpty(sql);
    say(`history for the contract: ${top.length} coins since ${since} from ${CONTRACT_HISTORY_VENUE} in ${((performance.now() - backfillStarted) / 1000).toFixed(0)} s (log: ${backfill.log})`);
    const { key: proKey } = await createKey(sql, { plan: 'pro', owner: 'bench-contract', scope: 'data-api' });
    const contract = await contractAtSize(api, proKey);
    const failed = contract.filter((check) => check.problem || check.reference.length > 0);
    console.log(`\nthe contract at that size: ${contract.length} operations run as the contract test runs them on the demo data ` +
      `(dev/contract-run.ts), ${contract.length - failed.length} pass both checks${failed.length ? '; these do not:' : '.'}\n`);
    if (failed.length) table(failed);
  } finally {
    await Promise.all([...registry].map((managed) => managed.kill('SIGTERM', 20_000)));
    await sql?.end({ timeout: 5 });
    ceiling.close();
    if (admin) {
      await admin.unsafe(`drop database if exists ${database} with (force)`).catch(() => {});
      await admin.end({ timeout: 5 });
    }
    if (process.env.BENCH_KEEP === '1') say(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.env.BENCH_SCALE_MODE === 'streams') await benchStreamsAgainstPolling();
  else await benchScale();
  process.exit(0);
}
