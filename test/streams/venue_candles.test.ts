// The stream holder's one-minute candles (issue 46) on the loopback replay of every venue's
// documented candle stream (dev/venues/streams.ts: binance kline_1m, okx candle1m, kraken v2 ohlc,
// gate spot.candlesticks, bitget candle1m, htx market.<id>.kline.1min, bybit kline.1, kucoin
// /market/candles, mexc's protobuf spot@public.kline.v3.api.pb) and coinbase's market_trades, whose
// minutes are built from trades, beside their REST answers (dev/venues/replay.ts), on a clock the test
// moves (the replay's REST candles close by it too): each venue's candle reaches its venue bar and the
// index bar with its documented values; a cut stream is filled from REST with no gap and no minute
// written twice, as are the minutes a stream leaves out; a stream candle
// after a REST one that disagrees keeps REST and is counted; bad stream candles are refused,
// counted, and REST stands for their minutes; a candle its venue marks closed is final at once; a
// minute REST could not fill before the stream brought the next one is filled once REST answers.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { num, type VenueReplay } from '../../dev/venues/replay.ts';
import { STREAM_VENUES, type StreamCandle, type StreamVenue, type VenueStreams } from '../../dev/venues/streams.ts';
import { btcStreamVenues, closeStreamVenues } from '../helpers/venue-streams.ts';
import { StreamHolder } from '../../src/sources/stream/index.ts';
import { ExchangesSource, exchangesSettings } from '../../src/sources/exchanges/index.ts';
import { candleFromTrades } from '../../src/sources/stream/candles.ts';
import { createLogger } from '../../src/log.ts';
import { until } from '../../dev/wait.ts';

const MINUTE = 60_000;
/** the minute the test starts in, half an hour ago */
const M = Math.floor(Date.now() / MINUTE) * MINUTE - 30 * MINUTE;
let now = M + 20_000;
const WAIT_SECONDS = 5;
const CANDLE_VENUES = STREAM_VENUES.filter((venue) => venue !== 'coinbase');

let [db, replay, streams, holder] = [null, null, null, null] as unknown as [TestDatabase, VenueReplay, VenueStreams, StreamHolder];

test.before(async () => {
  db = await testDatabase();
  const prices = Object.fromEntries(STREAM_VENUES.map((venue, at) => [venue, `6000${at}.5`]));
  const seeded = await btcStreamVenues(db, { prices, now: () => now, env: { STREAM_CANDLES: 'on', STREAM_CANDLE_WAIT_SECONDS: String(WAIT_SECONDS), STREAM_CANDLE_CHECK_SECONDS: '1', STREAM_MAX_AGE_SECONDS: '5' } });
  ({ replay, streams } = seeded);
  const source = new ExchangesSource({ ...exchangesSettings(seeded.config), clock: () => now });
  holder = new StreamHolder(seeded.config, process.env.DEBUG_STREAM ? createLogger({ ...seeded.config, LOG_LEVEL: 'debug' }) : undefined, undefined, source).start();
});
test.after.always(() => closeStreamVenues({ holder, streams, replay, db }));

