// Binance's public kline dumps (data.binance.vision), the deepest free source of 1-minute history:
// CSV without a header — open time, open, high, low, close, base volume, close time, quote volume,
// trades, taker buy base, taker buy quote, ignore — open times in milliseconds (microseconds in the
// spot dumps since 2025), usually shipped as a .zip holding one CSV. Rows become the import's
// columns (src/sources/files/candles.ts) with the quote volume as the USD volume, which holds for
// pairs quoted in USD or a USD stablecoin.
import { fromBuffer, type Entry, type ZipFile } from 'yauzl';
import { CandleImportError, type CandleColumns } from './candle-columns.ts';

const FIELDS = 12;
// Open times after 2100-01-01 in milliseconds are microseconds.
const MICROSECONDS_FROM = 4_102_444_800_000;

/** The open time of a row as an ISO instant, or null when it is not a whole number of ms or µs since 1970. */
function openTime(field: string): string | null {
  if (!/^\d{1,17}$/.test(field)) return null;
  const value = Number(field);
  const ms = value >= MICROSECONDS_FROM ? Math.floor(value / 1000) : value;
  if (value >= MICROSECONDS_FROM && value % 1000 !== 0) return null;
  const time = new Date(ms);
  return Number.isNaN(time.getTime()) ? null : time.toISOString();
}

/** Splits a kline dump into the import's columns, keeping line numbers; prices stay strings. */
export function splitBinanceKlines(csv: string): CandleColumns {
  const columns: CandleColumns = { lines: [], time: [], open: [], high: [], low: [], close: [], volume: [] };
  const problems: string[] = [];
  csv.replace(/^\uFEFF/, '').split(/\r?\n/).forEach((row, index) => {
    const line = index + 1;
    if (row.trim() === '') return;
    const fields = row.split(',').map((field) => field.trim());
    // Some monthly dumps carry a header line; it is not data.
    if (line === 1 && fields[0] === 'open_time') return;
    if (fields.length !== FIELDS) {
      problems.push(`line ${line}: expected ${FIELDS} fields of a Binance kline, found ${fields.length}`);
      return;
    }
    const time = openTime(fields[0]!);
    if (time === null) {
      problems.push(`line ${line}: open time "${fields[0]}" is not milliseconds or microseconds since 1970`);
      return;
    }
    columns.lines.push(line);
    columns.time.push(time);
    columns.open.push(fields[1]!);
    columns.high.push(fields[2]!);
    columns.low.push(fields[3]!);
    columns.close.push(fields[4]!);
    columns.volume.push(fields[7]!);
  });
  if (problems.length > 0) throw new CandleImportError(`${problems.length} malformed row(s), nothing imported`, problems);
  if (columns.lines.length === 0) throw new CandleImportError('no rows to import');
  return columns;
}

/** The CSV inside a kline .zip (its only .csv entry). */
export async function readKlineZip(zip: Buffer): Promise<string> {
  const archive = await new Promise<ZipFile>((resolve, reject) =>
    fromBuffer(zip, { lazyEntries: true }, (error, file) => (error ? reject(new CandleImportError(`not a readable zip: ${error.message}`)) : resolve(file))),
  );
  const entries: Entry[] = [];
  await new Promise<void>((resolve, reject) => {
    archive.on('entry', (entry: Entry) => {
      entries.push(entry);
      archive.readEntry();
    });
    archive.on('end', resolve);
    archive.on('error', reject);
    archive.readEntry();
  });
  const csvs = entries.filter((entry) => entry.fileName.toLowerCase().endsWith('.csv'));
  if (csvs.length !== 1) throw new CandleImportError(`the zip holds ${csvs.length} CSV files; a kline dump holds one`);
  const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) =>
    archive.openReadStream(csvs[0]!, (error, readable) => (error ? reject(error) : resolve(readable))),
  );
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  archive.close();
  return Buffer.concat(chunks).toString('utf8');
}
