// Live streams at scale (issue 35): one API process, started as a process of its own on the bench's
// database, holding BENCH_STREAM_CONNECTIONS (10 000) concurrent SSE subscribers of one coin: memory
// per connection (the process's RSS delta / connections) and the time from a live price's write
// (its row and NOTIFY, as the stream holder writes them) to its arrival at every subscriber
// (p50/p99/max over all of them, BENCH_STREAM_ROUNDS rounds) — beside a bare node:http server, also
// a process of its own, holding as many connections and writing the same event to all of them.
// Each process may open 20 000 files here (`ulimit -n`); a larger count raises the soft limit of
// the processes it starts where the hard limit allows.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { createServer, type ServerResponse } from 'node:http';
import type { RunningService } from '../src/service.ts';
import { createKey } from '../src/keys.ts';
import { freePort } from './chaos/processes.ts';
import { poll, sleep, until } from '../dev/wait.ts';

const ROOT = new URL('../', import.meta.url).pathname;
const PRICE_EVENT = /event: price\ndata: [^\n]*"price":"(\d+\.\d+)"/g;

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

function spawnProcess(args: string[], env: NodeJS.ProcessEnv, files: number): ChildProcess {
  // the soft open-files limit of the child, raised as far as the hard one allows
  const command = `ulimit -n ${files} 2>/dev/null || ulimit -n hard 2>/dev/null; exec "${process.execPath}" --disable-warning=ExperimentalWarning ${args.join(' ')}`;
  return spawn('sh', ['-c', command], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
}

const waitFor = (url: string, ms = 60_000) =>
  until(`${url} to answer`, () => fetch(url).then((response) => response.ok, () => false), { timeoutMs: ms, everyMs: 200 });

/** A subscriber's connection: the raw bytes of its stream, watched for the round's price. */
interface Conn {
  socket: Socket;
  text: string;
  arrived: Map<string, number>;
}

function openConnections(port: number, path: string, headers: string, count: number, parallel = 100): Promise<Conn[]> {
  const conns: Conn[] = [];
  let next = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const conn: Conn = { socket, text: '', arrived: new Map() };
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        const now = performance.now();
        conn.text += chunk;
        for (const match of conn.text.matchAll(PRICE_EVENT)) if (!conn.arrived.has(match[1]!)) conn.arrived.set(match[1]!, now);
        // the connection is open once its first event (the snapshot) arrived
        if (/\n\n/.test(conn.text)) resolve();
        if (conn.text.length > 4096) conn.text = conn.text.slice(-1024);
      });
      socket.on('error', reject);
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n`);
      conns.push(conn);
    });
  const worker = async () => {
    while (next < count) {
      next++;
      await one();
    }
  };
  return Promise.all(Array.from({ length: parallel }, worker)).then(() => conns);
}

function percentiles(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
  return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1)! };
}

/** Publishes `rounds` prices and measures each one's arrival at every connection. */
async function fanOut(conns: Conn[], rounds: number, publish: (price: string) => Promise<void>) {
  const latencies: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const price = `${1000 + round}.5`;
    const started = performance.now();
    await publish(price);
    await poll(() => conns.every((conn) => conn.arrived.has(price)), Boolean, { timeoutMs: 30_000, everyMs: 5 });
    const missing = conns.filter((conn) => !conn.arrived.has(price)).length;
    if (missing) throw new Error(`round ${round}: ${missing} of ${conns.length} subscribers never got the price`);
    for (const conn of conns) latencies.push(conn.arrived.get(price)! - started);
    // the live index changes a coin at most once a second
    await sleep(1_100);
  }
  return percentiles(latencies);
}

const row = (name: string, rssDelta: number, count: number, figures: { p50: number; p99: number; max: number }) =>
  `${name.padEnd(34)} ${(rssDelta / count / 1024).toFixed(1).padStart(8)} KiB ${figures.p50.toFixed(0).padStart(8)} ms ${figures.p99.toFixed(0).padStart(8)} ms ${figures.max.toFixed(0).padStart(8)} ms`;

export async function benchStreams(service: RunningService) {
  const count = Number(process.env.BENCH_STREAM_CONNECTIONS ?? 10_000);
  const rounds = Number(process.env.BENCH_STREAM_ROUNDS ?? 5);
  const files = count * 2 + 1_000;
  const { sql } = service;
  const [coin] = await sql<{ id: number }[]>`
    insert into market.coins (slug, symbol, name, type, source) values ('bench-live', 'BLIVE', 'Bench live coin', 'coin', 'exchanges')
    on conflict (slug) do update set name = excluded.name returning id`;
  const setPrice = async (price: string) => {
    await sql.begin(async (tx) => {
      const [written] = await tx`
        insert into market.live_prices as l (coin_id, price, venues, at, version)
        values (${coin!.id}, ${price}::numeric, 3, now(), nextval('market.live_price_version'))
        on conflict (coin_id) do update set price = excluded.price, at = excluded.at, version = excluded.version
        returning l.version::text as v`;
      await tx`select pg_notify('live_prices', ${written!.v as string})`;
    });
  };
  await setPrice('1000.5');
  const { key } = await createKey(sql, { plan: 'bench' as never, owner: 'bench-streams', scope: 'data-api' });
  const results: string[] = [];

  // the API, a process of its own on the same database
  const apiPort = await freePort();
  const api = spawnProcess(['bin/main.ts'], {
    ...process.env, DATABASE_URL: service.config.database.url, PORT: String(apiPort), HOST: '127.0.0.1', WORKER: 'off', STREAM: 'off',
    LOG_LEVEL: 'warn', LOG_REQUESTS: 'false', STREAM_CONNECTIONS: `bench=${count}`, STREAM_HEARTBEAT_MS: '300000',
  }, files);
  try {
    await waitFor(`http://127.0.0.1:${apiPort}/healthz`);
    const path = '/api/v1/stream/prices?slugs=bench-live';
    const headers = `Authorization: Bearer ${key}\r\n`;
    // one stream first: what a running process with one subscriber takes
    const [first] = await openConnections(apiPort, path, headers, 1, 1);
    await sleep(500);
    const before = rssOf(api.pid!);
    const opening = performance.now();
    const conns = [first!, ...await openConnections(apiPort, path, headers, count - 1)];
    const openedMs = performance.now() - opening;
    await sleep(1_000);
    const rss = rssOf(api.pid!) - before;
    const figures = await fanOut(conns, rounds, setPrice);
    results.push(row(`API process (SSE, ${count} streams)`, rss, count, figures));
    console.log(`  opened ${count} SSE streams in ${(openedMs / 1000).toFixed(1)} s (admission, slot claim and snapshot each)`);
    for (const conn of conns) conn.socket.destroy();
  } finally {
    api.kill('SIGTERM');
    await new Promise((resolve) => api.once('exit', resolve));
  }

  // a bare node:http server, a process of its own: the same event written to every response it holds
  const barePort = await freePort();
  const bare = spawnProcess(['bench/streams.ts', 'bare', String(barePort)], process.env, files);
  try {
    await waitFor(`http://127.0.0.1:${barePort}/ready`);
    const [first] = await openConnections(barePort, '/stream', '', 1, 1);
    await sleep(500);
    const before = rssOf(bare.pid!);
    const conns = [first!, ...await openConnections(barePort, '/stream', '', count - 1)];
    await sleep(1_000);
    const rss = rssOf(bare.pid!) - before;
    const figures = await fanOut(conns, rounds, async (price) => void (await fetch(`http://127.0.0.1:${barePort}/publish?price=${price}`)).arrayBuffer());
    results.push(row(`bare node:http (${count} streams)`, rss, count, figures));
    for (const conn of conns) conn.socket.destroy();
  } finally {
    bare.kill('SIGTERM');
    await new Promise((resolve) => bare.once('exit', resolve));
  }
  console.log(`\nLive streams: ${count} concurrent SSE subscribers of one coin, ${rounds} price changes, write → arrival at every subscriber\n`);
  console.log(`${'server'.padEnd(34)} ${'per conn'.padStart(12)} ${'p50'.padStart(11)} ${'p99'.padStart(11)} ${'max'.padStart(11)}`);
  for (const line of results) console.log(line);
}