const at = (ms: number) => new Date(ms).toISOString();
/** a venue's stored candles of BTC/USDT from `from`: minute (ms) → [open, high, low, close, volume, path] */
async function venueBars(venue: string, from = M - 20 * MINUTE) {
  const rows = await db.sql`select (extract(epoch from b.time) * 1000)::float8 as t, b.open::text, b.high::text, b.low::text, b.close::text, b.volume::text, b.path
    from market.venue_bars_1m b join market.exchanges e on e.id = b.exchange_id where e.slug = ${venue} and b.time >= ${at(from)} order by b.time`;
  return new Map(rows.map((row) => [Number(row.t), [row.open, row.high, row.low, row.close, row.volume, row.path] as string[]]));
}
async function counts(venue: string): Promise<Record<string, number>> {
  const rows = await db.sql`select k.outcome, k.candles::int as n from market.venue_candle_counts k join market.exchanges e on e.id = k.exchange_id where e.slug = ${venue}`;
  return Object.fromEntries(rows.map((row) => [row.outcome, row.n]));
}
/** the replay's REST candle of a minute, as the venue's REST answers carry it */
function restCandle(venue: StreamVenue, minute: number): string[] {
  const candle = replay.model.minute(replay.market(venue, 'BTC/USDT')!, minute, minute + MINUTE)!;
  return [num(candle.o), num(candle.h), num(candle.l), num(candle.c), num(candle.v)];
}
const sameNumbers = (a: string[] | undefined, b: string[]) => !!a && b.every((value, i) => Number(a[i]) === Number(value));
const documented = (venue: StreamVenue, minute: number): StreamCandle => {
  const i = STREAM_VENUES.indexOf(venue);
  // one close for all (the index bar's close is then exactly it), each venue its own extremes and volume
  return { time: minute, open: `6010${i}.25`, high: `6030${i}.5`, low: `5990${i}.125`, close: '60150.75', volume: `1${i}.0625` };
};
/** coinbase's trades of a minute whose candle is `candle`: open, high, low, close, in that order, their sizes summing to its volume */
const tradesOf = (minute: number, c: { open: string; high: string; low: string; close: string; sizes: string[] }, firstId: number) =>
  [c.open, c.high, c.low, c.close].map((price, i) => ({ id: String(firstId + i), time: minute + 5_000 + i * 10_000, price, size: c.sizes[i]! }));

test.serial('from start, REST fills each venue\'s minutes of the last ten; then each venue\'s streamed candle of a minute reaches its venue bar and the index bar with its documented values', async (t) => {
  await until('REST filled every venue up to the open minute', async () => {
    const rows = await db.sql`select count(*)::int as n from market.venue_markets m where m.candles_until = ${at(M)}`;
    return rows[0]!.n === STREAM_VENUES.length;
  }, { timeoutMs: 30_000 });
  for (const venue of STREAM_VENUES) {
    const bars = await venueBars(venue);
    // as the minute job's first look: the closed minutes since ten minutes ago (M+20 s): M-9 … M-1
    t.is(bars.size, 9, `${venue}: the closed minutes of the last ten`);
    t.true(sameNumbers(bars.get(M - MINUTE), restCandle(venue, M - MINUTE)), `${venue}: its REST candle`);
  }
  await until('every venue subscribed its candles (coinbase its trades)', async () =>
    STREAM_VENUES.every((venue) => streams.subscriptions(venue, 'candles').length > 0), { timeoutMs: 15_000 });

  // minute M in progress on the candle channels; coinbase's trades of M+1 (its subscription saw M begin late)
  for (const venue of CANDLE_VENUES) streams.setCandle(venue, 'BTC/USDT', documented(venue, M));
  await new Promise((resolve) => setTimeout(resolve, 500));
  // M+1 begins: M is final at each venue
  now = M + MINUTE + 1_000;
  for (const venue of CANDLE_VENUES) streams.setCandle(venue, 'BTC/USDT', { ...documented(venue, M + MINUTE), volume: '1' });
  const coinbaseM1 = { open: '60150.5', high: '60200.25', low: '60100.125', close: '60150.75', sizes: ['0.5', '0.25', '0.125', '1.0625'] };
  streams.sendTrades('coinbase', 'BTC/USDT', tradesOf(M + MINUTE, coinbaseM1, 1000));

  await until('every candle venue\'s minute M written from its stream', async () => {
    for (const venue of CANDLE_VENUES) if ((await venueBars(venue, M)).get(M)?.[5] !== 'stream') return false;
    return true;
  }, { timeoutMs: 15_000 }).catch(async (error) => {
    for (const venue of CANDLE_VENUES) t.log(venue, (await venueBars(venue, M)).get(M));
    throw error;
  });
  for (const venue of CANDLE_VENUES) {
    const c = documented(venue, M);
    const bar = (await venueBars(venue, M)).get(M);
    t.true(sameNumbers(bar, [c.open, c.high, c.low, c.close, c.volume]), `${venue}: the documented values of its candle (${bar?.join(' ')})`);
  }
  // the index bar at once, not at the next minute job: the highest high, the lowest low, the one close
  await until('the index bar of M from all the venues\' stream candles', async () => {
    const [bar] = await db.sql`select b.close::float8 as close, b.high::float8 as high, b.low::float8 as low from market.coin_bars_1m b join market.coins c on c.id = b.coin_id
      where c.slug = 'btc' and b.time = ${at(M)}`;
    return bar?.close === 60150.75 && bar.high === 60309.5 && bar.low === 59900.125;
  }, { timeoutMs: 10_000 });

  // coinbase's minute M+1, built from its trades, once M+2 began (and M+1's last trades had 2 s to come)
  now = M + 2 * MINUTE + 3_000;
  streams.sendTrades('coinbase', 'BTC/USDT', [{ id: '2000', time: M + 2 * MINUTE + 500, price: '60151', size: '1' }]);
  await until('coinbase\'s M+1 from its trades', async () => (await venueBars('coinbase', M)).get(M + MINUTE)?.[5] === 'stream', { timeoutMs: 10_000 });
  t.deepEqual((await venueBars('coinbase', M)).get(M + MINUTE), ['60150.5', '60200.25', '60100.125', '60150.75', '1.9375', 'stream']);
  t.is((await counts('coinbase')).disagreement, undefined);
});

