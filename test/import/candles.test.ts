// mdapi import-candles: CSV history for an existing or new coin, through the bar table and the
// aggregates; idempotent; a file with a malformed row imports nothing and names the lines.
import test from 'ava';
import { CandleImportError, importCandles, splitCandleCsv } from '../../src/sources/files/candles.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
  await db.sql`insert into market.data_sources (name, kind, description) values ('test', 'import', 'test')`;
  await db.sql`
    insert into market.coins (slug, symbol, name, type, circulating_supply, source)
    values ('known-coin', 'KNO', 'Known Coin', 'coin', 1000, 'test')`;
});
test.after.always(() => db?.close());

const HEADER = 'time,open,high,low,close,volume';
// daily bars a year ago: older than every raw retention, so only the aggregates keep them
const dailyCsv = (days: number, start = '2025-01-01') =>
  [HEADER, ...Array.from({ length: days }, (_, d) => {
    const date = new Date(Date.parse(`${start}T00:00:00Z`) + d * 86_400_000).toISOString().slice(0, 10);
    return `${date},${100 + d}.5,${110 + d}.25,${90 + d},${105 + d}.125,${1000 + d}.5`;
  })].join('\n');

const daily = (slug: string) => db.sql`
  select d.time, d.open, d.high, d.low, d.close, d.volume, d.marketcap
  from market.coin_bars_1d d join market.coins c on c.id = d.coin_id
  where c.slug = ${slug} order by d.time`.then((rows) => [...rows]);

test.serial('a new coin is created from the file, and its daily history is in the aggregate', async (t) => {
  const result = await importCandles(db.sql, { slug: 'csv-coin', symbol: 'CSV', name: 'CSV Coin', csv: dailyCsv(5) });
  t.true(result.coinCreated);
  t.is(result.bars, 5);
  t.is(result.inserted, 5);
  t.true(result.refreshCalls > 0);
  const rows = await daily('csv-coin');
  t.is(rows.length, 5);
  t.deepEqual([rows[0]!.open, rows[0]!.high, rows[0]!.low, rows[0]!.close, rows[0]!.volume], ['100.5', '110.25', '90', '105.125', '1000.5']);
  t.is(rows[0]!.marketcap, null, 'no circulating supply, no marketcap');
  const [coin] = await db.sql`select symbol, name, source, status from market.coins where slug = 'csv-coin'`;
  t.deepEqual({ ...coin }, { symbol: 'CSV', name: 'CSV Coin', source: 'csv', status: 'active' });
  const [state] = await db.sql`select s.price, s.ath from market.coin_state s join market.coins c on c.id = s.coin_id where c.slug = 'csv-coin'`;
  t.deepEqual({ ...state }, { price: '109.125', ath: '114.25' });
});

test.serial('importing the same file again changes nothing', async (t) => {
  const before = await daily('csv-coin');
  const result = await importCandles(db.sql, { slug: 'csv-coin', csv: dailyCsv(5) });
  t.deepEqual([result.inserted, result.updated, result.removed, result.refreshCalls], [0, 0, 0, 0]);
  t.deepEqual(await daily('csv-coin'), before);
});

test.serial('a changed file replaces the bars of its span, including finer bars inside it', async (t) => {
  // minute bars inside the second day, then the daily file again with one changed close
  await db.sql`
    insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
    select '2025-01-02 12:00+00'::timestamptz + m * interval '1 minute', (select id from market.coins where slug = 'csv-coin'), 1, 1, 1, 1, 1
    from generate_series(0, 9) m`;
  const csv = dailyCsv(5).replace('2025-01-03,102.5,112.25,92,107.125', '2025-01-03,102.5,112.25,92,108');
  const result = await importCandles(db.sql, { slug: 'csv-coin', csv });
  t.deepEqual([result.inserted, result.updated, result.removed], [0, 1, 10]);
  const rows = await daily('csv-coin');
  t.is(rows[1]!.volume, '1001.5', 'the finer bars inside the span are gone');
  t.is(rows[2]!.close, '108');
});

