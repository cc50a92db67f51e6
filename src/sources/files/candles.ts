// `mdapi import-candles`: OHLCV history from a CSV file (header time,open,high,low,close,volume;
// ISO 8601 times; any bar width of a minute or more) into market.coin_bars_1m, through the same
// path as live bars. The file is split into lines here; every value is checked, and the bars are
// written, by market.import_candles() in one transaction; the aggregates are refreshed after.
import { parse } from 'csv-parse/sync';
import type { Sql } from '../../db/client.ts';
import { withReservedQuery } from '../../db/query.ts';
import { completeCoinBarBackfills } from '../aggregates.ts';
import { splitBinanceKlines } from './binance-klines.ts';
import { CandleImportError, type CandleColumns } from './candle-columns.ts';
import { SLUG } from '../../validators.ts';

export { CandleImportError, type CandleColumns };

export const CSV_HEADER = ['time', 'open', 'high', 'low', 'close', 'volume'] as const;

export interface CandleImport {
  slug: string;
  symbol?: string;
  name?: string;
  csv: string;
  /** csv (the header above, ISO times) or binance-kline (Binance's dumps, see binance-klines.ts) */
  format?: 'csv' | 'binance-kline';
}

export interface CandleImportResult {
  coinId: number;
  coinCreated: boolean;
  bars: number;
  inserted: number;
  updated: number;
  removed: number;
  windowStart: string;
  windowEnd: string;
  /** refresh_continuous_aggregate calls made; 0 when the file changed nothing */
  refreshCalls: number;
}

/** Splits the file into columns, keeping line numbers; values stay strings (decimals never become floats). */
export function splitCandleCsv(csv: string): CandleColumns {
  let records: { record: string[]; info: { lines: number } }[];
  try {
    // quoted fields, CRLF and a BOM as CSV has them; rows of the wrong width are reported below, by line
    records = parse(csv, { bom: true, trim: true, skip_empty_lines: true, relax_column_count: true, info: true }) as unknown as typeof records;
  } catch (error) {
    const line = (error as { lines?: number }).lines;
    throw new CandleImportError('malformed CSV, nothing imported', [`line ${line ?? '?'}: ${(error as Error).message}`]);
  }
  const [first, ...rows] = records;
  const header = (first?.record ?? []).map((name) => name.toLowerCase());
  if (first?.info.lines !== 1 || header.join(',') !== CSV_HEADER.join(',')) {
    throw new CandleImportError('bad header, nothing imported', [`line 1: header must be ${CSV_HEADER.join(',')}`]);
  }
  const columns: CandleColumns = { lines: [], time: [], open: [], high: [], low: [], close: [], volume: [] };
  const problems: string[] = [];
  for (const { record: fields, info } of rows) {
    if (fields.length !== CSV_HEADER.length) {
      problems.push(`line ${info.lines}: expected ${CSV_HEADER.length} fields, found ${fields.length}`);
      continue;
    }
    columns.lines.push(info.lines);
    CSV_HEADER.forEach((name, i) => columns[name].push(fields[i]!));
  }
  if (problems.length > 0) {
    throw new CandleImportError(`${problems.length} malformed row(s), nothing imported`, problems);
  }
  if (columns.lines.length === 0) throw new CandleImportError('no rows to import');
  return columns;
}

/** Imports the file for an existing coin, or a new one when symbol and name are given. Re-importing the same file changes nothing. */
export async function importCandles(sql: Sql, input: CandleImport): Promise<CandleImportResult> {
  if (!SLUG.test(input.slug)) throw new CandleImportError(`invalid slug ${JSON.stringify(input.slug)}: lowercase letters, digits and dashes`);
  const columns = input.format === 'binance-kline' ? splitBinanceKlines(input.csv) : splitCandleCsv(input.csv);
  let row: Record<string, unknown>;
  try {
    [row] = (await sql`
      select coin_id, coin_created, bars, inserted, updated, removed,
        window_start::text as window_start, window_end::text as window_end, backfill_id
      from market.import_candles(${input.slug}, ${input.symbol ?? null}, ${input.name ?? null},
        ${columns.lines}::int[], ${columns.time}::text[], ${columns.open}::text[], ${columns.high}::text[],
        ${columns.low}::text[], ${columns.close}::text[], ${columns.volume}::text[])`) as [Record<string, unknown>];
  } catch (error) {
    const pg = error as { code?: string; message: string; detail?: string };
    if (pg.code === '22P02' || pg.code === '22023') {
      throw new CandleImportError(pg.message, pg.detail ? pg.detail.split('\n') : []);
    }
    throw error;
  }

  // refresh_continuous_aggregate refuses to run in a transaction: one reserved connection, one call each.
  let refreshCalls = 0;
  if (row.backfill_id !== null) {
    refreshCalls = await withReservedQuery(sql, async (query) => {
      const { calls } = await completeCoinBarBackfills(query);
      // Old bars may hold new all-time extremes: rescan them.
      await query('select market.refresh_coin_state(now(), true)');
      return calls;
    });
  }
  return {
    coinId: row.coin_id as number,
    coinCreated: row.coin_created as boolean,
    bars: row.bars as number,
    inserted: row.inserted as number,
    updated: row.updated as number,
    removed: row.removed as number,
    windowStart: row.window_start as string,
    windowEnd: row.window_end as string,
    refreshCalls,
  };
}