test.serial('each tick the holder records per venue its markets streamed and on REST fallback; market.venue_health shows them with the candles per minute by path', async (t) => {
  const health = () => db.sql`select exchange, markets_streamed, markets_rest_fallback, candles_per_minute_stream::float8 as stream, candles_per_minute_rest::float8 as rest
    from market.venue_health order by exchange`;
  await until('every venue counted: its market streamed', async () => {
    const rows = await health();
    return rows.length === STREAM_VENUES.length && rows.every((row) => row.markets_streamed === 1 && row.markets_rest_fallback === 0);
  }, { timeoutMs: 15_000 }).catch(async (error) => {
    t.log(await health());
    throw error;
  });
  const rows = new Map((await health()).map((row) => [row.exchange as string, row]));
  t.like(rows.get('mexc'), { markets_streamed: 1, markets_rest_fallback: 0 });
  t.like(rows.get('binance'), { markets_streamed: 1, markets_rest_fallback: 0 });
  // the last 5 closed minutes (real time; the test's clock is half an hour back): none of its candles
  t.like(rows.get('binance'), { stream: 0, rest: 0 });
});

test('a minute built from coinbase\'s trades is its REST candle of the minute: first price, extremes, last price, summed sizes', (t) => {
  const minute = M - 5 * MINUTE;
  const [open, high, low, close, volume] = restCandle('coinbase', minute) as [string, string, string, string, string];
  // the sizes: three small ones and the rest, to the last digit of the REST volume
  const scale = (volume.split('.')[1] ?? '').length;
  const units = BigInt(volume.replace('.', '')) - 3n;
  const text = (value: bigint) => (scale ? `${value / 10n ** BigInt(scale)}.${(value % 10n ** BigInt(scale)).toString().padStart(scale, '0')}` : String(value));
  const sizes = [text(1n), text(1n), text(1n), text(units)];
  const trades = tradesOf(minute, { open, high, low, close, sizes }, 1).map((trade) => ({ id: trade.id, timestamp: trade.time, price: trade.price, amount: trade.size }));
  // in the venue's order whatever the order received; a trade of the next minute is not the minute's
  const built = candleFromTrades(minute, [trades[3]!, trades[1]!, trades[0]!, trades[2]!, { id: '9', timestamp: minute + MINUTE, price: '1', amount: '5' }]);
  t.deepEqual(built?.slice(1).map(Number), [open, high, low, close, volume].map(Number));
  t.is(built?.[5], volume.replace(/\.?0+$/, ''));
  t.is(candleFromTrades(minute + 2 * MINUTE, trades), null, 'a minute without trades has no candle, as at the venue');
});

