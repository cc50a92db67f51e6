// market.json_page: the one pagination mechanism of the list functions.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
});
test.after.always(() => db?.close());

const page = async (rows: number, skip: number, take: number) => {
  const [row] = await db.sql`
    select market.json_page(r, ${skip}::bigint, ${take}::int order by r.n desc) as page
    from (select n, 'row ' || n as label, n * 1.5 as amount from generate_series(1, ${rows}::int) n) r`;
  return row!.page as { total: number; data: { n: number; label: string; amount: number }[] };
};

test('the rows of the page in the given order, as objects named by column, and the count of all rows', async (t) => {
  const result = await page(7, 2, 3);
  t.is(result.total, 7);
  t.deepEqual(result.data, [
    { n: 5, label: 'row 5', amount: 7.5 }, { n: 4, label: 'row 4', amount: 6.0 }, { n: 3, label: 'row 3', amount: 4.5 },
  ]);
});

test('a last page that is partly filled, a page beyond the end and no rows at all', async (t) => {
  t.deepEqual((await page(7, 6, 3)).data.map((row) => row.n), [1]);
  t.deepEqual(await page(7, 9, 3), { total: 7, data: [] });
  t.deepEqual(await page(0, 0, 3), { total: 0, data: [] });
});
