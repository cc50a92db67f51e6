// The HTTP path of issue 16 under autocannon (16 connections, 10 s by default), every figure a ratio
// measured in this run: each route over the real app beside a bare Koa app returning a fixed body of
// the same size (the stack's ceiling), beside its SQL called directly on the same pool at the same
// concurrency and beside that call behind node:http alone; cold (response cache off) and warm;
// conditional requests; compressed bytes; and the cost of admission. autocannon fires from a worker
// thread, so the server keeps the main thread.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import Koa from 'koa';
import { z } from 'zod';
import { loadConfig, type Config } from '../src/config.ts';
import { createKey, createWidgetKey } from '../src/keys.ts';
import { silentLogger } from '../src/log.ts';
import { apiRoutes } from '../src/api/index.ts';
import { createApp } from '../src/http/app.ts';
import { completeEnvelope } from '../src/http/envelope.ts';
import { serialiseBody } from '../src/http/logos.ts';
import { API_PREFIX, defineRoute, type Deps, type RouteSpec } from '../src/http/routes.ts';
import type { Context } from 'koa';
import { served, type RunningService } from '../src/service.ts';
import { until } from '../dev/wait.ts';
import { measure, printColumns, quantile, rawGet } from './harness.ts';

const seconds = Number(process.env.BENCH_HTTP_SECONDS ?? 10);
const connections = Number(process.env.BENCH_HTTP_CONNECTIONS ?? 16);
/** Only the routes whose path contains one of these (comma-separated); `none` leaves only the admission figures. */
const onlyRoutes = process.env.BENCH_HTTP_ROUTES?.split(',').map((part) => part.trim()).filter(Boolean) ?? null;

interface Load {
  rps: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  total: number;
  /** the main thread's busy time per request, µs: the servers' share alone (autocannon runs in a worker) */
  busyUs: number;
  /** the main thread's CPU time per request, µs (busy time less the time the thread waited for a core) */
  cpuUs: number;
}

/** Seconds of load before each figure, not counted: the JIT's optimised code, as the SQL column's warm-up calls give it. */
const WARMUP_SECONDS = 1;

/**
 * One autocannon run of `duration` seconds against a path of `target`, after WARMUP_SECONDS of the
 * same load unless `warmUp` is false (any status counts: the caller checks `statuses`).
 */
async function load(target: Listening, path: string, headers: Record<string, string> = {}, { duration = seconds, warmUp = true } = {}): Promise<Load> {
  const url = `${target.url}${path}`;
  if (warmUp) {
    await autocannon({ url, connections, duration: WARMUP_SECONDS, headers, workers: 1 });
    await target.drained();
  }
  const before = performance.eventLoopUtilization();
  const cpuBefore = process.threadCpuUsage();
  const result = await autocannon({ url, connections, duration, headers, workers: 1 });
  // the requests cut off at the end finish before the next figure starts
  await target.drained();
  const busy = performance.eventLoopUtilization(before);
  const cpu = process.threadCpuUsage(cpuBefore);
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [code, stat.count ?? 0]));
  const total = Object.values(statuses).reduce((sum, count) => sum + count, 0);
  if (total === 0) throw new Error(`no answer from ${url} (${result.errors} errors, ${result.timeouts} timeouts)`);
  return {
    rps: total / result.duration, p50: result.latency.p50, p99: result.latency.p99, statuses, total,
    busyUs: (busy.active * 1000) / total, cpuUs: (cpu.user + cpu.system) / total,
  };
}

