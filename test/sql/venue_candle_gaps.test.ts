// market.venue_candle_gaps (issue 46): what the stream holder asks of REST again once a minute. Only a
// minute missing between stored candles of the markets it names counts; one before a market's first
// stored minute or after its last does not, nor another venue's or another market's.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { loadIndexMarket } from '../helpers/index-market.ts';

let db: TestDatabase;
const MINUTE = 60_000;
/** twenty whole minutes ago */
const T0 = Math.floor(Date.now() / MINUTE) * MINUTE - 20 * MINUTE;

test.before(async () => {
  db = await testDatabase();
  await loadIndexMarket(db.sql, [
    ['binance', 'BTC/USDT', 'btc', 'USDT'],
    ['binance', 'ETH/USDT', 'eth', 'USDT'],
    ['kraken', 'BTC/EUR', 'btc', 'EUR'],
  ]);
});
test.after.always(() => db?.close());

const candle = (symbol: string, minute: number) => [symbol, T0 + minute * MINUTE, '100', '101', '99', '100', '1'];
const gaps = async (venue: string, symbols: string[], from = T0 - 5 * MINUTE, to = T0 + 15 * MINUTE) =>
  (await db.sql<{ symbol: string; minute: number }[]>`
    select symbol, ((extract(epoch from minute) * 1000)::float8 - ${T0}) / ${MINUTE} as minute
    from market.venue_candle_gaps(${venue}, ${symbols}::text[], ${new Date(from)}, ${new Date(to)}) order by 1, 2`)
    .map((row) => `${row.symbol} +${row.minute}`);

test('the minutes missing between stored ones of the markets named, within the range', async (t) => {
  const write = (venue: string, rows: (string | number)[][]) =>
    db.sql`select * from market.ingest_venue_candles(${venue}, ${JSON.stringify(rows)}::text::jsonb)`;
  // BTC/USDT: minutes 0, 1, 4, 5 and 9 (gaps 2, 3, 6, 7, 8); ETH/USDT: 0 to 3, none missing; kraken: 0 and 2
  await write('binance', [0, 1, 4, 5, 9].map((m) => candle('BTC/USDT', m)));
  await write('binance', [0, 1, 2, 3].map((m) => candle('ETH/USDT', m)));
  await write('kraken', [0, 2].map((m) => candle('BTC/EUR', m)));

  t.deepEqual(await gaps('binance', ['BTC/USDT', 'ETH/USDT']), ['BTC/USDT +2', 'BTC/USDT +3', 'BTC/USDT +6', 'BTC/USDT +7', 'BTC/USDT +8']);
  t.deepEqual(await gaps('binance', ['ETH/USDT']), [], 'a market not named is not looked at');
  t.deepEqual(await gaps('kraken', ['BTC/EUR', 'BTC/USDT']), ['BTC/EUR +1'], 'only the venue named (its BTC/USDT has no market there)');
  // the range bounds the stored minutes looked at: from minute 5, the first stored is 5, so 2 and 3 are no gap;
  // up to minute 9 (excluded), 5 is the last stored, so 6 to 8 are none either
  t.deepEqual(await gaps('binance', ['BTC/USDT'], T0 + 5 * MINUTE), ['BTC/USDT +6', 'BTC/USDT +7', 'BTC/USDT +8']);
  t.deepEqual(await gaps('binance', ['BTC/USDT'], T0, T0 + 9 * MINUTE), ['BTC/USDT +2', 'BTC/USDT +3']);
  // filled: no gap left
  await write('binance', [2, 3, 6, 7, 8].map((m) => candle('BTC/USDT', m)));
  t.deepEqual(await gaps('binance', ['BTC/USDT', 'ETH/USDT']), []);
});