test.serial('a cut stream is filled from REST: no minute missing, none written twice', async (t) => {
  // binance's stream cut and kept away for three minutes
  streams.setCandle('binance', 'BTC/USDT', null);
  streams.unreachable('binance', true);
  streams.cut('binance');
  await new Promise((resolve) => setTimeout(resolve, 500));
  now = M + 5 * MINUTE + (WAIT_SECONDS + 1) * 1_000;
  await until('REST filled binance up to M+5', async () => (await venueBars('binance', M)).has(M + 4 * MINUTE), { timeoutMs: 15_000 });
  for (const minute of [M + MINUTE, M + 2 * MINUTE, M + 3 * MINUTE, M + 4 * MINUTE]) {
    t.true(sameNumbers((await venueBars('binance', M)).get(minute), restCandle('binance', minute)), `${at(minute)}: binance's REST candle`);
  }
  // back: its stream gives M+5 once M+6 begins
  streams.unreachable('binance', false);
  await until('binance subscribed again', async () => streams.subscriptions('binance', 'candles').length > 0, { timeoutMs: 15_000 });
  streams.setCandle('binance', 'BTC/USDT', documented('binance', M + 5 * MINUTE));
  await new Promise((resolve) => setTimeout(resolve, 500));
  now = M + 6 * MINUTE + 1_000;
  streams.setCandle('binance', 'BTC/USDT', documented('binance', M + 6 * MINUTE));
  await until('binance\'s M+5 from its stream', async () => (await venueBars('binance', M)).get(M + 5 * MINUTE)?.[5] === 'stream', { timeoutMs: 10_000 });

  const bars = await venueBars('binance');
  const minutes = [...bars.keys()];
  t.deepEqual(minutes, Array.from({ length: 15 }, (_, i) => M - 9 * MINUTE + i * MINUTE), 'every minute from the first REST fill to M+5, none missing');
  const counted = await counts('binance');
  t.is((counted.rest ?? 0) + (counted.stream ?? 0), bars.size, `each minute written once (${JSON.stringify(counted)})`);
  t.is(counted.stream, 2, 'M and M+5 from the stream');

  // mexc, whose stream brought M and then only its M+1 in progress: the minutes it left out were filled
  // from REST each time they were late (M+1 … M+4 at M+5 and 6 s)
  const mexc = await venueBars('mexc');
  t.deepEqual([...mexc.keys()], Array.from({ length: 14 }, (_, i) => M - 9 * MINUTE + i * MINUTE), 'mexc: every minute to M+4');
  t.deepEqual([...mexc.entries()].filter(([, bar]) => bar[5] === 'stream').map(([minute]) => minute), [M], 'mexc: M from its stream, the others from REST');
  t.like(await counts('mexc'), { rest: 13, stream: 1 }, 'mexc: each minute written once');
});

test.serial('a stream candle of a minute REST already stored that disagrees: REST is kept, the disagreement counted', async (t) => {
  // okx's minute M+6 is late: REST stands for it after the wait
  streams.setCandle('okx', 'BTC/USDT', null);
  now = M + 7 * MINUTE + (WAIT_SECONDS + 1) * 1_000;
  await until('okx\'s M+6 from REST', async () => (await venueBars('okx', M)).get(M + 6 * MINUTE)?.[5] === 'rest', { timeoutMs: 15_000 });
  // then its stream's candle of M+6 comes, with other values, and M+7 begins
  streams.sendCandle('okx', 'BTC-USDT', { time: M + 6 * MINUTE, open: '1.5', high: '2.5', low: '1.25', close: '2', volume: '3' });
  await new Promise((resolve) => setTimeout(resolve, 300));
  streams.sendCandle('okx', 'BTC-USDT', { time: M + 7 * MINUTE, open: '1.5', high: '2.5', low: '1.25', close: '2', volume: '3' });
  // its candle of M+1 (test 1: volume 1), final once M+6 came, disagrees with REST's too
  await until('both disagreements counted', async () => (await counts('okx')).disagreement === 2, { timeoutMs: 10_000 }).catch(async (error) => {
    t.log(await counts('okx'), [...(await venueBars('okx', M)).entries()].map(([time, bar]) => `${at(time)} ${bar.join(' ')}`));
    throw error;
  });
  for (const minute of [M + MINUTE, M + 6 * MINUTE]) {
    t.true(sameNumbers((await venueBars('okx', M)).get(minute), restCandle('okx', minute)), `${at(minute)}: the venue's REST value kept`);
    t.is((await venueBars('okx', M)).get(minute)?.[5], 'rest');
  }
});

