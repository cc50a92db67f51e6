// The small SQL helpers that list endpoints call once per row (sort keys, significant digits, the
// page cut): exact, and inlined by the planner
// (a SQL function that is not inlined runs as a function call per row, which made the ticker list
// two to three times slower than it is).
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
});
test.after.always(() => db?.close());

test('market.decimal_exponent is floor(log10(|x|)) exactly, also next to powers of ten beyond a float\'s digits', async (t) => {
  const [row] = await db.sql<{ checked: number; wrong: string[] }[]>`
    with v as (
      select ('1e' || e::text)::numeric * m as x
      from generate_series(-40, 40) e,
        unnest(array[1, 0.99999999999999999999999, 1.00000000000000000000001, 0.9999999, 1.0000001, 3.14159, 9.99999999999999999999999, 5]::numeric[]) m
      union all select -x from (values (123.45::numeric), (0.000999), (1000), (1)) n (x)
      union all select (i * 7919 % 100003)::numeric / 1000::numeric ^ (i % 9) from generate_series(1, 2000) i
    )
    -- the exponent read off the digits: numeric log() itself rounds 9.99…9 (23 nines) up to 1
    select count(*)::int as checked,
      coalesce(array_agg(x::text) filter (where market.decimal_exponent(x) <> case
        when abs(x) >= 1 then length(trunc(abs(x))::text) - 1
        else -(length(substring(abs(x)::text from '^0[.](0*)')) + 1) end), '{}') as wrong
    from v`;
  t.true(row!.checked > 2500);
  t.deepEqual(row!.wrong, []);
  const [edges] = await db.sql`
    select market.decimal_exponent(123.4) as a, market.decimal_exponent(-0.00999) as b, market.decimal_exponent(1) as c,
      market.decimal_exponent(0.1) as d, market.decimal_exponent(null) as e`;
  t.deepEqual({ ...edges }, { a: 2, b: -3, c: 0, d: -1, e: null });
  await t.throwsAsync(db.sql`select market.decimal_exponent(0)`, { message: /logarithm of zero/ });
});

test('market.round_significant keeps the digits asked for at any magnitude, and whole numbers whole', async (t) => {
  const rows = await db.sql<{ value: string }[]>`
    select market.round_significant(x, 10)::text as value
    from unnest(array[1.23456789012345, 0.000000000000000000001234567890123, 98765432109876.5, 0, 9.99999999999]::numeric[]) with ordinality u (x, n)
    order by n`;
  t.deepEqual(rows.map((row) => row.value), ['1.23456789', '0.00000000000000000000123456789', '98765432109877', '0', '10']);
});

test('the per-row helpers of the lists are inlined: no function call left in the plan', async (t) => {
  const calls = [
    ['market.decimal_exponent', 'x.n'],
    ['market.round_significant', 'x.n, 10'],
    ['market.ticker_sort_key', "'-volume_usd', x.n, x.f, x.n, x.ts"],
    ['market.coin_sort_key', "'-marketcap', x.n, x.i, x.n, x.n, x.f, x.f"],
    ['market.exchange_sort_key', "'-volume', x.n, x.i, x.f, x.f, x.f, x.i, x.i"],
    ['market.wallet_sort_key', "'released_at', null::api.wallets"],
    ['market.iso_time', 'x.ts'],
    ['market.indicator_window', 'x.d, x.d, null'],
    ['market.on_page', 'x.i::bigint, x.i, 100'],
  ];
  for (const [name, args] of calls) {
    const plan = await db.sql.unsafe(`
      explain (verbose) select ${name}(${args}) from (values (1.5::numeric, 2::int, 0.5::float8, now(), current_date)) x (n, i, f, ts, d)`);
    const text = plan.map((line) => Object.values(line)[0]).join('\n');
    t.false(text.includes(`${name}(`), `${name} is called, not inlined:\n${text}`);
  }
});

test('market.on_page cuts numbered rows to one page; a page below 1 is the first', async (t) => {
  const pages = await db.sql<{ page: number; first: number | null; last: number | null; rows: number }[]>`
    select p.page, min(n)::int as first, max(n)::int as last, count(n)::int as rows
    from unnest(array[0, 1, 2, 3, 4]) p (page)
    left join generate_series(1, 250) n on market.on_page(n, p.page, 100)
    group by p.page order by p.page`;
  t.deepEqual(pages.map((row) => ({ ...row })), [
    { page: 0, first: 1, last: 100, rows: 100 },
    { page: 1, first: 1, last: 100, rows: 100 },
    { page: 2, first: 101, last: 200, rows: 100 },
    { page: 3, first: 201, last: 250, rows: 50 },
    { page: 4, first: null, last: null, rows: 0 },
  ]);
});
