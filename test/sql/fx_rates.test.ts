// The fiat rates seeded until a reference source runs: units of currency per US dollar.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
});
test.after.always(() => db?.close());

test('the latest rates cover USD at 1 and the major currencies of the convert option', async (t) => {
  const rows = await db.sql`select currency, rate from market.fx_latest`;
  const rates = Object.fromEntries(rows.map((row) => [row.currency, row.rate as string]));
  t.is(rates.USD, '1');
  for (const currency of ['EUR', 'GBP', 'JPY', 'CHF', 'CAD', 'AUD', 'CNY']) t.truthy(rates[currency], currency);
  t.true(Number(rates.JPY) > 50 && Number(rates.EUR) < 2, 'rates are units per dollar, not dollars per unit');
  const [source] = await db.sql`select demo from market.data_sources where name = 'fx-seed'`;
  t.true(source!.demo);
});

test('a newer rate wins', async (t) => {
  await db.sql`insert into market.data_sources (name, kind, description) values ('ecb-test', 'reference', 'test')`;
  await db.sql`insert into market.fx_rates (time, currency, rate, source) values (now(), 'EUR', 0.9, 'ecb-test')`;
  const [eur] = await db.sql`select rate, source from market.fx_latest where currency = 'EUR'`;
  t.deepEqual({ ...eur }, { rate: '0.9', source: 'ecb-test' });
});
