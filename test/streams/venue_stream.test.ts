// The streaming source on real venue formats: ccxt pro's binance client against a loopback replay
// (REST markets from dev/venues/replay.ts, the WebSocket ticker stream served here in binance's
// documented format) with EXCHANGE_URLS rebasing both. A price on the stream reaches the live
// index; a garbage message leaves the venue out and writes nothing; a cut stream reconnects.
import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocketServer, type WebSocket } from 'ws';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { startVenueReplay, type VenueReplay } from '../../dev/venues/replay.ts';
import { StreamHolder } from '../../src/sources/stream/index.ts';
import { createLogger } from '../../src/log.ts';

let db: TestDatabase;
let replay: VenueReplay;
let holder: StreamHolder;
const sockets = new Set<WebSocket>();
let last = '60000.5';
let garbage = false;
let connections = 0;

test.before(async () => {
  db = await testDatabase();
  replay = await startVenueReplay({
    coins: [{ symbol: 'BTC', price: 60000, volumeUsd: 3e10 }, { symbol: 'USDT', price: 1, volumeUsd: 5e10, volatility: 0.01 }],
    venues: { binance: { markets: ['BTC/USDT'] } },
  });
  // binance's spot stream: SUBSCRIBE answered, then a ticker event per stream every 100 ms
  const wss = new WebSocketServer({ noServer: true });
  replay.server.on('upgrade', (req, socket, head) => {
    if (!req.url?.startsWith('/binance/ws')) return socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => {
      connections++;
      sockets.add(ws);
      ws.on('close', () => sockets.delete(ws));
      ws.on('message', (raw) => {
        const message = JSON.parse(String(raw));
        if (message.method !== 'SUBSCRIBE') return;
        ws.send(JSON.stringify({ result: null, id: message.id }));
        const timer = setInterval(() => {
          for (const stream of message.params as string[]) {
            const symbol = stream.split('@')[0]!.toUpperCase();
            // ccxt asks for <symbol>@miniTicker: its 24hrMiniTicker event
            ws.send(garbage ? '{"e":"24hrMiniTicker","s":' : JSON.stringify({
              e: '24hrMiniTicker', E: Date.now(), s: symbol, c: last, o: last, h: last, l: last, v: '1000', q: '60000000',
            }));
          }
        }, 100);
        ws.on('close', () => clearInterval(timer));
      });
    });
  });
  await db.sql`insert into market.coins (slug, symbol, name, type, source, peg) values
    ('btc', 'BTC', 'Bitcoin', 'coin', 'exchanges', null), ('usdt', 'USDT', 'Tether', 'token', 'exchanges', 'USD')`;
  await db.sql`select market.load_exchange_venues('[{"slug": "binance", "name": "Binance"}]'::jsonb)`;
  await db.sql`insert into market.venue_markets (exchange_id, symbol, exchange_symbol, base, quote, base_coin_id, quote_coin_id)
    select e.id, 'BTC/USDT', 'BTCUSDT', 'BTC', 'USDT', (select id from market.coins where slug = 'btc'), (select id from market.coins where slug = 'usdt')
    from market.exchanges e where e.slug = 'binance'`;
  const config = db.config({
    MARKET_SOURCE: 'exchanges', EXCHANGES: 'binance', EXCHANGE_URLS: `binance=${replay.baseUrl('binance')}`,
    STREAM_INTERVAL_MS: '200', STREAM_MAX_AGE_SECONDS: '2',
  });
  // its own connection, ended by stop(): none is left open when the database closes
  holder = new StreamHolder(config, process.env.DEBUG_STREAM ? createLogger(config) : undefined).start();
});
test.after.always(async () => {
  await holder?.stop();
  for (const socket of sockets) socket.terminate();
  await replay?.close();
  await db?.close();
});

const btc = async () => (await db.sql`select l.price::text from market.live_prices l join market.coins c on c.id = l.coin_id where c.slug = 'btc'`)[0]?.price;
async function until(what: string, check: () => Promise<boolean>, ms = 10_000) {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

test.serial('a price on the venue stream reaches the live index; garbage leaves the venue out; a cut stream reconnects', async (t) => {
  await until('the stream price', async () => (await btc()) === '60000.5');
  t.pass();
  const [health] = await db.sql`select venues from market.source_health where name = 'stream'`;
  t.deepEqual(health!.venues, { binance: 'up' });

  // garbage: nothing of it is written, the venue is down until good messages come again
  garbage = true;
  const [before] = await db.sql`select price::text, at from market.live_venue_prices`;
  await sleep(800);
  const [during] = await db.sql`select price::text, at from market.live_venue_prices`;
  t.is(during!.price, before!.price);
  garbage = false;

  // cut: every connection dropped; ccxt pro reconnects (back-off from 1 s) and prices go on
  const seen = connections;
  last = '61000.25';
  for (const socket of sockets) socket.terminate();
  await until('reconnected with the new price', async () => (await btc()) === '61000.25', 15_000);
  t.true(connections > seen);
});
