// The incremental coin state (issue 46): after a minute's work, market.coin_state is the same,
// column by column, as a full recomputation from the same starting state, for 20 000 coins whose
// bars move in every way a minute can move them.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

const COINS = 20_000;
let db: TestDatabase;
let start: string;

test.before(async () => {
  db = await testDatabase({ statementTimeoutMs: 120_000, optimisedWasm: true });
  // three minutes of one UTC day, within the bars' retention
  [{ start }] = (await db.sql`
    select (case when date_trunc('day', t, 'UTC') = date_trunc('day', t + interval '3 minutes', 'UTC') then t else t - interval '10 minutes' end)::text as start
    from (select date_trunc('minute', now()) - interval '5 minutes' as t) n`) as unknown as [{ start: string }];
  await db.sql`insert into market.data_sources (name, kind, description) values ('test', 'import', 'test bars')`;
  await db.sql`
    insert into market.coins (id, slug, symbol, name, type, status, circulating_supply, total_supply, max_supply, source)
    select g, 'coin-' || g, 'C' || g, 'Coin ' || g, 'coin', case when g % 50 = 0 then 'delisted' else 'active' end,
      case when g % 17 = 0 then null else 1000 + g end, 5000 + g, case when g % 2 = 0 then 9000 + g end, 'test'
    from generate_series(1, ${COINS}) g`;
  // Every coin: a bar a week and a day before, a few within the day; some exactly where the 24h and
  // 7d windows will pass them in the next minutes; prices and volumes of several scales.
  await db.sql`
    insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
    select b.time, g, p, p * 1.01, p * 0.99, p, round((g % 1000) * 1.25, (g % 3) * 2)
    from generate_series(1, ${COINS}) g
    cross join lateral (select 1 + (g % 997) / 10.0 as base) s
    cross join lateral (values
      (${start}::timestamptz - interval '7 days' - (g % 5) * interval '1 minute', s.base * 0.8),
      (${start}::timestamptz - interval '24 hours' - (g % 4) * interval '1 minute', s.base * 0.9),
      (${start}::timestamptz - interval '2 hours', s.base * 0.95),
      (${start}::timestamptz - interval '1 minute', s.base)
    ) b (time, p)
    union all
    -- bars the windows pass at the first and second minute
    select ${start}::timestamptz - interval '7 days' + m * interval '1 minute', g, 2, 3, 1, 2, 7
    from generate_series(1, ${COINS}) g, (values (1), (2)) w (m) where g % (9 + m) = 0
    union all
    select ${start}::timestamptz - interval '24 hours' + m * interval '1 minute', g, 2, 4, 0.5, 2, 11.125
    from generate_series(1, ${COINS}) g, (values (1), (2)) w (m) where g % (2 + m) = 0`;
  // some coins have not traded for two hours: their next bars are read one coin at a time
  await db.sql`delete from market.coin_bars_1m where coin_id % 107 = 0 and time = ${start}::timestamptz - interval '1 minute'`;
  const [full] = await db.sql`select market.refresh_coin_state(${start}::timestamptz) as coins`;
  if (full!.coins !== COINS) throw new Error(`the first refresh computed ${full!.coins} coins`);
});
test.after.always(() => db?.close());

