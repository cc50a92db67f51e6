// The stream holder's candle subscriptions (issue 46) on the loopback replay of the venues' streams
// (dev/venues/streams.ts), the replay's own prices and candles flowing (modelPrices), on a clock the
// test moves: a venue with more markets than its subscriptions per connection (CANDLE_STREAMS) gets
// as many connections as it takes, none over the limit; a venue that silently drops half of a
// connection's subscriptions has them re-subscribed (the connection reopened) within a minute, and
// those still silent after it counted on REST fallback, their minutes from REST, none missing or twice.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { num, type VenueReplay } from '../../dev/venues/replay.ts';
import type { StreamVenue, VenueStreams } from '../../dev/venues/streams.ts';
import { closeStreamVenues, coinStreamVenues } from '../helpers/venue-streams.ts';
import { StreamHolder } from '../../src/sources/stream/index.ts';
import { ExchangesSource, exchangesSettings } from '../../src/sources/exchanges/index.ts';
import { CANDLE_STREAMS } from '../../src/sources/stream/candles.ts';
import { createLogger } from '../../src/log.ts';
import { until } from '../../dev/wait.ts';

const MINUTE = 60_000;
/** the minute the test starts in, half an hour ago: every market's candles are stored up to it */
const M = Math.floor(Date.now() / MINUTE) * MINUTE - 30 * MINUTE;
let now = M + 5_000;
/** the holder's STREAM_CANDLE_WAIT_SECONDS (test/helpers/venue-streams.ts) */
const WAIT_SECONDS = 5;
/**
 * bitget and mexc: more than their 50 and 30 a connection (the replay refuses mexc's 31st); kucoin (a
 * watchOHLCV per market) and binance (watchOHLCVForSymbols) lose half their subscriptions
 */
const MARKETS = { bitget: 55, mexc: 35, kucoin: 12, binance: 12 } satisfies Partial<Record<StreamVenue, number>>;

let [db, replay, streams, holder] = [null, null, null, null] as unknown as [TestDatabase, VenueReplay, VenueStreams, StreamHolder];

test.before(async () => {
  db = await testDatabase();
  const seeded = await coinStreamVenues(db, { markets: MARKETS, now: () => now, storedUntil: M });
  ({ replay, streams } = seeded);
  const source = new ExchangesSource({ ...exchangesSettings(seeded.config), clock: () => now });
  holder = new StreamHolder(seeded.config, process.env.DEBUG_STREAM ? createLogger({ ...seeded.config, LOG_LEVEL: 'debug' }) : undefined, undefined, source).start();
  await until('every market subscribed to its candles', async () =>
    (Object.keys(MARKETS) as (keyof typeof MARKETS)[]).every((venue) => new Set(streams.subscriptions(venue, 'candles')).size === MARKETS[venue]), { timeoutMs: 30_000 });
});
test.after.always(() => closeStreamVenues({ holder, streams, replay, db }));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const at = (ms: number) => new Date(ms).toISOString();
/** the venue's markets streamed and on REST fallback, as the holder records them after this call */
async function counted(venue: string): Promise<{ streamed: number; fallback: number }> {
  const after = new Date();
  let row: { streamed: number; fallback: number } | undefined;
  await until(`${venue}'s markets counted`, async () => {
    [row] = await db.sql<{ streamed: number; fallback: number }[]>`select s.stream_markets as streamed, s.rest_fallback_markets as fallback
      from market.venue_status s join market.exchanges e on e.id = s.exchange_id where e.slug = ${venue} and s.candle_markets_at > ${after}`;
    return row !== undefined;
  }, { timeoutMs: 10_000 });
  return row!;
}
/** the venue's stored minutes per market (its coin) from M: minute start (ms) → path */
async function minutesOf(venue: string): Promise<Map<string, Map<number, string>>> {
  const rows = await db.sql`select c.symbol, (extract(epoch from b.time) * 1000)::float8 as t, b.path
    from market.venue_bars_1m b join market.exchanges e on e.id = b.exchange_id join market.coins c on c.id = b.coin_id
    where e.slug = ${venue} and b.time >= ${at(M)} order by b.time`;
  const minutes = new Map<string, Map<number, string>>();
  for (const row of rows) {
    if (!minutes.has(row.symbol)) minutes.set(row.symbol, new Map());
    minutes.get(row.symbol)!.set(Number(row.t), row.path);
  }
  return minutes;
}
/** markets whose candles a venue dropped for good (their minutes are REST's) */
let droppedForGood = 0;
/**
 * The clock moved on, a second into the minute it crosses first until every market still streaming
 * has that minute's candle stored: REST is not late for the minutes the streams bring (a clock that
 * jumps past a minute's wait lets the fill race the stream for them).
 */
