// The indicators TA-Lib does not define (CMF, rolling VWAP, price and volume volatility) against a
// straightforward implementation written here from their documented definitions; warm-up on a
// 40-day coin for every indicator; the window cut; the snapshot's rules; the error codes.
// Serial: two tests rewrite bars and refresh the aggregates, which must not interleave with reads.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { agreement, aligned, generateSeries, insertCoin, readDailyBars, refreshAggregates, talib, type Ohlcv } from '../../dev/indicators.ts';

const COIN = { id: 4101, slug: 'custom-coin' };
const YOUNG = { id: 4102, slug: 'young-coin' };
const EMPTY = { id: 4103, slug: 'no-bars-coin' };
let db: TestDatabase;
let bars: Ohlcv;
let young: Ohlcv;

test.before(async () => {
  db = await testDatabase();
  await insertCoin(db.sql, COIN, generateSeries(400, 77));
  await insertCoin(db.sql, YOUNG, generateSeries(40, 5, '2024-03-01'));
  await insertCoin(db.sql, EMPTY, []);
  await refreshAggregates(db.sql);
  bars = await readDailyBars(db.sql, COIN.id);
  young = await readDailyBars(db.sql, YOUNG.id);
});
test.after.always(() => db?.close());

type Row = Record<string, string | number | null>;
const rows = async (call: string) => [...(await db.sql.unsafe(`select *, date::text as date from ${call}`))] as unknown as Row[];
const column = (list: Row[], name: string) => list.map((row) => row[name] ?? null);

function assertAgrees(t: import('ava').ExecutionContext, label: string, actual: (string | number | null)[], expected: (number | null)[]) {
  const result = agreement(actual, expected);
  t.is(actual.length, expected.length, `${label}: one row per daily bar`);
  t.is(result.warmup, result.expectedWarmup, `${label}: warm-up length`);
  t.deepEqual(result.nullMismatches, [], `${label}: null rows after the warm-up`);
  t.true(result.maxRelative <= 1e-8, `${label}: max relative difference ${result.maxRelative} at row ${result.at}`);
}

// --- the reference implementations: plain loops over the documented definitions -----------------

const windows = <T>(length: number, period: number, value: (from: number, to: number) => T | null) =>
  Array.from({ length }, (_, i) => (i < period - 1 ? null : value(i - period + 1, i)));

function chaikinMoneyFlow(b: Ohlcv, period: number) {
  return windows(b.close.length, period, (from, to) => {
    let flow = 0;
    let volume = 0;
    for (let j = from; j <= to; j++) {
      const range = b.high[j]! - b.low[j]!;
      const multiplier = range === 0 ? 0 : (b.close[j]! - b.low[j]! - (b.high[j]! - b.close[j]!)) / range;
      flow += multiplier * b.volume[j]!;
      volume += b.volume[j]!;
    }
    return volume > 0 ? flow / volume : null;
  });
}

function rollingVwap(b: Ohlcv, period: number) {
  return windows(b.close.length, period, (from, to) => {
    let weighted = 0;
    let volume = 0;
    for (let j = from; j <= to; j++) {
      weighted += ((b.high[j]! + b.low[j]! + b.close[j]!) / 3) * b.volume[j]!;
      volume += b.volume[j]!;
    }
    return volume > 0 ? weighted / volume : null;
  });
}

/** 100 * sample standard deviation of the last `period` log changes; null for the first `period` rows. */
function logChangeVolatility(values: number[], period: number) {
  return values.map((_, i) => {
    if (i < period) return null;
    const changes: number[] = [];
    for (let j = i - period + 1; j <= i; j++) {
      if (!(values[j]! > 0 && values[j - 1]! > 0)) return null;
      changes.push(Math.log(values[j]! / values[j - 1]!));
    }
    const mean = changes.reduce((sum, x) => sum + x, 0) / period;
    const variance = changes.reduce((sum, x) => sum + (x - mean) ** 2, 0) / (period - 1);
    return 100 * Math.sqrt(variance);
  });
}

// --- the custom indicators ------------------------------------------------------------------------

