// Fixtures of the indicator tests and benchmark: a deterministic daily OHLCV series, written as
// daily bars into market.coin_bars_1m and rolled up into market.coin_bars_1d; the bars read back
// as numbers; and TA-Lib's C code as the reference, run in a Node 20 child (talib-reference.cjs).
import { spawn } from 'node:child_process';
import type { Sql } from '../src/db/client.ts';
import { seededRandom } from './random.ts';

export interface DailyBar {
  date: string;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
}


const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/**
 * `days` daily bars from `start`: a random walk of the close (about 3 % a day, with slow swings so
 * that trends and reversals both occur), open near the previous close, high and low around them,
 * USD volume between 1 and 50 million. Some days are degenerate on purpose: every 29th close
 * equals the previous one (no change: RSI, OBV, MFI ties) and every 97th bar is flat (high = low).
 */
export function generateSeries(days: number, seed: number, start = '2023-01-01'): DailyBar[] {
  const next = seededRandom(seed);
  const bars: DailyBar[] = [];
  let close = 100;
  for (let d = 0; d < days; d++) {
    const drift = 0.004 * Math.sin(d / 23);
    const open = close * (1 + (next() - 0.5) * 0.01);
    close = d % 29 === 28 ? close : close * Math.exp(drift + (next() - 0.5) * 0.06);
    close = Number(close.toFixed(4));
    const o = Number(open.toFixed(4));
    const flat = d % 97 === 96;
    const high = flat ? Math.max(o, close) : Math.max(o, close) * (1 + next() * 0.02);
    const low = flat ? Math.min(o, close) : Math.min(o, close) * (1 - next() * 0.02);
    const bar = flat ? close : null;
    bars.push({
      date: addDays(start, d),
      open: (bar ?? o).toFixed(4),
      high: (bar ?? high).toFixed(4),
      low: (bar ?? low).toFixed(4),
      close: close.toFixed(4),
      volume: (1e6 + next() * 49e6).toFixed(2),
    });
  }
  return bars;
}

/** Creates a coin whose daily history is `bars` (one bar per day in coin_bars_1m). */
export async function insertCoin(sql: Sql, coin: { id: number; slug: string }, bars: DailyBar[]) {
  await sql`insert into market.data_sources (name, kind, description) values ('indicator-test', 'import', 'indicator fixtures')
            on conflict (name) do nothing`;
  await sql`insert into market.coins (id, slug, symbol, name, type, source)
            values (${coin.id}, ${coin.slug}, ${coin.slug.slice(0, 6).toUpperCase()}, ${coin.slug}, 'coin', 'indicator-test')`;
  const column = (name: keyof DailyBar) => bars.map((bar) => bar[name]);
  await sql`
    insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
    select d::timestamp at time zone 'UTC', ${coin.id}, o, h, l, c, v
    from unnest(${column('date')}::date[], ${column('open')}::numeric[], ${column('high')}::numeric[],
                ${column('low')}::numeric[], ${column('close')}::numeric[], ${column('volume')}::numeric[]) as u (d, o, h, l, c, v)`;
}

/** Rolls every bar up into the daily aggregate: one CALL per level, each a statement of its own. */
export async function refreshAggregates(sql: Sql) {
  for (const level of ['market.coin_bars_30m', 'market.coin_bars_1h', 'market.coin_bars_1d']) {
    await sql.unsafe(`call refresh_continuous_aggregate('${level}', null, null)`);
  }
}

export interface Ohlcv {
  date: string[];
  open: number[];
  high: number[];
  low: number[];
  close: number[];
  volume: number[];
}

/** The coin's daily bars as the indicators read them, as doubles for the references. */
export async function readDailyBars(sql: Sql, coinId: number): Promise<Ohlcv> {
  const rows = await sql<{ date: string; open: string; high: string; low: string; close: string; volume: string }[]>`
    select (time at time zone 'UTC')::date::text as date, open, high, low, close, volume
    from market.coin_bars_1d where coin_id = ${coinId} order by time`;
  return {
    date: rows.map((row) => row.date),
    open: rows.map((row) => Number(row.open)),
    high: rows.map((row) => Number(row.high)),
    low: rows.map((row) => Number(row.low)),
    close: rows.map((row) => Number(row.close)),
    volume: rows.map((row) => Number(row.volume)),
  };
}

export interface TalibCall {
  name: string;
  inputs: Partial<Record<'inReal' | 'high' | 'low' | 'close' | 'volume', number[]>>;
  options?: Record<string, number>;
}

export interface TalibReply {
  begIndex: number;
  result: Record<string, number[]>;
  msPerCall: number | null;
}

export const TALIB_NODE = process.env.TALIB_NODE ?? '/usr/bin/node';
const TALIB_SCRIPT = new URL('./talib-reference.cjs', import.meta.url).pathname;

/** Runs TA-Lib functions in the Node 20 child; with `repeat`, also times them there. */
export function talib(calls: TalibCall[], repeat = 0): Promise<TalibReply[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(TALIB_NODE, [TALIB_SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(JSON.parse(out) as TalibReply[]);
      else reject(new Error(`talib-reference.cjs (${TALIB_NODE}) exited with ${code}: ${err}`));
    });
    child.stdin.end(JSON.stringify({ calls, repeat }));
  });
}

/** A TA-Lib output aligned to the input: null for the first begIndex rows (its lookback). */
export const aligned = (reply: TalibReply, output: string, length: number): (number | null)[] =>
  Array.from({ length }, (_, i) => (i < reply.begIndex ? null : reply.result[output]![i - reply.begIndex]!));

export interface Agreement {
  /** leading nulls of each series: the warm-up lengths, which must be equal */
  warmup: number;
  expectedWarmup: number;
  /** rows where exactly one of the two is null (after the warm-up there must be none) */
  nullMismatches: number[];
  /** the largest relative difference and where */
  maxRelative: number;
  at: number | null;
}

/**
 * Compares a computed series with a reference row by row. The difference is relative to the
 * reference value, with a floor of 1e-6 of the series' largest magnitude so that a value that
 * happens to cross zero (a MACD histogram, a CCI) is not judged on its last bits.
 */
export function agreement(actual: (number | string | null)[], expected: (number | null)[]): Agreement {
  const leading = (values: unknown[]) => {
    const index = values.findIndex((value) => value !== null);
    return index < 0 ? values.length : index;
  };
  const numbers = actual.map((value) => (value === null ? null : Number(value)));
  const scale = Math.max(...expected.map((value) => (value === null ? 0 : Math.abs(value))));
  const result: Agreement = { warmup: leading(numbers), expectedWarmup: leading(expected), nullMismatches: [], maxRelative: 0, at: null };
  const length = Math.max(numbers.length, expected.length);
  for (let i = 0; i < length; i++) {
    const a = numbers[i] ?? null;
    const e = expected[i] ?? null;
    if ((a === null) !== (e === null)) {
      result.nullMismatches.push(i);
      continue;
    }
    if (a === null || e === null) continue;
    const relative = Math.abs(a - e) / Math.max(Math.abs(e), 1e-6 * scale, Number.MIN_VALUE);
    if (relative > result.maxRelative) {
      result.maxRelative = relative;
      result.at = i;
    }
  }
  return result;
}
