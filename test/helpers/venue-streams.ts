// Streaming venues of the replay (dev/venues/streams.ts: binance and okx by default, or any of its venues) with BTC/USDT each,
// served on loopback, and the database rows the stream holder reads them through: the coins, the
// venues and their market. Returns the replay, its streams and the holder's configuration.
import type { Config } from '../../src/config.ts';
import { startVenueReplay, type VenueReplay } from '../../dev/venues/replay.ts';
import { serveVenueStreams, type StreamVenue, type VenueStreams } from '../../dev/venues/streams.ts';
import type { TestDatabase } from './database.ts';

const MARKET_ID: Record<StreamVenue, string> = {
  mexc: 'BTCUSDT', binance: 'BTCUSDT', okx: 'BTC-USDT', kraken: 'XBTUSDT', gate: 'BTC_USDT', bitget: 'BTCUSDT', htx: 'btcusdt', coinbase: 'BTC-USDT', bybit: 'BTCUSDT', kucoin: 'BTC-USDT',
};
const NAME: Record<StreamVenue, string> = { mexc: 'MEXC', binance: 'Binance', okx: 'OKX', kraken: 'Kraken', gate: 'Gate', bitget: 'Bitget', htx: 'HTX', coinbase: 'Coinbase', bybit: 'Bybit', kucoin: 'KuCoin' };

/**
 * `prices`: each venue's first BTC/USDT price (the venues served, in order); `intervalMs`: how often
 * the streams send; `pingMs`: how often a venue that pings (htx) does; `env`: the holder's settings over the defaults below;
 * `now`: the replay's clock (its REST candles close by it), default the real one (mexc among the venues: its candles stream, its prices are REST's);
 * `rows: false`: the database rows left out, for the test to add (`addRows`) as a worker's first market job would, later.
 */
export async function btcStreamVenues(
  db: TestDatabase,
  { prices = { binance: '60000.5', okx: '60001.5' }, intervalMs, pingMs, env = {}, now, rows = true }: { prices?: Partial<Record<StreamVenue, string>>; intervalMs?: number; pingMs?: number; env?: Record<string, string>; now?: () => number; rows?: boolean } = {},
): Promise<{ replay: VenueReplay; streams: VenueStreams; config: Config; addRows: () => Promise<void> }> {
  const venues = Object.keys(prices) as StreamVenue[];
  const replay = await startVenueReplay({
    coins: [{ symbol: 'BTC', price: 60000, volumeUsd: 3e10, volatility: 0.01 }, { symbol: 'USDT', price: 1, volumeUsd: 5e10, volatility: 0.01 }],
    venues: Object.fromEntries(venues.map((venue) => [venue, { markets: ['BTC/USDT'] }])),
    ...(now ? { now } : {}),
  });
  const streams = serveVenueStreams(replay, { ...(intervalMs === undefined ? {} : { intervalMs }), ...(pingMs === undefined ? {} : { pingMs }) });
  for (const venue of venues) streams.setPrice(venue, 'BTC/USDT', prices[venue]!);
  const addRows = async () => {
    await db.sql`insert into market.coins (slug, symbol, name, type, source, peg) values
      ('btc', 'BTC', 'Bitcoin', 'coin', 'exchanges', null), ('usdt', 'USDT', 'Tether', 'token', 'exchanges', 'USD')`;
    await db.sql`select market.load_exchange_venues(${JSON.stringify(venues.map((venue) => ({ slug: venue, name: NAME[venue] })))}::text::jsonb)`;
    for (const venue of venues) {
      await db.sql`insert into market.venue_markets (exchange_id, symbol, exchange_symbol, base, quote, base_coin_id, quote_coin_id)
        select e.id, 'BTC/USDT', ${MARKET_ID[venue]}, 'BTC', 'USDT', (select id from market.coins where slug = 'btc'), (select id from market.coins where slug = 'usdt')
        from market.exchanges e where e.slug = ${venue}`;
    }
  };
  if (rows) await addRows();
  const config = db.config({
    MARKET_SOURCE: 'exchanges', EXCHANGES: venues.join(','),
    EXCHANGE_URLS: venues.map((venue) => `${venue}=${replay.baseUrl(venue)}`).join(','),
    // the tests of the ticker streams leave the candle streams (test/streams/venue_candles.test.ts) out
    STREAM_INTERVAL_MS: '200', STREAM_MAX_AGE_SECONDS: '2', STREAM_READMIT_SECONDS: '1', STREAM_CANDLES: 'off',
    ...env,
  });
  return { replay, streams, config, addRows };
}