test.serial('an existing coin gets bars of any width; marketcap uses its circulating supply', async (t) => {
  const csv = [HEADER, '2025-03-01T00:00:00Z,10,12,9,11,5', '2025-03-01T00:15:00Z,11,13,10,12,6', '2025-03-01T00:30:00Z,12,12,8,9,7'].join('\n');
  const result = await importCandles(db.sql, { slug: 'known-coin', csv });
  t.false(result.coinCreated);
  t.is(result.windowEnd, '2025-03-01 00:45:00+00', 'the width is the smallest spacing: 15 minutes');
  const [day] = await daily('known-coin');
  t.deepEqual([day!.open, day!.high, day!.low, day!.close, day!.volume, day!.marketcap], ['10', '13', '8', '9', '18', '9000.00']);
});

test('a malformed file is rejected with the line of every fault, and nothing is imported', async (t) => {
  const csv = [
    HEADER,
    '2025-05-01,100,110,90,105,1000',
    '2025-05-02,105,100,95,104,1000', // high below open
    'yesterday,1,1,1,1,1', // not ISO
    '2025-05-01,100,110,90,105,abc', // duplicate time and bad volume
    '2025-05-04T00:00:30Z,1,1,1,1,1', // not a whole minute
    '2025-05-05,0,1,0,1,1', // zero price
  ].join('\n');
  const error = await t.throwsAsync(importCandles(db.sql, { slug: 'bad-coin', symbol: 'BAD', name: 'Bad Coin', csv }), { instanceOf: CandleImportError });
  t.deepEqual(error!.problems, [
    'line 3: high is below open, close or low',
    'line 4: time is not an ISO 8601 date or date-time',
    'line 5: time 2025-05-01T00:00Z already on line 2',
    'line 5: volume is not a decimal number',
    'line 6: time is not a whole minute',
    'line 7: prices must be greater than zero',
  ]);
  const [coin] = await db.sql`select count(*)::int as n from market.coins where slug = 'bad-coin'`;
  t.is(coin!.n, 0, 'not even the coin was created');
});

test('structural faults are found before the database is asked', (t) => {
  const header = t.throws(() => splitCandleCsv('date,o,h,l,c,v\n2025-01-01,1,1,1,1,1'), { instanceOf: CandleImportError });
  t.deepEqual(header!.problems, ['line 1: header must be time,open,high,low,close,volume']);
  const fields = t.throws(() => splitCandleCsv(`${HEADER}\n2025-01-01,1,1,1,1,1\n\n2025-01-02,1,1,1\n`), { instanceOf: CandleImportError });
  t.deepEqual(fields!.problems, ['line 4: expected 6 fields, found 4']);
  t.throws(() => splitCandleCsv(`${HEADER}\n`), { message: /no rows/ });
});

test('an unknown coin needs a symbol and a name', async (t) => {
  await t.throwsAsync(importCandles(db.sql, { slug: 'nobody', csv: dailyCsv(1) }), { instanceOf: CandleImportError, message: /symbol and name/ });
  await t.throwsAsync(importCandles(db.sql, { slug: 'Not A Slug', symbol: 'X', name: 'X', csv: dailyCsv(1) }), { message: /invalid slug/ });
});

test('a real CSV reader: quoted fields, CRLF and a byte-order mark', (t) => {
  const csv = `\uFEFF${HEADER}\r\n"2025-01-01","1.5","2","1","1.75","10"\r\n2025-01-02,1.75,"2.5",1.5,2,"1,000"\r\n`;
  // "1,000" is one field (a quoted comma), not two: the row has six fields, and its number is the database's to judge
  const columns = splitCandleCsv(csv);
  t.deepEqual(columns.lines, [2, 3]);
  t.deepEqual(columns.open, ['1.5', '1.75']);
  t.deepEqual(columns.high, ['2', '2.5']);
  t.deepEqual(columns.volume, ['10', '1,000']);
  const unclosed = t.throws(() => splitCandleCsv(`${HEADER}\n2025-01-01,"1,1,1,1,1\n`), { instanceOf: CandleImportError });
  t.regex(unclosed!.problems[0]!, /^line \d+: /);
});
