// The minute job and the stream holder divide the venues' candles (issue 46), on the loopback
// replay with a clock the test moves: while a live holder holds a venue's candle feed, a minute job
// run polls none of its candles (the replay counts the requests) and the minute's bars are complete
// all the same; the holder builds a minute's index bar once every held market's candle of it is in,
// with the coin state and the data version right after, no minute job needed, and records the delay
// from the minute's close; once the holder is gone (its lease expired), the next minute job fills
// the gap from REST, no minute missing and none written twice.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import type { VenueReplay } from '../../dev/venues/replay.ts';
import type { StreamCandle, VenueStreams } from '../../dev/venues/streams.ts';
import { btcStreamVenues, closeStreamVenues } from '../helpers/venue-streams.ts';
import { StreamHolder } from '../../src/sources/stream/index.ts';
import { ExchangesSource, exchangesSettings } from '../../src/sources/exchanges/index.ts';
import { queryOf } from '../../src/db/query.ts';
import type { Config } from '../../src/config.ts';
import { until } from '../../dev/wait.ts';

const MINUTE = 60_000;
/** the minute the test starts in, half an hour ago */
const M = Math.floor(Date.now() / MINUTE) * MINUTE - 30 * MINUTE;
let now = M + 20_000;
const VENUES = ['binance', 'okx'] as const;
const KLINES = { binance: '/api/v3/klines', okx: '/api/v5/market/candles' } as const;

let [db, replay, streams, holder, job, config] = [null, null, null, null, null, null] as unknown as [TestDatabase, VenueReplay, VenueStreams, StreamHolder, ExchangesSource, Config];

test.before(async () => {
  db = await testDatabase();
  ({ replay, streams, config } = await btcStreamVenues(db, {
    now: () => now,
    env: { STREAM_CANDLES: 'on', STREAM_CANDLE_WAIT_SECONDS: '5', STREAM_MAX_AGE_SECONDS: '5', STREAM_LEASE_SECONDS: '4' },
  }));
  holder = new StreamHolder(config, undefined, undefined, new ExchangesSource({ ...exchangesSettings(config), clock: () => now })).start();
  // the minute job's own instances (as another worker's), on the same clock
  job = new ExchangesSource({ ...exchangesSettings(config), clock: () => now, rateLimitMs: 5, marketsEveryMs: 0 });
});
test.after.always(() => closeStreamVenues({ holder, streams, replay, db }));

const at = (ms: number) => new Date(ms).toISOString();
const candleRequests = (venue: (typeof VENUES)[number]) => replay.requests(venue)[KLINES[venue]] ?? 0;
async function venueMinutes(venue: string) {
  const rows = await db.sql`select (extract(epoch from b.time) * 1000)::float8 as t, b.close::text, b.path from market.venue_bars_1m b
    join market.exchanges e on e.id = b.exchange_id where e.slug = ${venue} order by b.time`;
  return new Map(rows.map((row) => [Number(row.t), [row.close as string, row.path as string]]));
}
async function indexBar(minute: number) {
  // BTC's (the minute job's catalogue may give the market a coin of its own: by price, not by slug)
  const [bar] = await db.sql`select b.close::text from market.coin_bars_1m b where b.close > 1000 and b.time = ${at(minute)}`;
  return bar?.close as string | undefined;
}
async function counts(venue: string): Promise<Record<string, number>> {
  const rows = await db.sql`select k.outcome, k.candles::int as n from market.venue_candle_counts k join market.exchanges e on e.id = k.exchange_id where e.slug = ${venue}`;
  return Object.fromEntries(rows.map((row) => [row.outcome, row.n]));
}
const candle = (minute: number, close: string): StreamCandle => ({ time: minute, open: '60100', high: '60300', low: '59900', close, volume: '2.5' });