/** What the tests of the streams read: the live BTC price, a venue's live price, the stream source's health per venue. */
export function streamReadings(db: TestDatabase) {
  return {
    btc: async () => (await db.sql`select l.price::text from market.live_prices l join market.coins c on c.id = l.coin_id where c.slug = 'btc'`)[0]?.price as string | undefined,
    venuePrice: async (venue: string) =>
      (await db.sql`select p.price::text from market.live_venue_prices p join market.exchanges e on e.id = p.exchange_id where e.slug = ${venue}`)[0]?.price as string | undefined,
    health: async () => (await db.sql`select venues from market.source_health where name = 'stream'`)[0]?.venues as Record<string, 'up' | 'down'> | undefined,
  };
}

/** A replay test's teardown: the holder stopped, then the streams, the replay and the database closed (each may be missing: a before hook that failed). */
export async function closeStreamVenues(parts: { holder?: { stop(): Promise<void> } | null; streams?: VenueStreams | null; replay?: VenueReplay | null; db?: TestDatabase | null }) {
  await parts.holder?.stop();
  parts.streams?.close();
  await parts.replay?.close();
  await parts.db?.close();
}

/**
 * Streaming venues of the replay listing many coins (COIN1/USDT … COIN<n>/USDT; each venue the first
 * `markets[venue]` of them), their streams serving the replay's own prices and candles (modelPrices),
 * and the database rows the holder reads them through, each market's candles stored up to `storedUntil`
 * (no REST fill at start). Returns the replay, its streams and the holder's configuration.
 */
export async function coinStreamVenues(
  db: TestDatabase,
  { markets, now, storedUntil, env = {} }: { markets: Partial<Record<StreamVenue, number>>; now: () => number; storedUntil: number; env?: Record<string, string> },
): Promise<{ replay: VenueReplay; streams: VenueStreams; config: Config }> {
  const venues = Object.keys(markets) as StreamVenue[];
  const coins = Array.from({ length: Math.max(...Object.values(markets)) }, (_, i) => `COIN${i + 1}`);
  const replay = await startVenueReplay({
    coins: [...coins.map((symbol, i) => ({ symbol, price: 10 + i, volumeUsd: 1e8, volatility: 0.01 })), { symbol: 'USDT', price: 1, volumeUsd: 5e10, volatility: 0.01 }],
    venues: Object.fromEntries(venues.map((venue) => [venue, { markets: coins.slice(0, markets[venue]).map((coin) => `${coin}/USDT`) }])),
    now,
  });
  const streams = serveVenueStreams(replay, { intervalMs: 250, modelPrices: true });
  const rows = coins.map((symbol) => ({ slug: symbol.toLowerCase(), symbol, name: symbol, type: 'token', source: 'exchanges' }));
  await db.sql`insert into market.coins ${db.sql(rows)}`;
  await db.sql`insert into market.coins (slug, symbol, name, type, source, peg) values ('usdt', 'USDT', 'Tether', 'token', 'exchanges', 'USD')`;
  await db.sql`select market.load_exchange_venues(${JSON.stringify(venues.map((venue) => ({ slug: venue, name: NAME[venue] })))}::text::jsonb)`;
  for (const venue of venues) {
    const listed = coins.slice(0, markets[venue]).map((coin) => ({ symbol: `${coin}/USDT`, id: replay.market(venue, `${coin}/USDT`)!.id, base: coin }));
    await db.sql`insert into market.venue_markets (exchange_id, symbol, exchange_symbol, base, quote, base_coin_id, quote_coin_id, candles_until)
      select e.id, m.symbol, m.id, m.base, 'USDT', b.id, (select id from market.coins where slug = 'usdt'), ${new Date(storedUntil).toISOString()}
      from market.exchanges e, jsonb_to_recordset(${JSON.stringify(listed)}::text::jsonb) m(symbol text, id text, base text)
      join market.coins b on b.symbol = m.base
      where e.slug = ${venue}`;
  }
  const config = db.config({
    MARKET_SOURCE: 'exchanges', EXCHANGES: venues.join(','),
    EXCHANGE_URLS: venues.map((venue) => `${venue}=${replay.baseUrl(venue)}`).join(','),
    STREAM_INTERVAL_MS: '200', STREAM_MAX_AGE_SECONDS: '5', STREAM_READMIT_SECONDS: '1', STREAM_CANDLES: 'on', STREAM_CANDLE_WAIT_SECONDS: '5',
    ...env,
  });
  return { replay, streams, config };
}
