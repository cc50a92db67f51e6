// OKX liquidation orders (the real liquidation feed) on the loopback replay of OKX's public REST:
// the first poll pages back over the feed's 48 hours, later polls add only what is new, contracts
// become coins through the swap's contract size, and an unreadable answer writes nothing.
import test from 'ava';
import { Decimal } from 'decimal.js';
import { ExchangesSource } from '../../src/sources/exchanges/index.ts';
import { OkxLiquidations } from '../../src/sources/exchanges/liquidations.ts';
import { runSource } from '../../src/sources/source.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { withQuery } from '../helpers/query.ts';
import { startVenueReplay, DAY, HOUR, type VenueReplay } from '../../dev/venues/replay.ts';

let db: TestDatabase;
let replay: VenueReplay;
let market: ExchangesSource;
let liquidations: OkxLiquidations;
let clock = Date.now();
const coins = [
  { symbol: 'BTC', price: 90000, volumeUsd: 3e10, firstTradeAt: Date.now() - 400 * DAY },
  { symbol: 'ETH', price: 3000, volumeUsd: 1e10, firstTradeAt: Date.now() - 400 * DAY },
  { symbol: 'USDT', price: 1, volumeUsd: 5e10, firstTradeAt: Date.now() - 400 * DAY, volatility: 0.01 },
];

const poll = () => withQuery(db, (query) => runSource(query, liquidations));
const feed = async () =>
  (await db.sql`select l.symbol, (extract(epoch from l.time) * 1000)::bigint::text as ts, l.position, l."order", l.price::text, l.quantity::text, l.value_usd::text, c.slug
    from market.liquidations l left join market.coins c on c.id = l.coin_id order by l.symbol, l.time`) as unknown as Record<string, string>[];

test.before(async () => {
  db = await testDatabase();
  replay = await startVenueReplay({ coins, venues: { okx: { markets: ['BTC/USDT', 'ETH/USDT'], swaps: ['BTC', 'ETH'] } }, now: () => clock });
  market = new ExchangesSource({ venues: ['okx'], urls: { okx: replay.baseUrl('okx') }, rateLimitMs: 5 });
  liquidations = new OkxLiquidations(async () => {
    const okx = market.venue('okx').exchange;
    await okx.loadMarkets();
    return okx;
  });
  // the market run loads OKX's spot and swap markets, maps them to coins and prices USDT
  await withQuery(db, (query) => runSource(query, market));
});
test.after.always(async () => {
  await replay?.close();
  await db?.close();
});

test.serial('the first poll brings the last 48 hours of both swaps, converted from contracts', async (t) => {
  // the feed's 48 hours end where the poll looks back from (the real clock, a moment after the replay's)
  const started = Date.now();
  const result = await poll();
  const ended = Date.now();
  t.is(result.underlyings, 2);
  const rows = await feed();
  const since = (from: number) =>
    coins.slice(0, 2).flatMap((coin) => replay.model.liquidations(coin, from, clock).map((order) => ({ ...order, symbol: `${coin.symbol}-USDT-SWAP` })));
  const expected = since(ended - 48 * HOUR);
  t.true(expected.length > 500, `${expected.length} orders in 48 hours: several pages each`);
  t.true(rows.length >= expected.length && rows.length <= since(started - 48 * HOUR).length, `${rows.length} rows, ${expected.length} expected`);
  // USDT has no market of its own here: its peg
  const [usdt] = await db.sql`select market.usd_rate('USDT', c.id)::text as price from market.coins c where c.slug = 'tether'`;
  t.is(usdt!.price, '1');
  const first = expected.find((order) => order.symbol === 'BTC-USDT-SWAP')!;
  const row = rows.find((r) => r.symbol === 'BTC-USDT-SWAP' && r.ts === String(first.ts))!;
  // BTC-USDT-SWAP contracts are 0.01 BTC; a sell closes a long
  t.is(row.quantity, new Decimal(first.sz).times('0.01').toString());
  t.is(row.position, first.side === 'sell' ? 'long' : 'short');
  t.is(row.order, first.side);
  t.is(row.slug, 'bitcoin');
  // orders older than the daily rollup's refresh window were rolled up at once: every day of the feed has its row
  const days = await db.sql`select count(*)::int as n, sum(longs + shorts)::int as orders from market.liquidations_1d`;
  const feedDays = await db.sql`select count(distinct date_trunc('day', time, 'UTC'))::int as n, count(*)::int as orders from market.liquidations`;
  t.is(days[0]!.n, feedDays[0]!.n);
  t.is(days[0]!.orders, feedDays[0]!.orders);
  t.is(row.value_usd, new Decimal(row.price!).times(row.quantity!).times(usdt!.price as string).toDecimalPlaces(2).toFixed(2));
});

test.serial('later polls add only the new orders; a repeated order is written once', async (t) => {
  const before = (await feed()).length;
  t.like(await poll(), { inserted: 0 });
  clock += 2 * HOUR;
  const result = await poll();
  const fresh = coins.slice(0, 2).reduce((sum, coin) => sum + replay.model.liquidations(coin, clock - 2 * HOUR + 1, clock).length, 0);
  t.true(fresh > 0);
  t.is(result.inserted, fresh);
  t.is((await feed()).length, before + fresh);
  // one page was enough for two hours
  t.true(result.received <= 2 * 100);
});

test.serial('an unreadable answer fails the run, recorded in the source health, and writes nothing', async (t) => {
  const before = (await feed()).length;
  clock += HOUR;
  replay.faults.set('okx', { malformed: true });
  await t.throwsAsync(poll(), { message: /^okx \S*\/api\/v5\/public\/liquidation-orders: JSON cut short/ });
  replay.faults.clear();
  t.is((await feed()).length, before);
  t.like((await db.sql`select status from market.source_health where name = 'okx-liquidations'`)[0], { status: 'failing' });
  await poll();
  t.like((await db.sql`select status from market.source_health where name = 'okx-liquidations'`)[0], { status: 'ok' });
});