async function moveTo(to: number, silent = 0) {
  const boundary = Math.floor(to / MINUTE) * MINUTE;
  if (boundary > now && to > boundary + 1_000) {
    now = boundary + 1_000;
    const streaming = Object.values(MARKETS).reduce((sum, n) => sum + n, 0) - droppedForGood - silent;
    await until(`the streams' candles of ${at(boundary - MINUTE)}`, async () => {
      const [row] = await db.sql`select count(*)::int as n from market.venue_markets where base_coin_id is not null and candles_until >= ${at(boundary)}`;
      return row!.n >= streaming;
    }, { timeoutMs: 30_000 }).catch(async (error) => {
      // the markets behind, for the failure's reader
      console.log(await db.sql`select e.slug, m.candles_until, string_agg(m.exchange_symbol, ' ') as markets from market.venue_markets m
        join market.exchanges e on e.id = m.exchange_id where m.candles_until < ${at(boundary)} group by 1, 2 order by 1, 2`);
      throw error;
    });
  }
  now = to;
  await sleep(500);
}
/**
 * The minute closes with `silent` markets silent in it, and its wait passes: REST brings their candles
 * of it (they traded), which their streams said nothing of; then the streams flow a few seconds more
 * (a connection's first messages after a pause tell no subscription lost)
 */
async function silence(silent: number) {
  await sleep(500);
  await moveTo(Math.floor(now / MINUTE) * MINUTE + MINUTE + (WAIT_SECONDS + 1) * 1_000, silent);
  // in steps shorter than a gap in the flow
  for (const step of [3_000, 3_000]) await moveTo(now + step);
}
async function written(venue: string): Promise<number> {
  const [row] = await db.sql`select coalesce(sum(k.candles) filter (where k.outcome in ('rest', 'stream')), 0)::int as n
    from market.venue_candle_counts k join market.exchanges e on e.id = k.exchange_id where e.slug = ${venue}`;
  return row!.n;
}

test.serial('a venue with more markets than its subscriptions per connection gets ceil(markets / limit) connections, none over the limit, every market subscribed once', (t) => {
  for (const venue of ['bitget', 'mexc'] as const) {
    const limit = CANDLE_STREAMS[venue].perConnection;
    const connections = streams.connectionSubscriptions(venue, 'candles').filter((ids) => ids.length > 0);
    t.is(connections.length, Math.ceil(MARKETS[venue] / limit), `${venue}: ${MARKETS[venue]} markets at ${limit} a connection`);
    t.true(connections.every((ids) => ids.length <= limit), `${venue} per connection: ${connections.map((ids) => ids.length).join(', ')}`);
    const all = connections.flat();
    t.is(all.length, MARKETS[venue], `${venue}: none subscribed twice`);
    t.deepEqual(all.sort(), Array.from({ length: MARKETS[venue] }, (_, i) => replay.market(venue, `COIN${i + 1}/USDT`)!.id.toUpperCase()).sort());
  }
});

test.serial('mexc\'s protobuf candles reach the venue bars: a minute of each market from its stream, with the replay\'s values', async (t) => {
  const minute = Math.floor(now / MINUTE) * MINUTE;
  // the streams' first candles of the minute in (the last subscriptions' too)
  await sleep(1_000);
  await moveTo(minute + MINUTE + 2_000);
  const minutes = await minutesOf('mexc');
  t.is(minutes.size, MARKETS.mexc, 'every market');
  t.true([...minutes.values()].every((byMinute) => byMinute.get(minute) === 'stream'), `${at(minute)} from the stream`);
  const [row] = await db.sql`select b.open::text, b.high::text, b.low::text, b.close::text, b.volume::text from market.venue_bars_1m b
    join market.exchanges e on e.id = b.exchange_id join market.coins c on c.id = b.coin_id where e.slug = 'mexc' and c.symbol = 'COIN7' and b.time = ${at(minute)}`;
  const candle = replay.model.minute(replay.market('mexc', 'COIN7/USDT')!, minute, minute + MINUTE)!;
  t.deepEqual(row && Object.values(row).map(Number), [candle.o, candle.h, candle.l, candle.c, candle.v].map((value) => Number(num(value))), 'its REST candle\'s values');
});

