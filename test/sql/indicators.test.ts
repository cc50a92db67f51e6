// The api.* indicator functions against TA-Lib's C code (the `talib` addon, run under Node 20 by
// dev/talib-reference.cjs) on a fixed 400-day OHLCV series: every indicator, every period
// the API allows, agreement to 1e-8 relative after the warm-up and an identical warm-up length.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { agreement, aligned, generateSeries, insertCoin, readDailyBars, refreshAggregates, talib, type Ohlcv, type TalibCall } from '../../dev/indicators.ts';

const COIN = { id: 4001, slug: 'ta-coin' };
let db: TestDatabase;
let bars: Ohlcv;

test.before(async () => {
  db = await testDatabase();
  await insertCoin(db.sql, COIN, generateSeries(400, 20240601));
  await refreshAggregates(db.sql);
  bars = await readDailyBars(db.sql, COIN.id);
});
test.after.always(() => db?.close());

const TOLERANCE = 1e-8;
type Row = Record<string, string | number | null>;

/** One SQL call over the whole history (no limit), the chosen columns as arrays. */
async function series(call: string, columns: string[]) {
  const rows = (await db.sql.unsafe(`select date::text as date, ${columns.join(', ')} from ${call}`)) as unknown as Row[];
  return { dates: rows.map((row) => row.date as string), ...Object.fromEntries(columns.map((column) => [column, rows.map((row) => row[column] ?? null)])) } as
    { dates: string[] } & Record<string, (string | number | null)[]>;
}

async function reference(call: TalibCall, output = 'outReal') {
  const [reply] = await talib([call]);
  return aligned(reply!, output, bars.close.length);
}

function assertAgrees(t: import('ava').ExecutionContext, label: string, actual: (string | number | null)[], expected: (number | null)[]) {
  const result = agreement(actual, expected);
  t.is(actual.length, expected.length, `${label}: one row per daily bar`);
  t.is(result.warmup, result.expectedWarmup, `${label}: warm-up length`);
  t.deepEqual(result.nullMismatches, [], `${label}: null rows after the warm-up`);
  t.true(result.maxRelative <= TOLERANCE, `${label}: max relative difference ${result.maxRelative} at row ${result.at}`);
}

test('the fixture coin has 400 daily bars with flat days and unchanged closes', (t) => {
  t.is(bars.close.length, 400);
  t.is(bars.date[0], '2023-01-01');
  t.true(bars.close.some((close, i) => i > 0 && close === bars.close[i - 1]));
  t.true(bars.high.some((high, i) => high === bars.low[i]));
});

for (const period of [7, 14, 21, 28]) {
  test(`RSI(${period}) equals TA-Lib RSI`, async (t) => {
    const ours = await series(`api.rsi('${COIN.slug}', ${period})`, ['value']);
    t.deepEqual(ours.dates, bars.date);
    assertAgrees(t, `rsi ${period}`, ours.value!, await reference({ name: 'RSI', inputs: { inReal: bars.close }, options: { optInTimePeriod: period } }));
    t.is(ours.value!.findIndex((value) => value !== null), period, 'TA-Lib lookback: period');
  });

  test(`Stochastic RSI(${period}) equals TA-Lib STOCHRSI(${period}, ${period}, 3, SMA)`, async (t) => {
    const ours = await series(`api.stoch_rsi('${COIN.slug}', ${period})`, ['k', 'd']);
    const call = { name: 'STOCHRSI', inputs: { inReal: bars.close }, options: { optInTimePeriod: period, optInFastK_Period: period, optInFastD_Period: 3, optInFastD_MAType: 0 } };
    const [reply] = await talib([call]);
    assertAgrees(t, `stoch-rsi k ${period}`, ours.k!, aligned(reply!, 'outFastK', bars.close.length));
    assertAgrees(t, `stoch-rsi d ${period}`, ours.d!, aligned(reply!, 'outFastD', bars.close.length));
    t.is(ours.k!.findIndex((value) => value !== null), 2 * period + 1);
  });
}

for (const period of [50, 100, 200]) {
  test(`SMA(${period}) equals TA-Lib SMA, as decimal strings`, async (t) => {
    const ours = await series(`api.sma('${COIN.slug}', ${period})`, ['value']);
    t.is(typeof ours.value!.at(-1), 'string', 'numeric reaches the client as a string');
    assertAgrees(t, `sma ${period}`, ours.value!, await reference({ name: 'SMA', inputs: { inReal: bars.close }, options: { optInTimePeriod: period } }));
  });
}

for (const period of [20, 50, 100]) {
  test(`CCI(${period}) equals TA-Lib CCI`, async (t) => {
    const ours = await series(`api.cci('${COIN.slug}', ${period})`, ['value']);
    assertAgrees(t, `cci ${period}`, ours.value!, await reference({ name: 'CCI', inputs: { high: bars.high, low: bars.low, close: bars.close }, options: { optInTimePeriod: period } }));
  });
}