test.serial('a held venue\'s minute reaches its index bar, the coin state and the data version once all held candles of it are in, within seconds and with no minute job; the delay recorded', async (t) => {
  await until('REST filled both venues up to the open minute', async () => {
    const [row] = await db.sql`select count(*)::int as n from market.venue_markets where candles_until = ${at(M)}`;
    return row!.n === VENUES.length;
  }, { timeoutMs: 30_000 });
  await until('both venues subscribed their candles', async () => VENUES.every((venue) => streams.subscriptions(venue, 'candles').length > 0), { timeoutMs: 15_000 });
  // (a loaded machine may stall the holder's tick past its lease for a moment)
  await until('the candles of both venues the holder\'s', async () => ((await db.sql`select market.stream_candle_venues() as venues`)[0]!.venues as string[]).join() === VENUES.join(), { timeoutMs: 10_000 });
  const [before] = await db.sql`select version::int from app.data_versions where name = 'market'`;

  for (const venue of VENUES) streams.setCandle(venue, 'BTC/USDT', candle(M, '60150.75'));
  await new Promise((resolve) => setTimeout(resolve, 500));
  // M+1 begins at binance only: its M is in, okx's not yet (and the wait not over)
  now = M + MINUTE + 1_000;
  streams.setCandle('binance', 'BTC/USDT', candle(M + MINUTE, '60000'));
  await until('binance\'s M from its stream', async () => (await venueMinutes('binance')).get(M)?.[1] === 'stream', { timeoutMs: 10_000 });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  t.is(await indexBar(M), undefined, 'no index bar of M while a held market\'s candle of it is missing');

  streams.setCandle('okx', 'BTC/USDT', candle(M + MINUTE, '60000'));
  const started = Date.now();
  await until('the index bar of M and the coin state', async () => {
    const [state] = await db.sql`select s.price::text from market.coin_state s join market.coins c on c.id = s.coin_id where c.slug = 'btc'`;
    return (await indexBar(M)) === '60150.75' && state?.price === '60150.75';
  }, { timeoutMs: 10_000 });
  t.true(Date.now() - started < 5_000, `within seconds (${Date.now() - started} ms)`);
  const [after] = await db.sql`select version::int from app.data_versions where name = 'market'`;
  t.true(after!.version > (before?.version ?? 0), 'the data version the API cache keys on bumped');

  const delays = await db.sql`select e.slug, d.delay_seconds::float8 as delay, d.stream_candles, d.rest_candles from market.index_bar_delays d
    join market.exchanges e on e.id = d.exchange_id where d.minute = ${at(M)} order by e.slug`;
  t.deepEqual(delays.map((row) => [row.slug, row.stream_candles, row.rest_candles]), [['binance', 1, 0], ['okx', 1, 0]]);
  // by the holder's clock: M+1 began a second before
  t.true(delays.every((row) => row.delay >= 0 && row.delay < 5), JSON.stringify(delays));
});

test.serial('a minute job run while the holder holds both venues polls none of their candles, and the minute\'s bars stay complete', async (t) => {
  const requests = VENUES.map(candleRequests);
  const result = await job.run(queryOf(db.sql));
  for (const venue of VENUES) {
    t.is(result.venues[venue]?.state, 'up');
    t.true(result.venues[venue]?.candlesStreamed, `${venue}: its candles the stream's`);
    t.is(result.venues[venue]?.candleMarkets, 0);
    t.true(result.venues[venue]!.tickers > 0, `${venue}: its tickers polled as before`);
  }
  t.deepEqual(VENUES.map(candleRequests), requests, 'no candle request to either venue');
  t.is(await indexBar(M), '60150.75', 'the index bar of M as the streams made it');
  for (const venue of VENUES) t.deepEqual((await venueMinutes(venue)).get(M), ['60150.75', 'stream']);
});

test.serial('the holder gone (its lease expired), the next minute job fills the gap from REST: no minute missing, none written twice', async (t) => {
  await holder.stop(false);
  now = M + 4 * MINUTE + 2_000;
  // its leases still live: still the stream's
  const [live] = await db.sql`select market.stream_candle_venues() as venues`;
  t.deepEqual(live!.venues, [...VENUES]);
  await until('the leases expired', async () => ((await db.sql`select market.stream_candle_venues() as venues`)[0]!.venues as string[]).length === 0, { timeoutMs: 20_000 });

  const requests = VENUES.map(candleRequests);
  const result = await job.run(queryOf(db.sql));
  for (const [i, venue] of VENUES.entries()) {
    t.falsy(result.venues[venue]?.candlesStreamed);
    t.true(candleRequests(venue) > requests[i]!, `${venue}: polled again`);
    const minutes = await venueMinutes(venue);
    t.deepEqual([...minutes.keys()], Array.from({ length: 13 }, (_, k) => M - 9 * MINUTE + k * MINUTE), `${venue}: every minute from the first fill to M+3`);
    const counted = await counts(venue);
    t.is((counted.rest ?? 0) + (counted.stream ?? 0), minutes.size, `${venue}: each minute written once (${JSON.stringify(counted)})`);
  }
  for (const minute of [M + MINUTE, M + 2 * MINUTE, M + 3 * MINUTE]) t.truthy(await indexBar(minute), `the index bar of ${at(minute)}`);
  const [delay] = await db.sql`select d.rest_candles from market.index_bar_delays d join market.exchanges e on e.id = d.exchange_id
    where e.slug = 'binance' and d.minute = ${at(M + 3 * MINUTE)}`;
  t.is(delay?.rest_candles, 1, 'the minute job records its delays too');
});