for (const period of [20, 10, 50]) {
  test.serial(`CMF(${period}) follows its definition`, async (t) => {
    const ours = column(await rows(`api.cmf('${COIN.slug}', ${period})`), 'value');
    assertAgrees(t, `cmf ${period}`, ours, chaikinMoneyFlow(bars, period));
    t.true(ours.every((value) => value === null || (typeof value === 'number' && Math.abs(value) <= 1)));
  });

  test.serial(`rolling VWAP(${period}) follows its definition, as decimal strings`, async (t) => {
    const ours = column(await rows(`api.vwap('${COIN.slug}', ${period})`), 'value');
    assertAgrees(t, `vwap ${period}`, ours, rollingVwap(bars, period));
    t.is(typeof ours.at(-1), 'string');
  });
}

for (const period of [7, 14, 30]) {
  test.serial(`price volatility(${period}) follows its definition`, async (t) => {
    const ours = column(await rows(`api.price_volatility('${COIN.slug}', ${period})`), 'value');
    assertAgrees(t, `price volatility ${period}`, ours, logChangeVolatility(bars.close, period));
  });

  test.serial(`volume volatility(${period}) follows its definition`, async (t) => {
    const ours = column(await rows(`api.volume_volatility('${COIN.slug}', ${period})`), 'value');
    assertAgrees(t, `volume volatility ${period}`, ours, logChangeVolatility(bars.volume, period));
  });
}

test.serial('a window with a day without volume has no volume volatility, CMF or VWAP then', async (t) => {
  const [{ date }] = (await db.sql`
    select (time at time zone 'UTC')::date::text as date from market.coin_bars_1d where coin_id = ${YOUNG.id} order by time offset 30 limit 1`) as unknown as [{ date: string }];
  const sql = db.sql;
  // A scratch coin: the same 40 days, with no volume on day 31.
  const series = generateSeries(40, 5, '2024-03-01').map((bar) => (bar.date === date ? { ...bar, volume: '0' } : bar));
  await insertCoin(sql, { id: 4104, slug: 'zero-volume-coin' }, series);
  await refreshAggregates(sql);
  const volatility = column(await rows(`api.volume_volatility('zero-volume-coin', 7)`), 'value');
  t.deepEqual(volatility.slice(30, 38), Array(8).fill(null), 'changes from and to 0 are undefined for the 8 windows that hold them');
  t.not(volatility[38], null);
  const cmf = column(await rows(`api.cmf('zero-volume-coin', 1)`), 'value');
  t.is(cmf[30], null);
  const vwap = column(await rows(`api.vwap('zero-volume-coin', 1)`), 'value');
  t.is(vwap[30], null);
});

// --- warm-up on a young coin ----------------------------------------------------------------------

test.serial('a 40-day coin: every series has a row per day and TA-Lib’s warm-up of leading nulls', async (t) => {
  const leading = (values: unknown[]) => {
    const index = values.findIndex((value) => value !== null);
    return index < 0 ? values.length : index;
  };
  const expected: [string, string, number][] = [
    [`api.rsi('${YOUNG.slug}', 14)`, 'value', 14],
    [`api.rsi('${YOUNG.slug}', 28)`, 'value', 28],
    [`api.stoch_rsi('${YOUNG.slug}', 14)`, 'k', 29],
    [`api.stoch_rsi('${YOUNG.slug}', 14)`, 'd', 29],
    [`api.stoch_rsi('${YOUNG.slug}', 21)`, 'k', 40],
    [`api.sma('${YOUNG.slug}', 50)`, 'value', 40],
    [`api.cci('${YOUNG.slug}', 20)`, 'value', 19],
    [`api.mfi('${YOUNG.slug}', 14)`, 'value', 14],
    [`api.williams_r('${YOUNG.slug}', 14)`, 'value', 13],
    [`api.price_volatility('${YOUNG.slug}', 30)`, 'value', 30],
    [`api.volume_volatility('${YOUNG.slug}', 7)`, 'value', 7],
    [`api.macd('${YOUNG.slug}')`, 'macd', 33],
    [`api.macd('${YOUNG.slug}')`, 'histogram', 33],
    [`api.obv('${YOUNG.slug}')`, 'value', 0],
    [`api.cmf('${YOUNG.slug}')`, 'value', 19],
    [`api.adx('${YOUNG.slug}')`, 'adx', 27],
    [`api.adx('${YOUNG.slug}')`, 'plus_di', 14],
    [`api.vwap('${YOUNG.slug}')`, 'value', 19],
  ];
  for (const [call, name, warmup] of expected) {
    const list = await rows(call);
    t.is(list.length, 40, call);
    const values = column(list, name);
    t.is(leading(values), warmup, `${call} ${name}`);
    t.true(values.slice(warmup).every((value) => value !== null), `${call} ${name}: no null after the warm-up`);
  }
});

