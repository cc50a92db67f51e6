// What holding one venue's live stream costs (issue 46, sizing the holders that share the venues):
// on the real-size replay of `make venues-replay PORT=8780 COINS=2500` (already running; another
// address: REPLAY_URL), a fresh embedded database loads every venue's markets, then one `mdapi stream`
// process per venue (EXCHANGES=<venue>, its tickers and, STREAM_CANDLES on as by default, its one-minute
// candles) holds it alone, and one holds them all. Per venue: the markets subscribed to tickers and to
// candles, the connections the process keeps open to the venue (its streams; a REST request in flight
// counts too), and its memory (RSS) over that of a holder with no venue; then the one holder of every
// venue. Figures only, no assertions: node bench/stream-venues.ts (STREAM_CANDLES=off: tickers alone)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { silentLogger } from '../src/log.ts';
import { startService } from '../src/service.ts';
import { withReservedQuery } from '../src/db/query.ts';
import { ExchangesSource, ensureVenueMarkets } from '../src/sources/exchanges/index.ts';
import { ensureVenueCatalogue } from '../src/sources/exchanges/catalogue.ts';
import { streamsTickers } from '../src/sources/exchanges/venues.ts';
import { candleStream } from '../src/sources/stream/candles.ts';
import { REPLAY_VENUES } from '../dev/venues/replay.ts';
import { sleep, until } from '../dev/wait.ts';

const ROOT = new URL('../', import.meta.url).pathname;
const REPLAY_URL = process.env.REPLAY_URL ?? 'http://127.0.0.1:8780';
const replayPort = Number(new URL(REPLAY_URL).port);
/** how long a holder streams before it is measured: its markets subscribed, its buffers warm */
const SETTLE_MS = Number(process.env.BENCH_STREAM_SETTLE_MS ?? 20_000);
const CANDLES = process.env.STREAM_CANDLES !== 'off';
/** the venues a holder streams: their tickers, or (candles on) their candles */
const venues = REPLAY_VENUES.filter((venue) => streamsTickers(venue) || (CANDLES && candleStream(venue).method !== 'none'));
const urls = Object.fromEntries(REPLAY_VENUES.map((venue) => [venue, `${REPLAY_URL}/${venue}`]));

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

/** The process's established TCP connections to the replay (its venue streams and REST requests). */
function connectionsOf(pid: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const target = (() => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return '';
      }
    })();
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  let count = 0;
  for (const file of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${file}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // remote address:port in hex, state 01 = established
      if (fields.length > 9 && fields[3] === '01' && Number.parseInt(fields[2]!.split(':')[1]!, 16) === replayPort && inodes.has(fields[9]!)) count++;
    }
  }
  return count;
}