test.serial('bad stream candles are refused and counted, and the venue\'s REST candle stands for their minutes', async (t) => {
  const minute = M + 7 * MINUTE;
  // bybit: a volume that goes down within minute M+7 (each sent every interval: both are read)
  streams.setCandle('bybit', 'BTC/USDT', { time: minute, open: '60000', high: '60100', low: '59900', close: '60050', volume: '10' });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  streams.setCandle('bybit', 'BTC/USDT', { time: minute, open: '60000', high: '60100', low: '59900', close: '60060', volume: '5' });
  // gate: a price that is no decimal; kucoin: a minute not yet begun; binance: a market it does not list
  streams.sendCandle('gate', 'BTC_USDT', { time: minute, open: '60000', high: '60100', low: '59900', close: 'abc', volume: '10' });
  streams.sendCandle('kucoin', 'BTC-USDT', { time: minute + 3 * MINUTE, open: '60000', high: '60100', low: '59900', close: '60050', volume: '10' });
  streams.sendCandle('binance', 'FOOUSDT', { time: minute, open: '1', high: '1', low: '1', close: '1', volume: '1' });
  await until('each refusal counted', async () =>
    (await counts('bybit')).refused_volume_down === 1 && (await counts('gate')).refused_not_decimal === 1
    && (await counts('kucoin')).refused_future === 1 && (await counts('binance')).refused_unlisted === 1, { timeoutMs: 10_000 }).catch(async (error) => {
    for (const venue of ['bybit', 'gate', 'kucoin', 'binance']) t.log(venue, await counts(venue));
    throw error;
  });
  // M+8 begins: the refused minutes are REST's
  now = M + 8 * MINUTE + 1_000;
  for (const venue of ['bybit', 'gate'] as const) {
    await until(`${venue}'s M+7 from REST`, async () => (await venueBars(venue, M)).get(minute)?.[5] === 'rest', { timeoutMs: 10_000 });
    t.true(sameNumbers((await venueBars(venue, M)).get(minute), restCandle(venue, minute)), `${venue}: its REST candle`);
  }
  const [metric] = await db.sql`select value from app.metrics_snapshot('1 minute') where metric = 'mdapi_venue_candles_total' and labels ->> 'venue' = 'bybit' and labels ->> 'outcome' = 'refused_volume_down'`;
  t.is(metric?.value, 1, 'in /metrics');
});

test.serial('a candle its venue marks closed (binance x, okx confirm, bybit confirm, gate w) is final at once, before its next minute starts', async (t) => {
  const minute = M + 8 * MINUTE;
  const venues = ['binance', 'okx', 'bybit', 'gate'] as const;
  for (const venue of venues) streams.setCandle(venue, 'BTC/USDT', null);
  // the minute just ended; no candle of the next one yet, and REST's wait not over
  now = minute + MINUTE + 1_000;
  for (const venue of venues) streams.sendCandle(venue, replay.market(venue, 'BTC/USDT')!.id, { ...documented(venue, minute), closed: true });
  await until('the closed candles written from the streams', async () => {
    for (const venue of venues) if ((await venueBars(venue, M)).get(minute)?.[5] !== 'stream') return false;
    return true;
  }, { timeoutMs: 10_000 });
  for (const venue of venues) {
    const c = documented(venue, minute);
    t.true(sameNumbers((await venueBars(venue, M)).get(minute), [c.open, c.high, c.low, c.close, c.volume]), `${venue}: its closed candle`);
  }
});

