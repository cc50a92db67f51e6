// The checks every venue answer passes before anything of it is written (src/sources/exchanges/answers.ts),
// on what ccxt's own parsers make of unreadable bodies.
import test from 'ava';
import ccxt, { type OHLCV } from 'ccxt';
import { BadVenueAnswer, candleRows, reading, tickerRows } from '../../src/sources/exchanges/answers.ts';

const venue = { id: 'binance', endpoint: '/api/v3/klines' };

test('the rows Binance\'s parser makes of a cut candle body (one per character) are refused, naming venue, endpoint and row', (t) => {
  const binance = new ccxt.binance();
  const body = JSON.stringify([[1_700_000_000_000, '1.0', '2.0', '0.5', '1.5', '10']]);
  const rows = binance.parseOHLCVs(body.slice(0, Math.floor(body.length * 0.55)) as never) as OHLCV[];
  t.true(rows.length > 0, 'ccxt made rows of the text');
  const error = t.throws(() => candleRows(venue, 'BTC/USDT', rows), { instanceOf: BadVenueAnswer });
  t.regex(error!.message, /^binance \/api\/v3\/klines: candle 1 of \d+ for BTC\/USDT is not a candle/);
});

test('candles with a missing or non-decimal price are refused; whole candles pass as they came', (t) => {
  const good: OHLCV[] = [[1_700_000_000_000, '1.0', '2.0', '0.5', '1.5', '10'] as never];
  t.is(candleRows(venue, 'BTC/USDT', good), good);
  t.throws(() => candleRows(venue, 'BTC/USDT', [[1_700_000_000_000, '1.0', null, '0.5', '1.5', '10']] as never), { instanceOf: BadVenueAnswer });
  t.throws(() => candleRows(venue, 'BTC/USDT', [[1_700_000_000_000, '1.0', 'n/a', '0.5', '1.5', '10']] as never), { instanceOf: BadVenueAnswer });
  t.throws(() => candleRows(venue, 'BTC/USDT', [['1700000000000', '1.0', '2.0', '0.5', '1.5', '10']] as never), { instanceOf: BadVenueAnswer });
});

test('tickers: none, nameless or all without a price are refused', (t) => {
  const where = { id: 'kraken', endpoint: '/0/public/Ticker' };
  t.throws(() => tickerRows(where, {}), { instanceOf: BadVenueAnswer, message: /^kraken \/0\/public\/Ticker: no tickers/ });
  t.throws(() => tickerRows(where, { x: { symbol: undefined, last: '1' } } as never), { instanceOf: BadVenueAnswer, message: /1 of 1 tickers name no market/ });
  t.throws(() => tickerRows(where, { 'BTC/USD': { symbol: 'BTC/USD' } } as never), { instanceOf: BadVenueAnswer, message: /no ticker has a price/ });
  t.is(tickerRows(where, { 'BTC/USD': { symbol: 'BTC/USD', last: '50000.1' } } as never).length, 1);
});

test('a parser\'s own TypeError becomes BadVenueAnswer naming the endpoint; ccxt\'s errors pass as they are', async (t) => {
  const where = { id: 'binance', endpoint: '/api/v3/ticker/24hr' };
  const error = await t.throwsAsync(
    reading(where, 'tickers', async () => {
      throw new TypeError("Cannot use 'in' operator to search for 'symbol' in [");
    }),
    { instanceOf: BadVenueAnswer },
  );
  t.is(error!.message, "binance /api/v3/ticker/24hr: tickers unreadable (Cannot use 'in' operator to search for 'symbol' in [)");
  await t.throwsAsync(reading(where, 'tickers', async () => { throw new ccxt.RateLimitExceeded('slow down'); }), { instanceOf: ccxt.RateLimitExceeded });
  t.is(await reading(where, 'tickers', async () => 7), 7);
});