test.serial('a 40-day coin agrees with TA-Lib run on the same 40 days', async (t) => {
  const n = young.close.length;
  const [rsi, macd, adx, willr] = await talib([
    { name: 'RSI', inputs: { inReal: young.close }, options: { optInTimePeriod: 14 } },
    { name: 'MACD', inputs: { inReal: young.close }, options: { optInFastPeriod: 12, optInSlowPeriod: 26, optInSignalPeriod: 9 } },
    { name: 'ADX', inputs: { high: young.high, low: young.low, close: young.close }, options: { optInTimePeriod: 14 } },
    { name: 'WILLR', inputs: { high: young.high, low: young.low, close: young.close }, options: { optInTimePeriod: 14 } },
  ]);
  assertAgrees(t, 'young rsi', column(await rows(`api.rsi('${YOUNG.slug}')`), 'value'), aligned(rsi!, 'outReal', n));
  assertAgrees(t, 'young macd', column(await rows(`api.macd('${YOUNG.slug}')`), 'signal'), aligned(macd!, 'outMACDSignal', n));
  assertAgrees(t, 'young adx', column(await rows(`api.adx('${YOUNG.slug}')`), 'adx'), aligned(adx!, 'outReal', n));
  assertAgrees(t, 'young willr', column(await rows(`api.williams_r('${YOUNG.slug}')`), 'value'), aligned(willr!, 'outReal', n));
});

// --- the window cut -------------------------------------------------------------------------------

test.serial('start, end and limit cut the series computed from the first bar: no value changes', async (t) => {
  for (const call of [`api.rsi('${COIN.slug}', 14`, `api.macd('${COIN.slug}'`, `api.adx('${COIN.slug}', 14`, `api.obv('${COIN.slug}'`, `api.cci('${COIN.slug}', 20`]) {
    const full = await rows(`${call})`);
    const cut = await rows(`${call}, date '2023-06-01', date '2023-09-30', 30)`);
    t.is(cut.length, 30, call);
    t.is(cut.at(-1)!.date, '2023-09-30', `${call}: the most recent rows of the window`);
    t.is(cut[0]!.date, '2023-09-01', `${call}: oldest first`);
    const byDate = new Map(full.map((row) => [row.date, row]));
    t.deepEqual(cut, cut.map((row) => byDate.get(row.date)), `${call}: the same values as in the full series`);
    const open = await rows(`${call}, date '2024-01-15', null, null)`);
    t.deepEqual(open.map((row) => row.date), full.filter((row) => (row.date as string) >= '2024-01-15').map((row) => row.date));
  }
  t.deepEqual(await rows(`api.sma('${COIN.slug}', 50, date '2023-05-01', date '2023-04-01', null)`), [], 'start after end: no rows');
});

test.serial('errors: unknown slug MD404, bad period or limit MD422', async (t) => {
  const code = async (call: string) => {
    const error = await t.throwsAsync(db.sql.unsafe(`select * from ${call}`));
    return (error as { code?: string }).code;
  };
  t.is(await code(`api.rsi('no-such-coin')`), 'MD404');
  t.is(await code(`api.macd('no-such-coin')`), 'MD404');
  t.is(await code(`api.coin_indicators('no-such-coin')`), 'MD404');
  t.is(await code(`api.coin_indicators('${EMPTY.slug}')`), 'MD404');
  t.is(await code(`api.rsi('${COIN.slug}', 1)`), 'MD422');
  t.is(await code(`api.sma('${COIN.slug}', 50, null, null, 0)`), 'MD422');
  t.deepEqual(await rows(`api.rsi('${EMPTY.slug}')`), [], 'a coin without bars has an empty series');
});

// --- the snapshot ---------------------------------------------------------------------------------