test.serial('a minute REST cannot fill before the stream brings the next one stays REST\'s: the coverage waits before the gap, and REST fills it once the venue answers again', async (t) => {
  const [gap, next] = [M + 9 * MINUTE, M + 10 * MINUTE];
  const id = replay.market('kraken', 'BTC/USDT')!.id;
  const coverage = async () => {
    const [row] = await db.sql`select (extract(epoch from m.candles_until) * 1000)::float8 as until from market.venue_markets m
      join market.exchanges e on e.id = m.exchange_id where e.slug = 'kraken' and m.symbol = 'BTC/USDT'`;
    return Number(row!.until);
  };
  // kraken's stream skips M+9, and its REST candles fail while M+9 is late
  streams.setCandle('kraken', 'BTC/USDT', null);
  replay.faults.set('kraken', { status: 500, path: '/0/public/OHLC' });
  now = M + 10 * MINUTE + (WAIT_SECONDS + 1) * 1_000;
  streams.sendCandle('kraken', id, documented('kraken', next));
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  // M+11 begins: the stream's M+10 is final, and written; REST still fails
  now = M + 11 * MINUTE + 1_000;
  streams.sendCandle('kraken', id, documented('kraken', M + 11 * MINUTE));
  await until('kraken\'s M+10 from its stream', async () => (await venueBars('kraken', M)).get(next)?.[5] === 'stream', { timeoutMs: 10_000 });
  t.false((await venueBars('kraken', M)).has(gap), 'M+9 not stored yet');
  t.true(await coverage() <= gap, `candles_until stays before the gap, not after the stream's minute (${at(await coverage())})`);

  // the venue answers again once its failed request is recorded, and its back-off (30 s of real time) is
  // cleared, as an operator may: REST brings M+9
  await until('kraken\'s failed REST request recorded', async () => {
    const [row] = await db.sql`select s.failures from market.venue_status s join market.exchanges e on e.id = s.exchange_id where e.slug = 'kraken'`;
    return (row?.failures ?? 0) > 0;
  }, { timeoutMs: 15_000 });
  replay.faults.clear('kraken');
  await db.sql`update market.venue_status s set backoff_until = null from market.exchanges e where e.id = s.exchange_id and e.slug = 'kraken'`;
  now = M + 13 * MINUTE + (WAIT_SECONDS + 1) * 1_000;
  await until('kraken\'s M+9 from REST, and its minutes through M+12', async () => {
    const bars = await venueBars('kraken', M);
    return bars.get(gap)?.[5] === 'rest' && bars.has(M + 12 * MINUTE);
  }, { timeoutMs: 15_000 }).catch(async (error) => {
    t.log(replay.requests('kraken'), await db.sql`select s.* from market.venue_status s join market.exchanges e on e.id = s.exchange_id where e.slug = 'kraken'`, at(await coverage()), [...(await venueBars('kraken', M)).keys()].map(at));
    throw error;
  });
  t.true(sameNumbers((await venueBars('kraken', M)).get(gap), restCandle('kraken', gap)), 'its REST candle');
  const minutes = [...(await venueBars('kraken')).keys()];
  t.deepEqual(minutes, Array.from({ length: minutes.length }, (_, i) => M - 9 * MINUTE + i * MINUTE), 'no minute missing from the first REST fill on');
});

test.serial('after a statement failed (the database went away), the holder reads its coverage again from the database: a minute the database lost is filled from REST', async (t) => {
  const lost = M + 13 * MINUTE;
  streams.setCandle('binance', 'BTC/USDT', null);
  // binance's M+13 late, from REST
  now = M + 14 * MINUTE + (WAIT_SECONDS + 1) * 1_000;
  await until('binance\'s M+13 from REST', async () => (await venueBars('binance', M)).get(lost)?.[5] === 'rest', { timeoutMs: 15_000 });
  // the database loses that write (acknowledged, then gone with a killed database): the holder still counts it stored
  await db.sql`delete from market.venue_bars_1m b using market.exchanges e where e.id = b.exchange_id and e.slug = 'binance' and b.time = ${at(lost)}`;
  await db.sql`update market.venue_markets m set candles_until = ${at(lost)} from market.exchanges e where e.id = m.exchange_id and e.slug = 'binance'`;
  // a statement of the holder fails (its next fill's look at the venues' back-offs), as while the database is away
  await db.sql`alter function market.venue_backoff(text[], timestamptz) rename to venue_backoff_away`;
  try {
    now = M + 15 * MINUTE + (WAIT_SECONDS + 1) * 1_000;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
  } finally {
    await db.sql`alter function market.venue_backoff_away(text[], timestamptz) rename to venue_backoff`;
  }
  await until('binance\'s lost M+13 and its M+14 from REST', async () => {
    const bars = await venueBars('binance', M);
    return bars.get(lost)?.[5] === 'rest' && bars.get(lost + MINUTE)?.[5] === 'rest';
  }, { timeoutMs: 15_000 }).catch(async (error) => {
    t.log([...(await venueBars('binance', M)).keys()].map(at));
    throw error;
  });
  t.true(sameNumbers((await venueBars('binance', M)).get(lost), restCandle('binance', lost)), 'its REST candle');
  const minutes = [...(await venueBars('binance')).keys()];
  t.deepEqual(minutes, Array.from({ length: minutes.length }, (_, i) => M - 9 * MINUTE + i * MINUTE), 'no minute missing');
});

