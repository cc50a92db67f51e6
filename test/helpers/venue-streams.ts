// The two streaming venues of the replay (dev/venues/streams.ts: binance, okx) with BTC/USDT each,
// served on loopback, and the database rows the stream holder reads them through: the coins, the
// venues and their market. Returns the replay, its streams and the holder's configuration.
import type { Config } from '../../src/config.ts';
import { startVenueReplay, type VenueReplay } from '../../dev/venues/replay.ts';
import { serveVenueStreams, type VenueStreams } from '../../dev/venues/streams.ts';
import type { TestDatabase } from './database.ts';

export async function btcStreamVenues(db: TestDatabase): Promise<{ replay: VenueReplay; streams: VenueStreams; config: Config }> {
  const replay = await startVenueReplay({
    coins: [{ symbol: 'BTC', price: 60000, volumeUsd: 3e10, volatility: 0.01 }, { symbol: 'USDT', price: 1, volumeUsd: 5e10, volatility: 0.01 }],
    venues: { binance: { markets: ['BTC/USDT'] }, okx: { markets: ['BTC/USDT'] } },
  });
  const streams = serveVenueStreams(replay);
  streams.setPrice('binance', 'BTC/USDT', '60000.5');
  streams.setPrice('okx', 'BTC/USDT', '60001.5');
  await db.sql`insert into market.coins (slug, symbol, name, type, source, peg) values
    ('btc', 'BTC', 'Bitcoin', 'coin', 'exchanges', null), ('usdt', 'USDT', 'Tether', 'token', 'exchanges', 'USD')`;
  await db.sql`select market.load_exchange_venues('[{"slug": "binance", "name": "Binance"}, {"slug": "okx", "name": "OKX"}]'::jsonb)`;
  await db.sql`insert into market.venue_markets (exchange_id, symbol, exchange_symbol, base, quote, base_coin_id, quote_coin_id)
    select e.id, 'BTC/USDT', case e.slug when 'okx' then 'BTC-USDT' else 'BTCUSDT' end, 'BTC', 'USDT',
      (select id from market.coins where slug = 'btc'), (select id from market.coins where slug = 'usdt')
    from market.exchanges e where e.slug in ('binance', 'okx')`;
  const config = db.config({
    MARKET_SOURCE: 'exchanges', EXCHANGES: 'binance,okx',
    EXCHANGE_URLS: `binance=${replay.baseUrl('binance')},okx=${replay.baseUrl('okx')}`,
    STREAM_INTERVAL_MS: '200', STREAM_MAX_AGE_SECONDS: '2', STREAM_READMIT_SECONDS: '1',
  });
  return { replay, streams, config };
}