/** The bare server: holds every /stream response open and writes each published price to all of them. */
function bareServer(port: number) {
  const held = new Set<ServerResponse>();
  let version = 0;
  createServer((req, res) => {
    if (req.url === '/ready') return res.end('ok');
    if (req.url === '/stream') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
      res.write(`event: snapshot\ndata: {}\n\n`);
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    const price = new URL(req.url ?? '/', 'http://x').searchParams.get('price');
    const event = `id: ${++version}\nevent: price\ndata: ${JSON.stringify({ id: 1, slug: 'bench-live', symbol: 'BLIVE', price, currency: 'USD', at: new Date().toISOString() })}\n\n`;
    for (const response of held) response.write(event);
    res.end('ok');
  }).listen(port, '127.0.0.1');
}

if (import.meta.main && process.argv[2] === 'bare') bareServer(Number(process.argv[3]));

/**
 * Venue → subscriber on the loopback replay (issue 43): the service as it runs — a stream holder
 * (`mdapi stream`, MARKET_SOURCE=exchanges) and an API process, each a process of its own — reading
 * a replayed venue's ticker stream (binance's format, its price sent every 100 ms as the replay
 * does), and BENCH_LIVE_SUBSCRIBERS (50) SSE subscribers opened from this process. BENCH_LIVE_CHANGES
 * (40) price changes, 0.6–1.8 s apart (some within a second of the last publication, as a market
 * moves): the time from the venue's change to its arrival at every subscriber, p50/p99/max.
 */