const dataDir = mkdtempSync(join(tmpdir(), 'mdapi-bench-stream-venues-'));
const service = await startService(
  loadConfig({ ...process.env, DATA_DIR: dataDir, EMBEDDED_DB_PORT: '0', PORT: '0', WORKER: 'off', LOG_REQUESTS: 'false', MARKET_SOURCE: 'none' }),
  silentLogger,
);
const { sql } = service;
const children: ChildProcess[] = [];
const holderOf = (exchanges: string, env: Record<string, string> = {}) => {
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', 'bin/cli.ts', 'stream'], {
    cwd: ROOT,
    env: {
      ...process.env, DATABASE_URL: service.config.database.url, LOG_LEVEL: 'warn', MARKET_SOURCE: 'exchanges', EXCHANGES: exchanges,
      EXCHANGE_URLS: Object.entries(urls).map(([venue, url]) => `${venue}=${url}`).join(','), STREAM_LEASE_SECONDS: '5',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
};
const stopAll = async () => {
  for (const child of children.splice(0)) {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
  }
};
/** venues streaming: their tickers up (where they stream), and (candles on) their candle markets delivering */
const upVenues = async () => {
  const [row] = await sql<{ venues: Record<string, string> | null }[]>`select venues from market.data_sources where name = 'stream'`;
  const tickers = new Set(Object.entries(row?.venues ?? {}).filter(([, state]) => state === 'up').map(([venue]) => venue));
  const candles = new Set((await sql<{ slug: string }[]>`select e.slug from market.venue_status s join market.exchanges e on e.id = s.exchange_id
    where s.stream_markets > 0 and s.candle_markets_at > now() - interval '10 seconds'`).map((candle) => candle.slug));
  return venues.filter((venue) => (!streamsTickers(venue) || tickers.has(venue)) && (!CANDLES || candles.has(venue)));
};

try {
  // every venue's markets and coins, as the exchange source's first run loads them
  const source = new ExchangesSource({ venues: [...REPLAY_VENUES], urls, rateLimitMs: 5 });
  await withReservedQuery(sql, async (query) => {
    await ensureVenueCatalogue(query, [...REPLAY_VENUES], (id) => source.venue(id).exchange);
    for (const venue of venues) await ensureVenueMarkets(query, source.venue(venue));
  });
  const markets = Object.fromEntries(
    (await sql<{ slug: string; n: number }[]>`
      select e.slug, least(count(*), 200)::int as n from market.venue_markets m join market.exchanges e on e.id = m.exchange_id
      where m.instrument = 'spot' and m.active and m.base_coin_id is not null group by e.slug`).map((row) => [row.slug, row.n]),
  );
  await Promise.all(source.venueIds.map((id) => source.venue(id).exchange.close().catch(() => {})));

  // a holder with no venue to stream (mexc without candles: its tickers are REST's): the process's own memory
  const idle = holderOf('mexc', { STREAM_CANDLES: 'off' });
  await sleep(SETTLE_MS);
  const baseline = rssOf(idle.pid!);
  await stopAll();

  const rows: string[][] = [];
  // one venue at a time: the connections and memory it adds to a holder
  for (const venue of venues) {
    await sql`update market.data_sources set venues = '{}' where name = 'stream'`;
    const child = holderOf(venue);
    await until(`${venue} streaming`, async () => (await upVenues()).includes(venue), { timeoutMs: 120_000, everyMs: 500 }).catch(() => {});
    await sleep(SETTLE_MS);
    const up = (await upVenues()).includes(venue);
    const [held] = await sql<{ n: number | null }[]>`select s.stream_markets as n from market.venue_status s join market.exchanges e on e.id = s.exchange_id where e.slug = ${venue}`;
    rows.push([
      venue, streamsTickers(venue) ? String(markets[venue] ?? 0) : '-', CANDLES ? String(held?.n ?? 0) : '-', String(connectionsOf(child.pid!)),
      ((rssOf(child.pid!) - baseline) / 2 ** 20).toFixed(0), up ? 'up' : 'down',
    ]);
    await stopAll();
  }
  await sql`update market.data_sources set venues = '{}' where name = 'stream'`;
  const all = holderOf(venues.join(','));
  await until('every venue streaming', async () => (await upVenues()).length === venues.length, { timeoutMs: 180_000, everyMs: 500 }).catch(() => {});
  await sleep(SETTLE_MS);
  const allUp = (await upVenues()).length;
  const allRss = rssOf(all.pid!);
  const allConnections = connectionsOf(all.pid!);
  await stopAll();

  console.log(`\nStream holders on the replay at ${REPLAY_URL} (measured ${SETTLE_MS / 1000} s after each venue was up); a holder with no venue: ${(baseline / 2 ** 20).toFixed(0)} MiB RSS\n`);
  const header = ['venue', 'ticker markets', 'candle markets streamed', 'connections', 'MiB over an idle holder', 'state'];
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const format = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  console.log(format(header));
  for (const row of rows) console.log(format(row));
  console.log(`\none holder of all ${venues.length} venues: ${allUp} up, ${allConnections} connections, ${(allRss / 2 ** 20).toFixed(0)} MiB RSS`);
} finally {
  await stopAll();
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
}