interface Listening {
  url: string;
  server: Server;
  /** resolves once no request is being handled (a handler outlives its client when autocannon stops) */
  drained(): Promise<void>;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => unknown): Promise<Listening> {
  let active = 0;
  const server = createServer((req, res) => {
    active++;
    void Promise.resolve(handler(req, res)).finally(() => active--);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const drained = async () => {
    await until(() => `the handlers to finish (${active} running)`, () => active === 0, { timeoutMs: 60_000, everyMs: 20 });
  };
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server, drained };
}

// Waits for the handlers still running, so that no query is in flight when the database closes.
async function close({ server, drained }: Listening) {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  await drained();
}

/** Runs one measurement; a failure prints its error and leaves the rest of the table. */
async function attempt<T>(what: string, run: () => Promise<T>): Promise<T | null> {
  try {
    return await run();
  } catch (error) {
    console.log(`  ${what}: failed: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
}

/**
 * The admission figures: rounds of three one-second loads (bare, public, keyed), each round's
 * difference read on its own. Admission is a few µs a request, and on a shared machine the figures
 * it is the difference of drift by more than that within a minute: adjacent seconds drift least.
 */
const ADMISSION_ROUNDS = Number(process.env.BENCH_ADMISSION_ROUNDS ?? 30);
const ADMISSION_SECONDS = 1;

const pct = (part: number, whole: number | undefined) => (whole ? `${((100 * part) / whole).toFixed(1)} %` : '—');
const ms = (value: number) => value.toFixed(1);

/** A JSON document of exactly `bytes` bytes (at least the 10 of the padding's frame). */
const jsonOfSize = (bytes: number) => `{"pad":"${'x'.repeat(Math.max(0, bytes - 10))}"}`;

export async function benchHttp(service: RunningService) {
  const { sql } = service;
  // A pro key on a pro plan without practical limits: the figures measure work, not 429s (the bench database is thrown away).
  await sql`update app.plans set monthly_quota = 1000000000, requests_per_minute = 1000000000 where name = 'pro'`;
  const { key } = await createKey(sql, { plan: 'pro', owner: 'bench-http', scope: 'data-api' });
  const auth = { authorization: `Bearer ${key}` };
  const slugs = (await sql<{ slug: string }[]>`
    select c.slug from market.coin_state s join market.coins c on c.id = s.coin_id
    where s.rank is not null order by s.rank limit 10`).map((row) => row.slug);

  // Each route beside its handler called directly, as the MCP tools call it: the route's own
  // statement with its parameters bound, and the little JS around it, without HTTP.
  const direct = handlerCall({ sql, config: service.config });
  const routes = [
    '/ping', `/prices?slugs=${slugs.join(',')}`, '/coins?per_page=100', '/coins/bitcoin',
    '/coins/bitcoin/history?interval=hourly&limit=1000', '/global', '/tickers?per_page=100',
  ].map((path) => ({ path, direct: direct(path) }));

  // cold: the response cache off; warm: the operator's RESPONSE_CACHE_MB, or the default when it is 0
  const warmMb = service.config.RESPONSE_CACHE_MB || loadConfig({}).RESPONSE_CACHE_MB;
  const appConfig = (mb: number): Config => ({ ...service.config, LOG_REQUESTS: false, RESPONSE_CACHE_MB: mb });
  const coldConfig = appConfig(0);
  const warmConfig = appConfig(warmMb);

  const cold = await listen(createApp({ sql, config: coldConfig }, { logger: silentLogger }, served).callback());
  const warm = await listen(createApp({ sql, config: warmConfig }, { logger: silentLogger }, served).callback());
  // the other freshness mode beside the configured one (strict by default: a read of the versions per batch of requests)
  const otherFreshness = warmConfig.CACHE_FRESHNESS === 'strict' ? 'notify' : 'strict';
  const warmOther = await listen(createApp({ sql, config: { ...warmConfig, CACHE_FRESHNESS: otherFreshness } }, { logger: silentLogger }, served).callback());
  let ceilingBody = '';
  const bare = new Koa();
  bare.use((ctx) => {
    ctx.type = 'application/json';
    ctx.body = ceilingBody;
  });
  const ceiling = await listen(bare.callback());
  // The route's handler behind node:http alone (no Koa, no middleware, no admission), its body
  // serialised as the app does: the most any HTTP layer on Node gets out of that SQL on this machine.
  let rawHandler: (() => Promise<unknown>) | null = null;
  const rawHttp = await listen(async (_req, res) => {
    const body = serialiseBody(completeEnvelope(await rawHandler!(), service.config), 'http://127.0.0.1');
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });

  console.log(
    `\nHTTP path (autocannon, ${connections} connections, ${seconds} s per figure; ceiling: a bare Koa app returning a fixed JSON body of the route's size; ` +
      `cold: RESPONSE_CACHE_MB=0, warm: RESPONSE_CACHE_MB=${warmMb} with CACHE_FRESHNESS=${warmConfig.CACHE_FRESHNESS}, then ${otherFreshness}; ` +
      `DATABASE_POOL_SIZE=${service.config.DATABASE_POOL_SIZE}, shared by the apps and the SQL column)\n`,
  );
  const table: string[][] = [];
  const notes: string[] = [];
  try {
    for (const route of routes) {
      if (onlyRoutes && !onlyRoutes.some((part) => route.path.includes(part))) continue;
      const path = `/api/v1${route.path}`;
      const label = `GET ${route.path.replace(/slugs=[^&]*/, 'slugs=<10>')}`;
      console.log(`${label}`);
      const size = await attempt('body size', async () => {
        const answer = await rawGet(`${cold.url}${path}`, { ...auth, 'accept-encoding': 'identity' });
        if (answer.status !== 200) throw new Error(`status ${answer.status}`);
        return answer.bytes;
      });
      if (size === null) continue;
      ceilingBody = jsonOfSize(size);
      const top = await attempt('ceiling', () => load(ceiling, '/'));
      const coldRun = await attempt('cold', () => load(cold, path, auth));
      let warmRun: Load | null = coldRun;
      if (warm) {
        warmRun = await attempt('warm', async () => {
          await rawGet(`${warm.url}${path}`, auth); // fills the cache
          return load(warm, path, auth);
        });
      }
      const other = await attempt(`warm ${otherFreshness}`, async () => {
        await rawGet(`${warmOther.url}${path}`, auth);
        return load(warmOther, path, auth);
      });
      const direct = await attempt('SQL', () => measure('sql', route.direct, { concurrency: connections, seconds }));
      rawHandler = route.direct;
      const raw = await attempt('node:http', () => load(rawHttp, '/'));
      // Conditional requests on the cache-on app (where an ETag is cheapest); the cold app when there is none.
      const target = warm ?? cold;
      const conditional = await attempt('conditional', async () => {
        const first = await rawGet(`${target.url}${path}`, auth);
        const etag = first.headers.etag;
        if (typeof etag !== 'string') return 'no ETag';
        const run = await load(target, path, { ...auth, 'if-none-match': etag });
        return `${run.rps.toFixed(0)} req/s, p99 ${ms(run.p99)} ms, 304: ${run.statuses['304'] ?? 0}/${run.total}`;
      });
      const compression = await attempt('compression', async () => {
        const sizes: string[] = [];
        for (const encoding of ['gzip', 'br']) {
          const answer = await rawGet(`${target.url}${path}`, { ...auth, 'accept-encoding': encoding });
          const used = answer.headers['content-encoding'];
          sizes.push(used === encoding ? `${encoding} ${answer.bytes} B (${pct(answer.bytes, size)})` : `${encoding}: not compressed`);
        }
        return `identity ${size} B, ${sizes.join(', ')}`;
      });
      const bad = (run: Load | null) => (run && run.statuses['200'] !== run.total ? ` (statuses ${JSON.stringify(run.statuses)})` : '');
      table.push([
        label,
        String(size),
        top ? top.rps.toFixed(0) : '—',
        coldRun ? `${coldRun.rps.toFixed(0)}${bad(coldRun)}` : '—',
        coldRun ? ms(coldRun.p50) : '—',
        coldRun ? ms(coldRun.p99) : '—',
        coldRun ? pct(coldRun.rps, top?.rps) : '—',
        direct ? direct.rps.toFixed(0) : '—',
        direct ? ms(direct.p99) : '—',
        coldRun ? pct(coldRun.rps, direct?.rps) : '—',
        raw ? pct(raw.rps, direct?.rps) : '—',
        warmRun ? `${warmRun.rps.toFixed(0)}${bad(warmRun)}` : '—',
        warmRun ? ms(warmRun.p50) : '—',
        warmRun ? ms(warmRun.p99) : '—',
        warmRun ? pct(warmRun.rps, top?.rps) : '—',
        other ? `${other.rps.toFixed(0)}${bad(other)}` : '—',
        other ? ms(other.p99) : '—',
        other ? pct(other.rps, top?.rps) : '—',
      ]);
      notes.push(`${label}\n    conditional (If-None-Match): ${conditional ?? 'failed'}\n    bytes: ${compression ?? 'failed'}`);
    }
  } finally {
    await close(cold);
    if (warm) await close(warm);
    await close(warmOther);
    await close(rawHttp);
  }

  console.log();
  printColumns(
    ['route', 'bytes', 'ceiling', 'cold req/s', 'p50', 'p99', 'of ceil.', 'SQL req/s', 'p99', 'of SQL', 'node:http', 'warm req/s', 'p50', 'p99', 'of ceil.', `${otherFreshness} req/s`, 'p99', 'of ceil.'],
    table,
  );
  console.log('\nconditional requests and compression (on the cache-on app, or the cold one without a cache):');
  for (const note of notes) console.log(`  ${note}`);

  // The widgets (/widgets/*, HTML) measured as the warm API routes are: the warm app (the same
  // response cache) beside a bare Koa route of the same bytes, and conditional requests (304).
  // Each view is admitted and counted against a widget key's quota, and its origin checked.
  if (!onlyRoutes || onlyRoutes.some((part) => 'widgets'.includes(part) || part.includes('widget'))) {
    await attempt('widgets', async () => {
      await sql`update app.plans set monthly_quota = 1000000000 where name = 'widget-pro'`;
      const widgetKey = await createWidgetKey(sql, { owner: 'bench-http', plan: 'widget-pro', name: 'bench', origins: ['https://bench.example'] });
      const framed = { referer: 'https://bench.example/', 'sec-fetch-dest': 'iframe', 'sec-fetch-site': 'cross-site' };
      const app = await listen(createApp({ sql, config: warmConfig }, { logger: silentLogger }, served).callback());
      let htmlBody = '';
      const bareHtml = new Koa();
      bareHtml.use((ctx) => {
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = htmlBody;
      });
      const htmlCeiling = await listen(bareHtml.callback());
      const rows: string[][] = [];
      try {
        for (const path of [`/widgets/ticker?coins=${slugs.slice(0, 5).join(',')}`, '/widgets/coin-card?coin=bitcoin&theme=dark&currency=eur&locale=de', '/widgets/mini-chart?coin=ethereum&range=30d']) {
          const url = `${path}&key=${widgetKey.key}`;
          const label = `GET ${path.replace(/coins=[^&]*/, 'coins=<5>')}`;
          console.log(label);
          const first = await rawGet(`${app.url}${url}`, { ...framed, 'accept-encoding': 'identity' });
          if (first.status !== 200) throw new Error(`${label}: status ${first.status}`);
          htmlBody = 'x'.repeat(first.bytes);
          const top = await load(htmlCeiling, '/');
          const warmRun = await load(app, url, framed);
          const etag = first.headers.etag as string;
          const conditional = await load(app, url, { ...framed, 'if-none-match': etag });
          rows.push([
            label, String(first.bytes), top.rps.toFixed(0),
            `${warmRun.rps.toFixed(0)}${warmRun.statuses['200'] !== warmRun.total ? ` (statuses ${JSON.stringify(warmRun.statuses)})` : ''}`,
            ms(warmRun.p50), ms(warmRun.p99), pct(warmRun.rps, top.rps),
            `${conditional.rps.toFixed(0)} (304: ${conditional.statuses['304'] ?? 0}/${conditional.total})`, pct(conditional.rps, top.rps),
          ]);
        }
      } finally {
        await close(app);
        await close(htmlCeiling);
      }
      console.log(`\nwidgets (warm, CACHE_FRESHNESS=${warmConfig.CACHE_FRESHNESS}; ceiling: a bare Koa app returning a fixed HTML body of the widget's size; each 200 a counted page view):`);
      printColumns(['widget', 'bytes', 'ceiling', 'warm req/s', 'p50', 'p99', 'of ceil.', '304 req/s', 'of ceil.'], rows);
    });
  }

  await attempt('admission overhead', async () => {
    // The same no-op route, keyed and public (a public route without a key skips admission).
    const noop = async () => ({ data: { status: 'ok' } });
    const spec = (path: string, isPublic: boolean) =>
      defineRoute({ method: 'get', path, operationId: path.slice(1), tag: 'Meta', summary: 'bench', plan: 'free', query: z.object({}), public: isPublic, handler: noop });
    const app = await listen(createApp({ sql, config: coldConfig }, { logger: silentLogger }, { routes: [spec('/bench-keyed', false), spec('/bench-public', true)] as RouteSpec[] }).callback());
    try {
      const probeKeyed = await rawGet(`${app.url}/api/v1/bench-keyed`, auth);
      const probePublic = await rawGet(`${app.url}/api/v1/bench-public`, {});
      if (probeKeyed.status !== 200 || probePublic.status !== 200) throw new Error(`statuses ${probeKeyed.status} / ${probePublic.status}`);
      ceilingBody = jsonOfSize(probePublic.bytes);
      // Warmed up once (the JIT), then rounds of bare, public and keyed, public and keyed in
      // alternating order (whichever runs second gains a few µs a request); each figure below is the
      // median over the rounds of that round's own difference, with the middle half of the rounds.
      const short = { duration: ADMISSION_SECONDS, warmUp: false };
      const loadOpen = () => load(app, '/api/v1/bench-public', {}, short);
      const loadKeyed = () => load(app, '/api/v1/bench-keyed', auth, short);
      await load(ceiling, '/');
      await loadOpen();
      await loadKeyed();
      const rounds: { top: Load; open: Load; keyed: Load }[] = [];
      for (let round = 0; round < ADMISSION_ROUNDS; round++) {
        const top = await load(ceiling, '/', {}, short);
        let open: Load, keyed: Load;
        if (round % 2 === 0) (open = await loadOpen()), (keyed = await loadKeyed());
        else (keyed = await loadKeyed()), (open = await loadOpen());
        rounds.push({ top, open, keyed });
      }
      const median = (values: number[]) => quantile(values, 0.5);
      const middle = (values: number[]) => `${quantile(values, 0.25).toFixed(1)}–${quantile(values, 0.75).toFixed(1)}`;
      const rps = (pick: (round: (typeof rounds)[number]) => Load) => median(rounds.map((round) => pick(round).rps)).toFixed(0);
      console.log(
        `\nadmission overhead (a no-op route, ${probePublic.bytes} B; ${rounds.length} rounds of ${ADMISSION_SECONDS} s loads, medians): ` +
          `bare Koa ${rps((round) => round.top)} req/s, public (no admission) ${rps((round) => round.open)} req/s, keyed ${rps((round) => round.keyed)} req/s`,
      );
      // By throughput (time per request at this concurrency), and by the server thread's own time per
      // request, which the load generator's and the database's use of the two cores moves less: busy
      // (event-loop utilisation: waiting for a core included) and CPU (its own user and system time).
      const measures = [
        ['throughput', (l: Load) => 1e6 / l.rps],
        ['busy time', (l: Load) => l.busyUs],
        ['CPU time', (l: Load) => l.cpuUs],
      ] as const;
      for (const [what, of] of measures) {
        const added = rounds.map((round) => of(round.keyed) - of(round.open));
        const share = rounds.map((round) => (100 * (of(round.keyed) - of(round.open))) / of(round.top));
        console.log(
          `admission by ${what}: bare Koa ${median(rounds.map((round) => of(round.top))).toFixed(1)} µs, public ${median(rounds.map((round) => of(round.open))).toFixed(1)} µs a request; ` +
            `admission adds ${median(added).toFixed(1)} µs (middle half ${middle(added)}) = ${median(share).toFixed(1)} % of the bare route's (middle half ${middle(share)} %)`,
        );
      }
    } finally {
      await close(app);
    }
  });
  await close(ceiling);
}


/**
 * A GET of the API (`/coins?per_page=100`) as a call of its route's handler with the query and path
 * parsed by the route's own schemas and a pro key: what the request runs besides HTTP.
 */
function handlerCall(deps: Deps) {
  const key = { id: 0, owner: 'bench-http', plan: 'pro', perPageCap: 250 } as const;
  return (path: string) => {
    const url = new URL(`http://bench.invalid${API_PREFIX}${path}`);
    const relative = url.pathname.slice(API_PREFIX.length);
    for (const route of apiRoutes as RouteSpec[]) {
      const names: string[] = [];
      const pattern = new RegExp(`^${route.path.replace(/\{(\w+)\}/g, (_, name: string) => (names.push(name), '([^/]+)'))}$`);
      const match = route.method === 'get' ? pattern.exec(relative) : null;
      if (!match) continue;
      const params = Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(match[index + 1]!)]));
      const input = {
        query: (route.query ?? z.object({})).parse(Object.fromEntries(url.searchParams)) as never,
        params: (route.params ?? z.object({})).parse(params) as never,
        body: undefined as never, key, deps, ctx: { href: url.href } as Context, routes: apiRoutes as RouteSpec[],
      };
      return () => route.handler(input);
    }
    throw new Error(`no GET route for ${path}`);
  };
}
