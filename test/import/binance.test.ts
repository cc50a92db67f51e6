// Binance kline dumps through the candle import: no header, open times in milliseconds or (spot
// dumps since 2025) microseconds, the quote volume as the USD volume, a .zip holding one CSV; the
// same all-or-nothing rules as the CSV import. The fixtures are written in the dumps' documented
// column layout (test/fixtures/binance).
import test from 'ava';
import { readFileSync } from 'node:fs';
import { readKlineZip, splitBinanceKlines } from '../../src/sources/files/binance-klines.ts';
import { CandleImportError, importCandles } from '../../src/sources/files/candles.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/binance/${name}`, import.meta.url));
const ms = fixture('BTCUSDT-1m-2025-01-01.csv').toString('utf8');
const us = fixture('BTCUSDT-1m-2025-01-01-us.csv').toString('utf8');

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
});
test.after.always(() => db?.close());

test('milliseconds and microseconds give the same bars; the quote volume is the volume; prices stay strings', (t) => {
  const fromMs = splitBinanceKlines(ms);
  t.deepEqual(splitBinanceKlines(us), fromMs);
  t.deepEqual(fromMs.lines, [1, 2, 3]);
  t.deepEqual(fromMs.time, ['2025-01-01T00:00:00.000Z', '2025-01-01T00:01:00.000Z', '2025-01-01T00:02:00.000Z']);
  t.is(fromMs.open[0], '93576.00000000', 'as written: no float on the way');
  t.is(fromMs.volume[0], '768978.57410000', 'column 8, the quote (USDT) volume');
});

test('a bad row is named by its line, and nothing is imported', async (t) => {
  const bad = ms.split('\n');
  bad[1] = bad[1]!.replace(/^\d+/, 'abc');
  const error = t.throws(() => splitBinanceKlines(bad.join('\n')), { instanceOf: CandleImportError });
  t.deepEqual(error!.problems, ['line 2: open time "abc" is not milliseconds or microseconds since 1970']);
  const short = `${ms}1735689780000,1,2,3\n`;
  t.deepEqual(t.throws(() => splitBinanceKlines(short), { instanceOf: CandleImportError })!.problems, ['line 4: expected 12 fields of a Binance kline, found 4']);
  // a row that parses but is not a bar: the database names its line
  const inverted = ms.split('\n');
  inverted[2] = inverted[2]!.replace('93652.00000000,93582.00000000', '93500.00000000,93582.00000000');
  const failed = await t.throwsAsync(importCandles(db.sql, { slug: 'btc-kline-bad', symbol: 'BTCK', name: 'Kline bad', csv: inverted.join('\n'), format: 'binance-kline' }), {
    instanceOf: CandleImportError,
  });
  t.true(failed!.problems.some((problem) => problem.startsWith('line 3: ')), failed!.problems.join('; '));
  t.is((await db.sql`select count(*)::int as n from market.coins where slug = 'btc-kline-bad'`)[0]!.n, 0, 'nothing written, not even the coin');
});

test('a dump imports through the live path, and importing it again (µs, zipped) changes nothing', async (t) => {
  const first = await importCandles(db.sql, { slug: 'btc-kline', symbol: 'BTCK', name: 'Kline bitcoin', csv: ms, format: 'binance-kline' });
  t.like(first, { coinCreated: true, bars: 3, inserted: 3, updated: 0 });
  const bars = await db.sql`
    select to_char(time at time zone 'UTC', 'HH24:MI') as minute, open::text, close::text, volume::text
    from market.coin_bars_1m where coin_id = ${first.coinId} order by time`;
  t.deepEqual(bars.map((bar) => [bar.minute, bar.open, bar.close, bar.volume]), [
    ['00:00', '93576.00000000', '93610.93000000', '768978.57410000'],
    ['00:01', '93610.93000000', '93651.94000000', '516218.89000000'],
    ['00:02', '93651.94000000', '93582.99000000', '657152.11000000'],
  ]);
  const zipped = await readKlineZip(fixture('BTCUSDT-1m-2025-01-01.zip'));
  t.is(zipped, us);
  const again = await importCandles(db.sql, { slug: 'btc-kline', csv: zipped, format: 'binance-kline' });
  t.like(again, { coinCreated: false, bars: 3, inserted: 0, updated: 0, removed: 0 });
});

test('a file that is not a zip is refused clearly', async (t) => {
  await t.throwsAsync(readKlineZip(Buffer.from(ms)), { instanceOf: CandleImportError, message: /not a readable zip/ });
});
