// The incremental coin state across midnight UTC (issue 46): a late bar of the day before, arriving
// after midnight, moves the price history but not today's open, high, low and close, exactly as the
// full computation reads them. Found by coin_state_incremental.test.ts in a run just after midnight;
// here on fixed times, whatever the hour the suite runs at.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
});
test.after.always(() => db?.close());

test('a late bar of the day before, added after midnight, is not today\'s: the incremental state equals the full one', async (t) => {
  const { sql } = db;
  // today's midnight (UTC), always past and within the bars' retention
  const [{ day }] = (await sql`select date_trunc('day', now(), 'UTC')::text as day`) as unknown as [{ day: string }];
  const at = (offset: string) => sql`select (${day}::timestamptz + ${offset}::interval)::text as t`.then(([row]) => row!.t as string);
  await sql`insert into market.data_sources (name, kind, description) values ('test', 'import', 'test bars')`;
  await sql`insert into market.coins (id, slug, symbol, name, type, circulating_supply, source) values (501, 'late', 'LATE', 'Late', 'coin', 1000, 'test')`;
  // its last bar two hours before midnight: nothing today yet
  await sql`insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume) values (${await at('-2 hours')}, 501, 10, 10, 10, 10, 1)`;
  await sql`select market.refresh_coin_state(${await at('2 minutes')}::timestamptz)`;
  t.like((await sql`select price::text, today_open from market.coin_state where coin_id = 501`)[0], { price: '10', today_open: null });

  // after midnight: today's first bar, and a late bar of 23:45 the day before with a lower low (both after the
  // stored price: added to the stored figures, not computed again)
  await sql`insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume) values
    (${await at('-15 minutes')}, 501, 5, 6, 4, 5, 1), (${await at('2 minutes')}, 501, 20, 22, 18.5, 21, 1)`;
  const now = await at('3 minutes');
  await sql`select market.refresh_coin_state(${now}::timestamptz)`;
  const columns = sql`select price::text, today_open::text, today_high::text, today_low::text, today_close::text, ath::text, atl::text from market.coin_state where coin_id = 501`;
  const [incremental] = await columns;
  t.like(incremental, { price: '21', today_open: '20', today_high: '22', today_low: '18.5', today_close: '21', atl: '4' }, 'the late bar moves the low of all time, not today\'s');
  await sql`select market.write_coin_state(${now}::timestamptz, false, false)`;
  t.deepEqual(incremental, (await columns)[0], 'the full computation');
});
