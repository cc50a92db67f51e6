// The price index (market.build_index_bars) on venue candles written through the ingest functions:
// USD, fiat and stablecoin quotes, the volume weighting, true high and low, an outlier venue, a thin
// market, gaps, late candles, and a malformed batch that writes nothing.
import test from 'ava';
import { Decimal } from 'decimal.js';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { loadIndexMarket, type IndexMarket } from '../helpers/index-market.ts';

let db: TestDatabase;
const MINUTE = 60_000;
/** ten whole minutes ago: inside every refresh policy, so no backfill window is opened */
const T0 = Math.floor(Date.now() / MINUTE) * MINUTE - 10 * MINUTE;
let eurPerUsd: Decimal;

const markets: IndexMarket[] = [
  ['binance', 'BTC/USDT', 'btc', 'USDT'],
  ['coinbase', 'BTC/USD', 'btc', 'USD'],
  ['coinbase', 'USDT/USD', 'usdt', 'USD'],
  ['kraken', 'BTC/EUR', 'btc', 'EUR'],
  ['kraken', 'USDT/USD', 'usdt', 'USD'],
  ['okx', 'BTC/USDT', 'btc', 'USDT'],
  ['bybit', 'BTC/USD', 'btc', 'USD'],
  ['binance', 'ETH/USDT', 'eth', 'USDT'],
];

const candles = (venue: string, rows: (string | number)[][]) =>
  db.sql`select * from market.ingest_venue_candles(${venue}, ${JSON.stringify(rows)}::text::jsonb)`;
const build = async (from = T0, to = T0 + 5 * MINUTE) =>
  (await db.sql`select * from market.build_index_bars(${new Date(from)}, ${new Date(to)})`)[0]!;
const bar = async (slug: string, time = T0) =>
  (await db.sql`select b.open::text, b.high::text, b.low::text, b.close::text, b.volume::text, b.marketcap::text
    from market.coin_bars_1m b join market.coins c on c.id = b.coin_id where c.slug = ${slug} and b.time = ${new Date(time)}`)[0];

test.before(async () => {
  db = await testDatabase();
  eurPerUsd = await loadIndexMarket(db.sql, markets);
});
test.after.always(() => db?.close());

test.serial('a normal minute: USD, EUR and USDT markets, volume-weighted open and close, the true high and low', async (t) => {
  // USDT is priced first, from its own USD markets: the median of 1.001 and 0.999
  await candles('coinbase', [['USDT/USD', T0, '1.001', '1.002', '1.000', '1.001', '5000000']]);
  await candles('kraken', [
    ['USDT/USD', T0, '0.999', '1.000', '0.998', '0.999', '3000000'],
    ['BTC/EUR', T0, eurPerUsd.times(99950).toFixed(2), eurPerUsd.times(100060).toFixed(2), eurPerUsd.times(99900).toFixed(2), eurPerUsd.times(100000).toFixed(2), '1'],
  ]);
  await candles('binance', [['BTC/USDT', T0, '100000', '100200', '99990', '100100', '2']]);
  await candles('coinbase', [['BTC/USD', T0, '99980', '100150', '99800', '100000', '1']]);
  const built = await build();
  t.like(built, { excluded: 0 });
  // USDT's own bar is volume-weighted like any other; its rate for the BTC/USDT market was the median, 1.000
  const usdt = await bar('usdt');
  t.is(usdt!.close, new Decimal(1.001).times(5005000).plus(new Decimal(0.999).times(2997000)).div(8002000).toSignificantDigits(10).toString());

  const btc = (await bar('btc'))!;
  // weights are the USD volumes of the minute: 2 × 100100, 1 × 100000, 1 × ~100000
  const parts = [
    { open: new Decimal(100000), close: new Decimal(100100), volume: new Decimal(2) },
    { open: new Decimal(99980), close: new Decimal(100000), volume: new Decimal(1) },
    { open: new Decimal(99950), close: new Decimal(100000), volume: new Decimal(1) },
  ].map((part) => ({ ...part, weight: part.volume.times(part.close) }));
  const total = parts.reduce((sum, part) => sum.plus(part.weight), new Decimal(0));
  const close = parts.reduce((sum, part) => sum.plus(part.close.times(part.weight)), new Decimal(0)).div(total);
  const open = parts.reduce((sum, part) => sum.plus(part.open.times(part.weight)), new Decimal(0)).div(total);
  t.true(new Decimal(btc.close).minus(close).abs().lt(0.001), `close ${btc.close} ≈ ${close}`);
  t.true(new Decimal(btc.open).minus(open).abs().lt(0.001), `open ${btc.open} ≈ ${open}`);
  // the extremes actually traded: binance's high, coinbase's low
  t.is(btc.high, '100200');
  t.is(btc.low, '99800');
  t.true(new Decimal(btc.volume).minus(total).abs().lt(0.01));
  t.is(btc.marketcap, new Decimal(btc.close).times(20000000).toFixed(2));
  // a coin without candles in the minute has no bar: gaps stay gaps
  t.is(await bar('eth'), undefined);
  t.is(await bar('btc', T0 + MINUTE), undefined);
});