export async function benchLiveLatency(service: RunningService) {
  const subscribers = Number(process.env.BENCH_LIVE_SUBSCRIBERS ?? 50);
  const changes = Number(process.env.BENCH_LIVE_CHANGES ?? 40);
  const { sql } = service;
  const { startVenueReplay } = await import('../dev/venues/replay.ts');
  const { serveVenueStreams } = await import('../dev/venues/streams.ts');
  const replay = await startVenueReplay({
    coins: [{ symbol: 'BLV', price: 60000, volumeUsd: 3e10, volatility: 0.01 }, { symbol: 'USDT', price: 1, volumeUsd: 5e10, volatility: 0.01 }],
    venues: { binance: { markets: ['BLV/USDT'] } },
  });
  const streams = serveVenueStreams(replay);
  let price = 60000;
  streams.setPrice('binance', 'BLV/USDT', String(price));
  // a coin and market of their own: the bench's other venues and coins are left as they are
  const [coin] = await sql<{ id: number }[]>`
    insert into market.coins (slug, symbol, name, type, source) values ('bench-blv', 'BLV', 'Bench venue coin', 'coin', 'exchanges')
    on conflict (slug) do update set name = excluded.name returning id`;
  const [quote] = await sql<{ id: number }[]>`
    insert into market.coins (slug, symbol, name, type, source, peg) values ('bench-usdt', 'BUSDT', 'Bench stablecoin', 'token', 'exchanges', 'USD')
    on conflict (slug) do update set peg = excluded.peg returning id`;
  await sql`select market.load_exchange_venues('[{"slug": "binance", "name": "Binance"}]'::jsonb)`;
  await sql`insert into market.venue_markets (exchange_id, symbol, exchange_symbol, base, quote, base_coin_id, quote_coin_id)
    select e.id, 'BLV/USDT', 'BLVUSDT', 'BLV', 'USDT', ${coin!.id}, ${quote!.id} from market.exchanges e where e.slug = 'binance'
    on conflict do nothing`;
  const { key } = await createKey(sql, { plan: 'bench' as never, owner: 'bench-live', scope: 'data-api' });
  const env = { ...process.env, DATABASE_URL: service.config.database.url, LOG_LEVEL: 'warn', LOG_REQUESTS: 'false' };
  const holder = spawnProcess(['bin/cli.ts', 'stream'], {
    ...env, MARKET_SOURCE: 'exchanges', EXCHANGES: 'binance', EXCHANGE_URLS: `binance=${replay.baseUrl('binance')}`, STREAM_LEASE_SECONDS: '5',
  }, 1_000);
  const apiPort = await freePort();
  const api = spawnProcess(['bin/main.ts'], {
    ...env, PORT: String(apiPort), HOST: '127.0.0.1', WORKER: 'off', STREAM: 'off', STREAM_CONNECTIONS: `bench=${subscribers}`,
  }, subscribers * 2 + 1_000);
  const arrivals: { at: number; price: number }[][] = [];
  const sockets: Socket[] = [];
  try {
    await waitFor(`http://127.0.0.1:${apiPort}/healthz`);
    for (let i = 0; i < subscribers; i++) {
      const seen: { at: number; price: number }[] = [];
      arrivals.push(seen);
      const socket = connect(apiPort, '127.0.0.1');
      sockets.push(socket);
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        const now = performance.now();
        text += chunk;
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          const match = /^event: price\ndata: .*"price":"([\d.]+)"/m.exec(block);
          if (match) seen.push({ at: now, price: Number(match[1]) });
        }
      });
      socket.write(`GET /api/v1/stream/prices?slugs=bench-blv HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    }
    // the holder has the lease, the venue resynchronised and streaming: a first live price reached everyone
    await until('a live price at every subscriber', () => {
      if (arrivals.every((seen) => seen.length > 0)) return true;
      streams.setPrice('binance', 'BLV/USDT', String((price += 1)));
      return false;
    }, { timeoutMs: 90_000, everyMs: 1_500 });
    const latencies: number[] = [];
    for (let change = 0; change < changes; change++) {
      await sleep(600 + Math.random() * 1_200);
      const before = Math.max(...arrivals.map((seen) => seen.at(-1)!.price));
      price += 10;
      const set = performance.now();
      streams.setPrice('binance', 'BLV/USDT', String(price));
      const arrival = (seen: { at: number; price: number }[]) => seen.find((event) => event.at >= set && event.price > before);
      await poll(() => arrivals.every(arrival), Boolean, { timeoutMs: 10_000, everyMs: 5 });
      for (const seen of arrivals) {
        const event = arrival(seen);
        if (!event) throw new Error(`change ${change + 1}: a subscriber never got it`);
        latencies.push(event.at - set);
      }
    }
    const figures = percentiles(latencies);
    console.log(`\nLive prices, venue → subscriber on the replay: ${changes} changes of a replayed binance ticker stream (sent every 100 ms), 0.6–1.8 s apart, ${subscribers} SSE subscribers; holder and API processes of their own\n`);
    console.log(`${'venue change → arrival'.padEnd(34)} ${'p50'.padStart(11)} ${'p99'.padStart(11)} ${'max'.padStart(11)}`);
    console.log(`${'(every subscriber, every change)'.padEnd(34)} ${figures.p50.toFixed(0).padStart(8)} ms ${figures.p99.toFixed(0).padStart(8)} ms ${figures.max.toFixed(0).padStart(8)} ms`);
  } finally {
    for (const socket of sockets) socket.destroy();
    for (const child of [api, holder]) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    streams.close();
    await replay.close();
    await sql`delete from market.venue_markets where symbol = 'BLV/USDT'`;
  }
}

// alone: node bench/streams.ts live (a fresh embedded database)
if (import.meta.main && process.argv[2] === 'live') {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { loadConfig } = await import('../src/config.ts');
  const { silentLogger } = await import('../src/log.ts');
  const { startService } = await import('../src/service.ts');
  const dataDir = mkdtempSync(join(tmpdir(), 'mdapi-bench-live-'));
  const service = await startService(
    loadConfig({ ...process.env, DATA_DIR: dataDir, EMBEDDED_DB_PORT: '0', PORT: '0', WORKER: 'off', LOG_REQUESTS: 'false' }),
    silentLogger,
  );
  try {
    await service.sql`insert into app.plans (name, rank, monthly_quota, requests_per_minute, per_page_cap)
      values ('bench', 100, 1000000000, 1000000000, 250) on conflict (name) do nothing`;
    await benchLiveLatency(service);
  } finally {
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
