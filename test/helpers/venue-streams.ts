// Streaming venues of the replay (dev/venues/streams.ts: binance and okx, or one of them) with BTC/USDT each,
// served on loopback, and the database rows the stream holder reads them through: the coins, the
// venues and their market. Returns the replay, its streams and the holder's configuration.
import type { Config } from '../../src/config.ts';
import { startVenueReplay, type VenueReplay } from '../../dev/venues/replay.ts';
import { serveVenueStreams, type VenueStreams } from '../../dev/venues/streams.ts';
import type { TestDatabase } from './database.ts';

type StreamVenue = 'binance' | 'okx';
const MARKET_ID: Record<StreamVenue, string> = { binance: 'BTCUSDT', okx: 'BTC-USDT' };

/**
 * `prices`: each venue's first BTC/USDT price (the venues served, in order); `intervalMs`: how often
 * the streams send; `env`: the holder's settings over the defaults below.
 */
export async function btcStreamVenues(
  db: TestDatabase,
  { prices = { binance: '60000.5', okx: '60001.5' }, intervalMs, env = {} }: { prices?: Partial<Record<StreamVenue, string>>; intervalMs?: number; env?: Record<string, string> } = {},
): Promise<{ replay: VenueReplay; streams: VenueStreams; config: Config }> {
  const venues = Object.keys(prices) as StreamVenue[];
  const replay = await startVenueReplay({
    coins: [{ symbol: 'BTC', price: 60000, volumeUsd: 3e10, volatility: 0.01 }, { symbol: 'USDT', price: 1, volumeUsd: 5e10, volatility: 0.01 }],
    venues: Object.fromEntries(venues.map((venue) => [venue, { markets: ['BTC/USDT'] }])),
  });
  const streams = serveVenueStreams(replay, intervalMs === undefined ? {} : { intervalMs });
  for (const venue of venues) streams.setPrice(venue, 'BTC/USDT', prices[venue]!);
  await db.sql`insert into market.coins (slug, symbol, name, type, source, peg) values
    ('btc', 'BTC', 'Bitcoin', 'coin', 'exchanges', null), ('usdt', 'USDT', 'Tether', 'token', 'exchanges', 'USD')`;
  await db.sql`select market.load_exchange_venues(${JSON.stringify(venues.map((venue) => ({ slug: venue, name: venue === 'okx' ? 'OKX' : 'Binance' })))}::text::jsonb)`;
  for (const venue of venues) {
    await db.sql`insert into market.venue_markets (exchange_id, symbol, exchange_symbol, base, quote, base_coin_id, quote_coin_id)
      select e.id, 'BTC/USDT', ${MARKET_ID[venue]}, 'BTC', 'USDT', (select id from market.coins where slug = 'btc'), (select id from market.coins where slug = 'usdt')
      from market.exchanges e where e.slug = ${venue}`;
  }
  const config = db.config({
    MARKET_SOURCE: 'exchanges', EXCHANGES: venues.join(','),
    EXCHANGE_URLS: venues.map((venue) => `${venue}=${replay.baseUrl(venue)}`).join(','),
    STREAM_INTERVAL_MS: '200', STREAM_MAX_AGE_SECONDS: '2', STREAM_READMIT_SECONDS: '1',
    ...env,
  });
  return { replay, streams, config };
}