test.serial('a venue far from the median is left out and flagged; a thin market is left out while a deep one exists', async (t) => {
  const before = (await bar('btc'))!;
  await candles('okx', [['BTC/USDT', T0, '150000', '150500', '149000', '150000', '3']]);
  // bybit's ticker says its BTC/USD market trades 5 000 USD a day: under the threshold
  await db.sql`select market.ingest_venue_tickers('bybit', ${JSON.stringify([{ symbol: 'BTC/USD', last: '100050', quoteVolume: '5000', baseVolume: '0.05' }])}::text::jsonb)`;
  await db.sql`select market.ingest_venue_tickers('coinbase', ${JSON.stringify([{ symbol: 'BTC/USD', last: '100000', quoteVolume: '900000000', baseVolume: '9000' }])}::text::jsonb)`;
  await candles('bybit', [['BTC/USD', T0, '100050', '100900', '90000', '100050', '50']]);
  const built = await build();
  t.is(built.excluded, 2);
  const flagged = await db.sql`select e.slug, x.reason, x.price_usd::text, x.median_usd::text from market.price_index_exclusions x
    join market.exchanges e on e.id = x.exchange_id where x.time = ${new Date(T0)} order by e.slug`;
  t.deepEqual(flagged.map((row) => [row.slug, row.reason]), [['bybit', 'low_volume'], ['okx', 'outlier']]);
  t.is(flagged[1]!.price_usd, '150000');
  // the bar is the one of the three agreeing venues: neither okx's price nor bybit's low of 90 000 got in
  t.deepEqual(await bar('btc'), before);
});

test.serial('late candles rebuild the minute; an unchanged rebuild writes nothing', async (t) => {
  t.like(await build(), { bars: 0 });
  await candles('binance', [['ETH/USDT', T0 + MINUTE, '3000', '3010', '2990', '3005', '10']]);
  // no USDT market in that minute and USDT not priced yet: the market waits, flagged
  t.like(await build(), { bars: 0, excluded: 3 }); // okx and bybit at T0 again, ETH/USDT now
  await db.sql`select market.refresh_coin_state()`;
  const built = await build();
  t.like(built, { bars: 1, coins: 1 });
  // USDT at its current price (its last bar's close)
  const [usdt] = await db.sql`select price::text from market.coin_state s join market.coins c on c.id = s.coin_id where c.slug = 'usdt'`;
  const usd = (value: number) => new Decimal(value).times(usdt!.price as string).toSignificantDigits(10).toString();
  t.like(await bar('eth', T0 + MINUTE), { high: usd(3010), low: usd(2990) });
  // the ticker snapshot converts USDT the same way
  await db.sql`select market.ingest_venue_tickers('binance', ${JSON.stringify([{ symbol: 'ETH/USDT', last: '3005', bid: '3004', ask: '3006', quoteVolume: '1000000', baseVolume: '333', timestamp: String(T0) }])}::text::jsonb)`;
  const [ticker] = await db.sql`select t.price::text, t.price_usd::text, t.volume_usd::text, t.spread from market.tickers t
    join market.exchanges e on e.id = t.exchange_id where e.slug = 'binance' and t.exchange_symbol = 'ETHUSDT'`;
  t.is(ticker!.price, '3005');
  t.is(ticker!.price_usd, usd(3005));
  t.true(Math.abs((ticker!.spread as number) - (2 / 3005) * 100) < 0.0001);
});

test.serial('a malformed candle rejects the whole batch: nothing of it is written', async (t) => {
  const count = async () => Number((await db.sql`select count(*) from market.venue_bars_1m`)[0]!.count);
  const before = await count();
  for (const bad of [
    [['ETH/USDT', T0 + 2 * MINUTE, '3000', '3010', '2990', '3005', '1'], ['ETH/USDT', T0 + 3 * MINUTE, '3000', '2900', '2990', '3005', '1']],
    [['ETH/USDT', T0 + 2 * MINUTE, '3000', '3010', '2990', '3005', '1'], ['ETH/USDT', T0 + 3 * MINUTE, 'NaN', '3010', '2990', '3005', '1']],
    [['ETH/USDT', T0 + 2 * MINUTE, '3000', '3010', '2990', '3005', '1'], ['ETH/USDT', 'yesterday', '3000', '3010', '2990', '3005', '1']],
  ]) {
    await t.throwsAsync(candles('binance', bad), { message: /malformed candle/ });
  }
  t.is(await count(), before);
});
