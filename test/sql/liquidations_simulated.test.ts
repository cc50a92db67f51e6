// The demo liquidations: deterministic (the same minutes give the same rows), labelled demo,
// consistent (long positions closed by sells, value = price x quantity), written once per minute.
import test from 'ava';
import { ensureCatalogue } from '../../src/sources/simulated/index.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
  await ensureCatalogue(db.query);
  // two hours of the demo market's one-minute bars, enough for the liquidations that follow them
  await db.sql`insert into market.coin_bars_1m
    select * from market.simulated_bars(date_trunc('minute', now()) - interval '2 hours', date_trunc('minute', now()))`;
});
test.after.always(() => db?.close());

const snapshot = () => db.sql`select time, symbol, coin_id, position, "order", price::text, quantity::text, value_usd::text from market.liquidations order by time, symbol`;

test.serial('generated once, deterministic, consistent and labelled demo', async (t) => {
  const [first] = await db.sql`select * from market.simulate_liquidations()`;
  t.true(first!.inserted > 0);
  const [again] = await db.sql`select * from market.simulate_liquidations()`;
  t.is(again!.inserted, 0, 'a second run in the same minute writes nothing');
  const rows = await snapshot();
  t.is(rows.length, first!.inserted);

  await db.sql`delete from market.liquidations`;
  await db.sql`update market.data_sources set covered_until = null where name = 'simulated-liquidations'`;
  await db.sql`select * from market.simulate_liquidations()`;
  t.deepEqual(await snapshot(), rows, 'the same minutes give the same liquidations');

  const [check] = await db.sql`
    select count(*) filter (where (l.position = 'long') <> (l."order" = 'sell'))::int as wrong_side,
      count(*) filter (where l.value_usd <> round(l.price * l.quantity, 2))::int as wrong_value,
      count(*) filter (where l.symbol <> upper(c.symbol) || '-USDT-SWAP')::int as wrong_symbol,
      count(*) filter (where l.exchange <> 'okx' or l.instrument <> 'swap')::int as not_okx_swap,
      count(distinct l.position)::int as sides,
      bool_and(s.demo) as demo
    from market.liquidations l
    join market.coins c on c.id = l.coin_id
    join market.data_sources s on s.name = l.source`;
  t.deepEqual({ ...check }, { wrong_side: 0, wrong_value: 0, wrong_symbol: 0, not_okx_swap: 0, sides: 2, demo: true });
  const [stable] = await db.sql`
    select count(*)::int as n from market.liquidations l join market.simulated_coins sc on sc.coin_id = l.coin_id where sc.volatility < 0.05`;
  t.is(stable!.n, 0, 'no stablecoin liquidations');
});
