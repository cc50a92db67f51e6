// Publication latency of the live index price (issue 43): between the holder's ticks, a coin whose
// inputs changed is published as soon as its last publication is a second old, not at the next
// tick. The tick is made slow here (5 s) so only the publication between ticks can be fast; the
// assertions compare timestamps (when the venue's price was set, when the live price was computed).
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { startVenueReplay, type VenueReplay } from '../../dev/venues/replay.ts';
import { serveVenueStreams, type VenueStreams } from '../../dev/venues/streams.ts';
import { StreamHolder } from '../../src/sources/stream/index.ts';
import { sleep, until } from '../../dev/wait.ts';

let db: TestDatabase;
let replay: VenueReplay;
let streams: VenueStreams;
let holder: StreamHolder;

test.before(async () => {
  db = await testDatabase();
  replay = await startVenueReplay({
    coins: [{ symbol: 'BTC', price: 60000, volumeUsd: 3e10, volatility: 0.01 }, { symbol: 'USDT', price: 1, volumeUsd: 5e10, volatility: 0.01 }],
    venues: { binance: { markets: ['BTC/USDT'] } },
  });
  streams = serveVenueStreams(replay, { intervalMs: 50 });
  streams.setPrice('binance', 'BTC/USDT', '60000');
  await db.sql`insert into market.coins (slug, symbol, name, type, source, peg) values
    ('btc', 'BTC', 'Bitcoin', 'coin', 'exchanges', null), ('usdt', 'USDT', 'Tether', 'token', 'exchanges', 'USD')`;
  await db.sql`select market.load_exchange_venues('[{"slug": "binance", "name": "Binance"}]'::jsonb)`;
  await db.sql`insert into market.venue_markets (exchange_id, symbol, exchange_symbol, base, quote, base_coin_id, quote_coin_id)
    select e.id, 'BTC/USDT', 'BTCUSDT', 'BTC', 'USDT', (select id from market.coins where slug = 'btc'), (select id from market.coins where slug = 'usdt')
    from market.exchanges e where e.slug = 'binance'`;
  const config = db.config({
    MARKET_SOURCE: 'exchanges', EXCHANGES: 'binance', EXCHANGE_URLS: `binance=${replay.baseUrl('binance')}`,
    STREAM_INTERVAL_MS: '5000', STREAM_PUBLISH_MS: '50', STREAM_LEASE_SECONDS: '30',
  });
  holder = new StreamHolder(config).start();
});
test.after.always(async () => {
  await holder?.stop();
  streams?.close();
  await replay?.close();
  await db?.close();
});

const published = async () =>
  (await db.sql<{ price: string; at: Date }[]>`select l.price::text, l.at from market.live_prices l join market.coins c on c.id = l.coin_id where c.slug = 'btc'`)[0];
const publishedAt = (price: string) => until(`the live price ${price}`, async () => {
  const row = await published();
  return row?.price === price ? row.at.getTime() : undefined;
});

test.serial('a change is published well within a second once the last publication is a second old; sooner, at that second', async (t) => {
  await publishedAt('60000');
  for (const price of ['60010', '60020', '60030']) {
    // the last publication over a second ago
    await sleep(1_200);
    const set = Date.now();
    streams.setPrice('binance', 'BTC/USDT', price);
    const at = await publishedAt(price);
    t.true(at - set < 500, `${price}: published ${at - set} ms after the venue's change (ticks are 5 s apart)`);
  }
  // a change 200 ms after a publication waits for that publication to be a second old, not for the next tick
  const previous = await publishedAt('60030');
  await sleep(Math.max(0, previous + 200 - Date.now()));
  streams.setPrice('binance', 'BTC/USDT', '60040');
  const at = await publishedAt('60040');
  t.true(at - previous >= 1_000 && at - previous < 1_500, `published ${at - previous} ms after the previous one`);
});
