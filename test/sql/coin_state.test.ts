// market.refresh_coin_state(): the current figures of every coin, set-based, as of an instant.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
let now: string;

// coin id -> [price 7 days ago, price 24 hours ago, price now]
const paths: Record<number, [string, string, string]> = {
  201: ['80', '100', '110'], // +10 % in 24h, supply 1000
  202: ['50', '40', '30'], // -25 % in 24h, supply 100000: the largest marketcap
  203: ['2', '2', '2.5'], // no circulating supply: no marketcap, no dominance
  204: ['1', '1', '1'], // delisted: has a price, gets no rank
};

test.before(async () => {
  db = await testDatabase();
  now = ((await db.sql`select date_trunc('minute', now())::text as now`)[0]!.now as string);
  await db.sql`insert into market.data_sources (name, kind, description) values ('test', 'import', 'test bars')`;
  await db.sql`
    insert into market.coins (id, slug, symbol, name, type, status, circulating_supply, total_supply, max_supply, source) values
      (201, 'alpha', 'ALP', 'Alpha', 'coin', 'active', 1000, 2000, 3000, 'test'),
      (202, 'beta', 'BET', 'Beta', 'token', 'active', 100000, 100000, null, 'test'),
      (203, 'gamma', 'GAM', 'Gamma', 'coin', 'active', null, null, null, 'test'),
      (204, 'delta', 'DEL', 'Delta', 'coin', 'delisted', 500, 500, 500, 'test'),
      (205, 'epsilon', 'EPS', 'Epsilon', 'token', 'preparing', null, 1000, 1000, 'test')`;
  for (const [id, [week, day, current]] of Object.entries(paths)) {
    // one bar at each reference instant and one a minute before now; 10 USD of volume each
    await db.sql`
      insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
      values
        (${now}::timestamptz - interval '7 days', ${id}, ${week}, ${week}, ${week}, ${week}, 10),
        (${now}::timestamptz - interval '24 hours', ${id}, ${day}, ${day}, ${day}, ${day}, 10),
        (${now}::timestamptz - interval '1 minute', ${id}, ${current}, ${current}, ${current}, ${current}, 10)`;
  }
  // a spike two days ago makes the all-time high of alpha, a dip the all-time low
  await db.sql`
    insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume) values
      (${now}::timestamptz - interval '2 days', 201, 100, 150, 100, 100, 5),
      (${now}::timestamptz - interval '3 days', 201, 90, 90, 70, 90, 5)`;
  const [written] = await db.sql`select market.refresh_coin_state(${now}::timestamptz, true) as n`;
  if (written!.n !== 5) throw new Error(`expected 5 coins written, got ${written!.n}`);
});
test.after.always(() => db?.close());

const state = async (id: number) => (await db.sql`select * from market.coin_state where coin_id = ${id}`)[0]!;

test('price is the latest close and the changes compare it with the closes 24 hours and 7 days before', async (t) => {
  const alpha = await state(201);
  t.is(alpha.price, '110');
  t.is(alpha.change_24h, 10);
  t.is(alpha.change_7d, 37.5);
  t.is((await state(202)).change_24h, -25);
  t.is((await state(204)).change_24h, 0);
});

test('volume_24h sums the bars of the last 24 hours only', async (t) => {
  // the bar exactly 24 hours old belongs to the previous window
  t.is((await state(201)).volume_24h, '10');
  t.is((await state(202)).volume_24h, '10');
});

test('marketcap is price times circulating supply, null without one; fully diluted uses max, else total supply', async (t) => {
  const alpha = await state(201);
  t.is(alpha.marketcap, '110000.00');
  t.is(alpha.fully_diluted_valuation, '330000.00');
  t.is((await state(202)).fully_diluted_valuation, '3000000.00');
  const gamma = await state(203);
  t.is(gamma.marketcap, null);
  t.is(gamma.dominance, null);
  t.is(gamma.fully_diluted_valuation, null);
});

test('rank orders active priced coins by marketcap, those without one last; dominance shares the ranked total', async (t) => {
  const rows = await db.sql`select coin_id, rank, dominance from market.coin_state order by coin_id`;
  const byId = Object.fromEntries(rows.map((row) => [row.coin_id, row]));
  t.is(byId[202]!.rank, 1);
  t.is(byId[201]!.rank, 2);
  t.is(byId[203]!.rank, 3);
  t.is(byId[204]!.rank, null, 'delisted coins are not ranked');
  t.is(byId[205]!.rank, null, 'a coin without a price is not ranked');
  const total = 110000 + 3000000;
  t.true(Math.abs(byId[202]!.dominance - (3000000 / total) * 100) < 1e-4);
  t.true(Math.abs(byId[201]!.dominance - (110000 / total) * 100) < 1e-4);
  t.is(byId[204]!.dominance, null);
});

test('change ranks order the ranked coins by change, largest gain first', async (t) => {
  // 24h: gamma +25 %, alpha +10 %, beta -25 %
  t.deepEqual(
    [...(await db.sql`select coin_id, change_rank_24h from market.coin_state where rank is not null order by change_rank_24h`)].map((row) => row.coin_id),
    [203, 201, 202],
  );
});

test('all-time high and low come from the whole history; today holds the bars since midnight UTC', async (t) => {
  const alpha = await state(201);
  t.is(alpha.ath, '150');
  t.is(alpha.atl, '70');
  const [midnight] = await db.sql`select (date_trunc('day', ${now}::timestamptz, 'UTC') <= ${now}::timestamptz - interval '1 minute') as has_today`;
  if (midnight!.has_today) t.is(alpha.today_close, '110');
  else t.is(alpha.today_close, null);
});

test('a coin without bars has a row with no price', async (t) => {
  const epsilon = await state(205);
  t.is(epsilon.price, null);
  t.is(epsilon.volume_24h, '0');
  t.is(epsilon.last_updated, null);
});

test.serial('an incremental refresh extends the extremes with new bars without rescanning history', async (t) => {
  await db.sql`
    insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
    values (${now}::timestamptz, 201, 110, 200, 60, 111, 1)`;
  await db.sql`select market.refresh_coin_state(${now}::timestamptz + interval '1 minute')`;
  const alpha = await state(201);
  t.is(alpha.ath, '200');
  t.is(alpha.atl, '60');
  t.is(alpha.price, '111');
  await db.sql`delete from market.coin_bars_1m where coin_id = 201 and time = ${now}::timestamptz`;
  await db.sql`select market.refresh_coin_state(${now}::timestamptz, true)`;
  t.is((await state(201)).ath, '150', 'a full refresh recomputes them from history');
});