/** A minute's bars at `time` for some coins, and the other ways bars and the catalogue change. */
async function minuteOfChanges(time: string, minute: number) {
  await db.sql`
    insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
    select ${time}::timestamptz, g, p, p * (1 + (g % 7) / 100.0), p * 0.98, p, (g % 100) * 0.5
    from generate_series(1, ${COINS}) g
    cross join lateral (select 1 + ((g * ${minute}) % 991) / 10.0 as p) s
    where g % (${minute} + 2) <> 1
    on conflict do nothing`;
  // a late bar changed, a late one written, one removed, one written ahead of its minute
  await db.sql`update market.coin_bars_1m set close = close * 1.5, high = high * 1.5, volume = volume + 1
               where coin_id % 97 = ${minute} and time = ${start}::timestamptz - interval '1 minute'`;
  await db.sql`insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
               select ${start}::timestamptz - interval '5 hours', g, 1000, 1000, 1000, 1000, 3
               from generate_series(1, ${COINS}) g where g % 89 = ${minute}`;
  await db.sql`delete from market.coin_bars_1m where coin_id % 83 = ${minute} and time = ${start}::timestamptz - interval '2 hours'`;
  await db.sql`insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
               select ${time}::timestamptz + interval '1 minute', g, 0.5, 0.5, 0.01, 0.5, 2
               from generate_series(1, ${COINS}) g where g % 101 = ${minute}
               on conflict do nothing`;
  // a bar of half an hour ago arrives late for coins that had not traded for two hours
  await db.sql`insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
               select ${time}::timestamptz - interval '30 minutes', g, 3, 3.5, 2.5, 3, 4
               from generate_series(1, ${COINS}) g where g % 107 = 0 and ${minute} = 1`;
  // the catalogue moves too: supplies, a delisting, a new coin with bars
  await db.sql`update market.coins set circulating_supply = circulating_supply * 2 where id % 71 = ${minute}`;
  await db.sql`update market.coins set status = 'delisted' where id % 73 = ${minute}`;
  const id = COINS + minute;
  await db.sql`insert into market.coins (id, slug, symbol, name, type, circulating_supply, source)
               values (${id}, ${`new-coin-${minute}`}, 'NEW', 'New coin', 'token', 10, 'test')`;
  await db.sql`insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
               values (${time}::timestamptz, ${id}, 9, 9, 9, 9, 9)`;
}

/**
 * The columns (but refreshed_at) of coins whose incremental and full states differ. Numbers compare
 * by value (jsonb): a sum moved with its window, or the larger of two equal highs, may keep other
 * trailing zeros than the sum or maximum over the window.
 */
async function differences() {
  return db.sql`
    select d.coin_id, k.key, d.incremental -> k.key as incremental, d.full -> k.key as full
    from (
      select coalesce(a.coin_id, b.coin_id) as coin_id, to_jsonb(a) - 'refreshed_at' as incremental, to_jsonb(b) - 'refreshed_at' as full
      from coin_state_incremental a
      full join market.coin_state b on b.coin_id = a.coin_id
      where to_jsonb(a) - 'refreshed_at' is distinct from to_jsonb(b) - 'refreshed_at'
    ) d
    cross join lateral jsonb_object_keys(coalesce(d.incremental, d.full)) k (key)
    where d.incremental -> k.key is distinct from d.full -> k.key
    order by 1, 2 limit 10`;
}

test.serial('two minutes of incremental refreshes equal a full recomputation, column by column, for 20 000 coins', async (t) => {
  for (const minute of [1, 2]) {
    const now = (await db.sql`select (${start}::timestamptz + ${minute} * interval '1 minute')::text as now`)[0]!.now as string;
    const bars = (await db.sql`select (${now}::timestamptz - interval '1 minute')::text as bars`)[0]!.bars as string;
    await db.sql`drop table if exists coin_state_before, coin_state_incremental`;
    await db.sql`create table coin_state_before as select * from market.coin_state`;
    await minuteOfChanges(bars, minute);

    const [incremental] = await db.sql`select market.refresh_coin_state(${now}::timestamptz) as coins`;
    t.true(incremental!.coins < COINS, `minute ${minute}: ${incremental!.coins} coins computed, not every coin`);
    t.true(incremental!.coins > COINS / 3, `minute ${minute}: the coins with a new bar are computed`);
    await db.sql`create table coin_state_incremental as select * from market.coin_state`;

    // the full recomputation from the same starting state
    await db.sql`delete from market.coin_state`;
    await db.sql`insert into market.coin_state select * from coin_state_before`;
    const [full] = await db.sql`select market.write_coin_state(${now}::timestamptz, false, false) as coins`;
    t.is(full!.coins, COINS + minute);
    t.deepEqual([...(await differences())], [], `minute ${minute}`);

    // the next minute goes on from the incremental state
    await db.sql`delete from market.coin_state`;
    await db.sql`insert into market.coin_state select * from coin_state_incremental`;
  }
});
