// The indicator benchmark: each api.* indicator function over a coin with 3 000 days of history
// (the whole series, as TA-Lib computes it), beside the same computation in TA-Lib's C code (the
// `talib` addon, timed inside its Node 20 child process), as a ratio.
import type { Sql } from '../src/db/client.ts';
import { generateSeries, insertCoin, readDailyBars, refreshAggregates, talib, type TalibCall } from '../dev/indicators.ts';
import { measure, printTable, type Figures } from './harness.ts';

const COIN = { id: 990001, slug: 'bench-indicator-coin' };
const DAYS = 3000;

interface Case {
  name: string;
  sql: string;
  /** TA-Lib calls that compute the same figures (summed), none for the indicators TA-Lib lacks */
  talib: TalibCall[];
}

export async function benchIndicators(sql: Sql, get: (path: string) => () => Promise<void>, options: { requests: number }) {
  const started = performance.now();
  await insertCoin(sql, COIN, generateSeries(DAYS, 3000, '2017-01-01'));
  await refreshAggregates(sql);
  const bars = await readDailyBars(sql, COIN.id);
  const loadSeconds = (performance.now() - started) / 1000;
  const hlc = { high: bars.high, low: bars.low, close: bars.close };
  const slug = `'${COIN.slug}'`;
  const cases: Case[] = [
    { name: 'rsi(14)', sql: `api.rsi(${slug}, 14)`, talib: [{ name: 'RSI', inputs: { inReal: bars.close }, options: { optInTimePeriod: 14 } }] },
    { name: 'stoch_rsi(14)', sql: `api.stoch_rsi(${slug}, 14)`,
      talib: [{ name: 'STOCHRSI', inputs: { inReal: bars.close }, options: { optInTimePeriod: 14, optInFastK_Period: 14, optInFastD_Period: 3, optInFastD_MAType: 0 } }] },
    { name: 'sma(200)', sql: `api.sma(${slug}, 200)`, talib: [{ name: 'SMA', inputs: { inReal: bars.close }, options: { optInTimePeriod: 200 } }] },
    { name: 'cci(20)', sql: `api.cci(${slug}, 20)`, talib: [{ name: 'CCI', inputs: hlc, options: { optInTimePeriod: 20 } }] },
    { name: 'cci(100)', sql: `api.cci(${slug}, 100)`, talib: [{ name: 'CCI', inputs: hlc, options: { optInTimePeriod: 100 } }] },
    { name: 'mfi(14)', sql: `api.mfi(${slug}, 14)`, talib: [{ name: 'MFI', inputs: { ...hlc, volume: bars.volume }, options: { optInTimePeriod: 14 } }] },
    { name: 'williams_r(14)', sql: `api.williams_r(${slug}, 14)`, talib: [{ name: 'WILLR', inputs: hlc, options: { optInTimePeriod: 14 } }] },
    { name: 'macd', sql: `api.macd(${slug})`, talib: [{ name: 'MACD', inputs: { inReal: bars.close }, options: { optInFastPeriod: 12, optInSlowPeriod: 26, optInSignalPeriod: 9 } }] },
    { name: 'obv', sql: `api.obv(${slug})`, talib: [{ name: 'OBV', inputs: { inReal: bars.close, volume: bars.volume } }] },
    { name: 'adx(14) + DIs', sql: `api.adx(${slug}, 14)`,
      talib: ['ADX', 'PLUS_DI', 'MINUS_DI'].map((name) => ({ name, inputs: hlc, options: { optInTimePeriod: 14 } })) },
    { name: 'cmf(20)', sql: `api.cmf(${slug}, 20)`, talib: [] },
    { name: 'vwap(20)', sql: `api.vwap(${slug}, 20)`, talib: [] },
    { name: 'price_volatility(30)', sql: `api.price_volatility(${slug}, 30)`, talib: [] },
    { name: 'volume_volatility(30)', sql: `api.volume_volatility(${slug}, 30)`, talib: [] },
    { name: 'coin_indicators (snapshot)', sql: `api.coin_indicators(${slug})`, talib: [] },
  ];

  const requests = Math.max(5, Math.min(options.requests, 30));
  const sqlFigures: Figures[] = [];
  for (const item of cases) {
    sqlFigures.push(await measure(`select * from ${item.sql}`, () => sql.unsafe(`select * from ${item.sql}`), { requests, concurrency: 1, warmup: 2 }));
  }
  const http: Figures[] = [
    await measure(`GET .../indicators/rsi (HTTP, limit 365)`, get(`/api/v1/coins/${COIN.slug}/indicators/rsi`), { requests, concurrency: 1, warmup: 2 }),
    await measure(`GET .../indicators/macd (HTTP, limit 365)`, get(`/api/v1/coins/${COIN.slug}/indicators/macd`), { requests, concurrency: 1, warmup: 2 }),
    await measure(`GET .../indicators (HTTP snapshot)`, get(`/api/v1/coins/${COIN.slug}/indicators`), { requests, concurrency: 1, warmup: 2 }),
  ];
  const replies = await talib(cases.flatMap((item) => item.talib), 2000);

  console.log(`\nIndicators — one coin, ${bars.close.length} daily bars (loaded and rolled up in ${loadSeconds.toFixed(1)} s); whole series per call, one call at a time\n`);
  printTable([...sqlFigures, ...http]);
  console.log('\nSQL (p50, embedded database) vs TA-Lib C code (mean, timed in its Node 20 process):\n');
  const header = ['indicator', 'SQL ms', 'TA-Lib ms', 'ratio'];
  let next = 0;
  const lines = cases.map((item, i) => {
    const own = item.talib.map(() => replies[next++]!.msPerCall!);
    const reference = own.length ? own.reduce((sum, ms) => sum + ms, 0) : null;
    const ours = sqlFigures[i]!.p50;
    return [item.name, ours.toFixed(2), reference === null ? 'n/a' : reference.toFixed(4), reference === null ? 'not in TA-Lib' : `${Math.round(ours / reference)}x`];
  });
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]!.length)));
  const format = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  console.log(format(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const line of lines) console.log(format(line));
}