test.serial('the snapshot applies its documented rules to the latest value of each series', async (t) => {
  const snapshot = (await db.sql`select indicator, state, score, data, date::text as date from api.coin_indicators(${COIN.slug})`) as unknown as
    { indicator: string; state: string; score: number; data: Record<string, unknown>; date: string }[];
  t.deepEqual(snapshot.map((row) => row.indicator), [
    'rsi', 'stoch-rsi', 'mfi', 'williams-r', 'cci', 'macd', 'sma', 'vwap', 'obv', 'cmf', 'adx', 'price-volatility', 'volume-volatility',
  ]);
  const last = async (call: string) => (await rows(call)).at(-1)!;
  const get = (name: string) => snapshot.find((row) => row.indicator === name)!;
  const scoreOf: Record<string, number> = { bullish: 1, oversold: 1, neutral: 0, bearish: -1, overbought: -1 };
  for (const row of snapshot) {
    t.is(row.score, scoreOf[row.state]!, row.indicator);
    t.is(row.date, bars.date.at(-1)!);
  }
  const band = (value: number, low: number, high: number) => (value > high ? 'overbought' : value < low ? 'oversold' : 'neutral');
  const direction = (sign: number) => (sign > 0 ? 'bullish' : sign < 0 ? 'bearish' : 'neutral');
  const rsi = (await last(`api.rsi('${COIN.slug}', 14)`)).value as number;
  t.is(get('rsi').data.value, rsi);
  t.is(get('rsi').state, band(rsi, 30, 70));
  const stoch = await last(`api.stoch_rsi('${COIN.slug}', 14)`);
  const k = stoch.k as number;
  t.is(get('stoch-rsi').state, k > 80 ? 'overbought' : k < 20 ? 'oversold' : direction(k - (stoch.d as number)));
  t.is(get('mfi').state, band((await last(`api.mfi('${COIN.slug}', 14)`)).value as number, 20, 80));
  t.is(get('williams-r').state, band((await last(`api.williams_r('${COIN.slug}', 14)`)).value as number, -80, -20));
  const cci = (await last(`api.cci('${COIN.slug}', 20)`)).value as number;
  t.is(get('cci').state, cci > 100 ? 'bullish' : cci < -100 ? 'bearish' : 'neutral');
  const macd = await last(`api.macd('${COIN.slug}')`);
  t.deepEqual(get('macd').data, { value: macd.macd, signal: macd.signal, histogram: macd.histogram }, 'price-scale data as decimal strings');
  t.is(get('macd').state, direction(Number(macd.histogram)));
  const close = bars.close.at(-1)!;
  const sma = (await last(`api.sma('${COIN.slug}', 50)`)).value as string;
  t.is(get('sma').data.value, sma);
  t.is(get('sma').state, direction(close - Number(sma)));
  t.is(get('vwap').state, direction(close - Number((await last(`api.vwap('${COIN.slug}', 20)`)).value)));
  const obv = await rows(`api.obv('${COIN.slug}')`);
  t.is(get('obv').state, direction(Number(obv.at(-1)!.value) - Number(obv.at(-22)!.value)));
  t.is(get('obv').data.window, 21);
  const cmf = (await last(`api.cmf('${COIN.slug}', 20)`)).value as number;
  t.is(get('cmf').state, cmf > 0.05 ? 'bullish' : cmf < -0.05 ? 'bearish' : 'neutral');
  const adx = await last(`api.adx('${COIN.slug}', 14)`);
  t.is(get('adx').state, (adx.adx as number) >= 25 ? direction((adx.plus_di as number) - (adx.minus_di as number)) : 'neutral');
  t.is(get('price-volatility').state, 'neutral');
  t.is(get('price-volatility').data.value, (await last(`api.price_volatility('${COIN.slug}', 7)`)).value);
});

test.serial('the snapshot of a young coin reads neutral where an indicator is still warming up', async (t) => {
  const snapshot = await db.sql`select indicator, state, score, data from api.coin_indicators(${YOUNG.slug})`;
  const sma = snapshot.find((row) => row.indicator === 'sma')!;
  t.deepEqual([sma.state, sma.score, sma.data.value], ['neutral', 0, null]);
  const rsi = snapshot.find((row) => row.indicator === 'rsi')!;
  t.is(typeof rsi.data.value, 'number');
});

test.serial('a changed day changes the values computed from it (nothing cached)', async (t) => {
  const before = await rows(`api.rsi('${YOUNG.slug}', 14)`);
  await db.sql`update market.coin_bars_1m set close = close * 1.1, high = high * 1.1 where coin_id = ${YOUNG.id}
                and time = (select max(time) from market.coin_bars_1m where coin_id = ${YOUNG.id})`;
  await refreshAggregates(db.sql);
  const after = await rows(`api.rsi('${YOUNG.slug}', 14)`);
  t.deepEqual(after.slice(0, -1), before.slice(0, -1));
  t.true((after.at(-1)!.value as number) > (before.at(-1)!.value as number));
});