test.serial('half of a venue\'s subscriptions dropped silently: re-subscribed within a minute, delivering again', async (t) => {
  t.deepEqual(await counted('kucoin'), { streamed: MARKETS.kucoin, fallback: 0 });
  const opened = streams.connections('kucoin');
  const dropped = streams.dropSubscriptions('kucoin', 'once');
  t.is(dropped.length, MARKETS.kucoin / 2);
  // silent in a minute REST has their candles of, while their siblings deliver: their connection reopened
  await silence(dropped.length);
  await until('kucoin\'s connection reopened', async () => streams.connections('kucoin') > opened, { timeoutMs: 10_000 });
  await until('the dropped markets subscribed again', async () => dropped.every((id) => streams.subscriptions('kucoin', 'candles').includes(id)), { timeoutMs: 10_000 });
  await sleep(1_000);
  // the next minute: delivering again, so streamed
  await moveTo(Math.floor(now / MINUTE) * MINUTE + MINUTE + 1_000);
  t.deepEqual(await counted('kucoin'), { streamed: MARKETS.kucoin, fallback: 0 });
  t.is(streams.connections('kucoin'), opened + 1, 'one reopening');
});

test.serial('half of a venue\'s subscriptions dropped for good: re-subscribed once, then counted on REST fallback; every minute stored once, none missing', async (t) => {
  const opened = streams.connections('binance');
  const dropped = streams.dropSubscriptions('binance', 'sticky');
  droppedForGood = dropped.length;
  t.is(dropped.length, MARKETS.binance / 2);
  await silence(0);
  await until('binance\'s connection reopened', async () => streams.connections('binance') > opened, { timeoutMs: 10_000 });
  await sleep(1_000);
  // the next minute, still silent after the re-subscription: on REST fallback, and not reopened again
  await moveTo(Math.floor(now / MINUTE) * MINUTE + MINUTE + 1_000);
  t.deepEqual(await counted('binance'), { streamed: MARKETS.binance / 2, fallback: MARKETS.binance / 2 });
  t.is(streams.connections('binance'), opened + 1, 'one reopening');

  // the minutes close: the silent markets' from REST once late, the others' from the stream
  const closedBefore = Math.floor(now / MINUTE) * MINUTE + MINUTE;
  await moveTo(closedBefore + 6_000);
  const expected = Array.from({ length: (closedBefore - M) / MINUTE }, (_, i) => M + i * MINUTE);
  for (const venue of ['binance', 'kucoin'] as const) {
    await until(`${venue}: every market's minutes to ${at(closedBefore)}`, async () => {
      const minutes = await minutesOf(venue);
      return minutes.size === MARKETS[venue] && [...minutes.values()].every((bars) => bars.size === expected.length);
    }, { timeoutMs: 15_000 }).catch(async (error) => {
      t.log(venue, [...(await minutesOf(venue)).entries()].map(([coin, bars]) => `${coin}: ${[...bars.keys()].map(at).join(' ')}`));
      throw error;
    });
    for (const [coin, bars] of await minutesOf(venue)) t.deepEqual([...bars.keys()], expected, `${venue} ${coin}: every minute from M, none missing`);
    if (await written(venue) !== MARKETS[venue] * expected.length) {
      t.log(venue, await db.sql`select k.outcome, k.candles from market.venue_candle_counts k join market.exchanges e on e.id = k.exchange_id where e.slug = ${venue}`);
      t.log([...(await minutesOf(venue)).entries()].map(([coin, bars]) => `${coin}: ${[...bars.entries()].map(([time, path]) => `${(time - M) / MINUTE}${path[0]}`).join(' ')}`), dropped);
    }
    t.is(await written(venue), MARKETS[venue] * expected.length, `${venue}: each minute written once`);
  }
  // the last minute: the silent markets' from REST, the others' from the stream
  const last = await minutesOf('binance');
  for (const [coin, bars] of last) {
    t.is(bars.get(closedBefore - MINUTE), dropped.includes(`${coin}USDT`) ? 'rest' : 'stream', `binance ${coin}`);
  }
});