test.serial('a minute the database lacks between stored ones, which the holder counts stored (no statement failed), is asked of REST again within STREAM_CANDLE_CHECK_SECONDS', async (t) => {
  // a stored minute between stored ones (whichever: the earlier tests' minutes depend on the machine's pace)
  let lost: number | undefined;
  await until('okx\'s minutes stored on both sides of one', async () => {
    const bars = await venueBars('okx', M);
    lost = [...bars.keys()].find((minute) => bars.has(minute - MINUTE) && bars.has(minute + MINUTE));
    return lost !== undefined;
  }, { timeoutMs: 15_000 });
  // gone, however (a write that did not last, a race between the paths): candles_until untouched, nothing fails
  await db.sql`delete from market.venue_bars_1m b using market.exchanges e where e.id = b.exchange_id and e.slug = 'okx' and b.time = ${at(lost!)}`;
  await until('okx\'s lost minute from REST again', async () => (await venueBars('okx', M)).get(lost!)?.[5] === 'rest', { timeoutMs: 15_000 });
  t.true(sameNumbers((await venueBars('okx', M)).get(lost!), restCandle('okx', lost!)), 'its REST candle');
  const minutes = [...(await venueBars('okx')).keys()];
  t.deepEqual(minutes, Array.from({ length: minutes.length }, (_, i) => minutes[0]! + i * MINUTE), 'no minute missing');
});

test.serial('a minute missing between stored ones that the venue has no candle of (nobody traded) is asked of REST once, not at every check', async (t) => {
  const candleRequests = () => Object.entries(replay.requests('okx')).filter(([path]) => path.includes('candles')).reduce((sum, [, n]) => sum + n, 0);
  let quiet: number | undefined;
  await until('okx\'s minutes stored on both sides of one', async () => {
    const bars = await venueBars('okx', M);
    quiet = [...bars.keys()].find((minute) => bars.has(minute - MINUTE) && bars.has(minute + MINUTE));
    return quiet !== undefined;
  }, { timeoutMs: 15_000 });
  // the venue has no candle of it (nobody traded then), and the database none either
  const market = replay.market('okx', 'BTC/USDT')!;
  replay.model.quietMinutes.set(market, new Set([quiet!]));
  try {
    await db.sql`delete from market.venue_bars_1m b using market.exchanges e where e.id = b.exchange_id and e.slug = 'okx' and b.time = ${at(quiet!)}`;
    const before = candleRequests();
    // the next check (STREAM_CANDLE_CHECK_SECONDS: 1) finds the gap and asks REST, which answers without it
    await until('okx\'s REST asked for the gap', () => candleRequests() > before, { timeoutMs: 10_000, everyMs: 50 });
    const asked = candleRequests();
    // three checks more: the minute is known quiet, REST is not asked again
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    t.is(candleRequests(), asked, `okx's candle requests after the first answer: ${candleRequests() - asked}`);
    t.false((await venueBars('okx', M)).has(quiet!), 'no candle made up for the quiet minute');
  } finally {
    replay.model.quietMinutes.delete(market);
  }
});