for (const period of [7, 14, 28]) {
  test(`MFI(${period}) equals TA-Lib MFI`, async (t) => {
    const ours = await series(`api.mfi('${COIN.slug}', ${period})`, ['value']);
    const inputs = { high: bars.high, low: bars.low, close: bars.close, volume: bars.volume };
    assertAgrees(t, `mfi ${period}`, ours.value!, await reference({ name: 'MFI', inputs, options: { optInTimePeriod: period } }));
  });
}

for (const period of [14, 20, 50]) {
  test(`Williams %R(${period}) equals TA-Lib WILLR`, async (t) => {
    const ours = await series(`api.williams_r('${COIN.slug}', ${period})`, ['value']);
    assertAgrees(t, `willr ${period}`, ours.value!, await reference({ name: 'WILLR', inputs: { high: bars.high, low: bars.low, close: bars.close }, options: { optInTimePeriod: period } }));
  });
}

test('MACD 12/26/9 equals TA-Lib MACD (its late seeding of the fast EMA included), as decimal strings', async (t) => {
  const ours = await series(`api.macd('${COIN.slug}')`, ['macd', 'signal', 'histogram']);
  const [reply] = await talib([{ name: 'MACD', inputs: { inReal: bars.close }, options: { optInFastPeriod: 12, optInSlowPeriod: 26, optInSignalPeriod: 9 } }]);
  assertAgrees(t, 'macd', ours.macd!, aligned(reply!, 'outMACD', bars.close.length));
  assertAgrees(t, 'macd signal', ours.signal!, aligned(reply!, 'outMACDSignal', bars.close.length));
  assertAgrees(t, 'macd histogram', ours.histogram!, aligned(reply!, 'outMACDHist', bars.close.length));
  t.is(ours.macd!.findIndex((value) => value !== null), 33);
  t.is(typeof ours.macd!.at(-1), 'string');
  // Every recursive step is rounded to 18 decimals: the scale never grows.
  t.true(ours.signal!.every((value) => value === null || (String(value).split('.')[1] ?? '').length <= 18));
});

test('OBV equals TA-Lib OBV exactly, starting from the first day’s volume', async (t) => {
  const ours = await series(`api.obv('${COIN.slug}')`, ['value']);
  const expected = await reference({ name: 'OBV', inputs: { inReal: bars.close, volume: bars.volume } });
  assertAgrees(t, 'obv', ours.value!, expected);
  t.is(ours.value![0], bars.volume[0]!.toFixed(2));
});

test('ADX(14), +DI and -DI equal TA-Lib ADX, PLUS_DI and MINUS_DI', async (t) => {
  const ours = await series(`api.adx('${COIN.slug}')`, ['adx', 'plus_di', 'minus_di']);
  const inputs = { high: bars.high, low: bars.low, close: bars.close };
  const options = { optInTimePeriod: 14 };
  const [adx, plus, minus] = await talib([{ name: 'ADX', inputs, options }, { name: 'PLUS_DI', inputs, options }, { name: 'MINUS_DI', inputs, options }]);
  assertAgrees(t, 'adx', ours.adx!, aligned(adx!, 'outReal', bars.close.length));
  assertAgrees(t, 'plus_di', ours.plus_di!, aligned(plus!, 'outReal', bars.close.length));
  assertAgrees(t, 'minus_di', ours.minus_di!, aligned(minus!, 'outReal', bars.close.length));
  t.is(ours.adx!.findIndex((value) => value !== null), 27);
  t.is(ours.plus_di!.findIndex((value) => value !== null), 14);
});

test('the building blocks: EMA seeding and skip, Wilder smoothing forms, true range, typical price', async (t) => {
  const [ema] = await db.sql`
    select json_agg(e::float8 order by n) as values from (
      select n, market.ema(x::numeric, 3, 2) over (order by n rows between unbounded preceding and current row) as e
      from unnest(array[5, 7, 1, 2, 3, 4, 10]) with ordinality as u (x, n)) s`;
  // skip 5 and 7; the mean of 1, 2, 3 seeds; then (4 - 2) * 0.5 + 2 = 3 and (10 - 3) * 0.5 + 3 = 6.5
  t.deepEqual(ema!.values, [null, null, null, null, 2, 3, 6.5]);
  const [wilder] = await db.sql`
    select json_agg(m order by n) as mean, json_agg(s order by n) as sum from (
      select n, market.wilder_mean(x, 2) over w as m, market.wilder_sum(x, 2) over w as s
      from unnest(array[null, 4, 2, 6]::float8[]) with ordinality as u (x, n)
      window w as (order by n rows between unbounded preceding and current row)) s`;
  t.deepEqual(wilder!.mean, [null, null, 3, 4.5]);
  t.deepEqual(wilder!.sum, [null, null, 4 - 2 + 2, 4 - 2 + 6]);
  const [blocks] = await db.sql`
    select market.true_range(10, 8, 12) as gap_down, market.true_range(10, 8, 5) as gap_up, market.true_range(10, 8, null) as first,
      market.typical_price(3::float8, 1, 2) as tp`;
  t.deepEqual(blocks, { gap_down: 4, gap_up: 5, first: null, tp: 2 });
});
