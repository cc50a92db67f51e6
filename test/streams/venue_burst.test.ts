// Tickers in a burst (issue 43): a venue writes several markets' tickers in one socket write, as
// the venues do; ccxt resolves one waiting watchTickers call per message and only caches the rest,
// so the holder reads the exchange's ticker cache after each wake-up. Each replayed stream venue
// (dev/venues/streams.ts: binance, okx, kraken, gate, bitget, htx, coinbase, bybit, kucoin) sends bursts of four markets; every price must reach
// market.live_venue_prices.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { startVenueReplay, type VenueReplay } from '../../dev/venues/replay.ts';
import { serveVenueStreams, type StreamVenue, type VenueStreams } from '../../dev/venues/streams.ts';
import { StreamHolder } from '../../src/sources/stream/index.ts';
import { sleep, until } from '../../dev/wait.ts';

const MARKETS = ['BTC/USDT', 'ETH/USDT', 'SOL/USDT', 'ETH/BTC'];
const VENUES: StreamVenue[] = ['binance', 'okx', 'kraken', 'gate', 'bitget', 'htx', 'coinbase', 'bybit', 'kucoin'];

let [db, replay, streams, holder] = [null, null, null, null] as unknown as [TestDatabase, VenueReplay, VenueStreams, StreamHolder];

test.before(async () => {
  db = await testDatabase();
  replay = await startVenueReplay({
    coins: [
      { symbol: 'BTC', price: 60000, volumeUsd: 3e10, volatility: 0.01 },
      { symbol: 'ETH', price: 3000, volumeUsd: 1e10, volatility: 0.01 },
      { symbol: 'SOL', price: 150, volumeUsd: 3e9, volatility: 0.01 },
      { symbol: 'USDT', price: 1, volumeUsd: 5e10, volatility: 0.01 },
    ],
    venues: Object.fromEntries(VENUES.map((venue) => [venue, { markets: MARKETS }])),
  });
  // the regular sends a minute apart: only the bursts bring prices during the test
  streams = serveVenueStreams(replay, { intervalMs: 60_000 });
  await db.sql`insert into market.coins (slug, symbol, name, type, source, peg) values
    ('btc', 'BTC', 'Bitcoin', 'coin', 'exchanges', null), ('eth', 'ETH', 'Ether', 'coin', 'exchanges', null),
    ('sol', 'SOL', 'Solana', 'coin', 'exchanges', null), ('usdt', 'USDT', 'Tether', 'token', 'exchanges', 'USD')`;
  await db.sql`select market.load_exchange_venues(${JSON.stringify(VENUES.map((slug) => ({ slug, name: slug })))}::text::jsonb)`;
  for (const symbol of MARKETS) {
    const [base, quote] = symbol.split('/') as [string, string];
    await db.sql`insert into market.venue_markets (exchange_id, symbol, exchange_symbol, base, quote, base_coin_id, quote_coin_id)
      select e.id, ${symbol}, case when e.slug in ('okx', 'coinbase', 'kucoin') then ${`${base}-${quote}`} when e.slug = 'gate' then ${`${base}_${quote}`} when e.slug = 'htx' then ${(base + quote).toLowerCase()} else ${base + quote} end, ${base}, ${quote},
        (select id from market.coins where symbol = ${base}), (select id from market.coins where symbol = ${quote})
      from market.exchanges e where e.slug = any(${VENUES})`;
  }
  const config = db.config({
    MARKET_SOURCE: 'exchanges', EXCHANGES: VENUES.join(','),
    EXCHANGE_URLS: VENUES.map((venue) => `${venue}=${replay.baseUrl(venue)}`).join(','),
    // the ticker streams alone (the candle streams: test/streams/venue_candles.test.ts)
    STREAM_INTERVAL_MS: '150', STREAM_MAX_AGE_SECONDS: '60', STREAM_CANDLES: 'off',
  });
  holder = new StreamHolder(config).start();
});
test.after.always(async () => {
  await holder?.stop();
  streams?.close();
  await replay?.close();
  await db?.close();
});

const prices = async (venue: string) =>
  Object.fromEntries(
    (await db.sql<{ symbol: string; price: string }[]>`
      select c.symbol || '/' || p.quote as symbol, p.price::text from market.live_venue_prices p
      join market.exchanges e on e.id = p.exchange_id join market.coins c on c.id = p.coin_id
      where e.slug = ${venue}`).map((row) => [row.symbol, row.price]),
  );
const health = async () => (await db.sql`select venues from market.source_health where name = 'stream'`)[0]?.venues;

test.serial('a burst of N tickers in one write gives N live venue prices, on each replayed venue, burst after burst', async (t) => {
  await until('every venue resynchronised and up', async () => {
    const venues = await health();
    return VENUES.every((venue) => venues?.[venue] === 'up');
  });
  // the first stream subscription's own messages settle before the bursts
  await sleep(300);
  for (const round of [1, 2, 3]) {
    const sent = Object.fromEntries(VENUES.map((venue) => [venue, {}])) as Record<StreamVenue, Record<string, string>>;
    for (const [v, venue] of VENUES.entries()) {
      for (const [at, symbol] of MARKETS.entries()) sent[venue][symbol] = `${(round * 1000 + at + 1) * (v + 1)}.5`;
      streams.burst(venue, sent[venue]);
    }
    for (const venue of VENUES) {
      let seen: Record<string, string> = {};
      await until(`${venue}'s burst ${round}`, async () => {
        seen = await prices(venue);
        return MARKETS.every((symbol) => seen[symbol] === sent[venue][symbol]);
      }, { timeoutMs: 3_000 }).catch(() => {});
      t.deepEqual(seen, sent[venue], `${venue}, burst ${round}: every market of the burst`);
    }
  }
});
