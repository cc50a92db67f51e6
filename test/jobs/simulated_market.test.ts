// The simulated demo market: its catalogue and edge cases, deterministic prices, the bands of the
// backfill, the tick that appends bars through the same path as live data, and its labelling.
import test from 'ava';
import { makeWorkerUtils, quickAddJob, runOnce } from 'graphile-worker';
import { crontab, onWorkerStart, taskList } from '../../jobs/index.ts';
import { ensureCatalogue, readCatalogue, tick } from '../../src/sources/simulated/index.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { withQuery } from '../helpers/query.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
  await withQuery(db, (query) => ensureCatalogue(query));
});
test.after.always(() => db?.close());

const bars = (from: string, to: string, now = 'now()') =>
  db.sql.unsafe(`select * from market.simulated_bars(${from}, ${to}, ${now}) order by coin_id, time`).then((rows) => [...rows]);

test('the catalogue has at least 50 real coins with every edge case of the spec', async (t) => {
  const catalogue = readCatalogue();
  t.true(catalogue.coins.length >= 50);
  const [row] = await db.sql`
    select count(*)::int as coins,
      count(*) filter (where circulating_supply is null and status = 'active')::int as without_circulating,
      count(*) filter (where total_supply is null and max_supply is null and status = 'active')::int as without_total_and_max,
      count(*) filter (where status = 'delisted')::int as delisted,
      count(*) filter (where status = 'preparing')::int as preparing,
      count(distinct status)::int as statuses,
      count(*) filter (where type = 'token')::int as tokens,
      (select count(*) from (select upper(symbol) from market.coins group by 1 having count(*) > 1) s)::int as shared_symbols,
      (select count(distinct coin_id) from market.coin_contracts)::int as with_contracts,
      (select count(distinct coin_id) from market.coin_descriptions where locale <> 'en')::int as second_locale,
      (select count(*) from market.coins c where not exists (select from market.coin_descriptions d where d.coin_id = c.id and d.locale = 'en'))::int as without_english,
      (select count(distinct coin_id) from market.coin_links)::int as with_links
    from market.coins`;
  t.is(row!.coins, catalogue.coins.length);
  t.true(row!.without_circulating >= 2);
  t.true(row!.without_total_and_max >= 2);
  t.true(row!.delisted >= 1);
  t.true(row!.preparing >= 1);
  t.is(row!.statuses, 6, 'every listing status has an example');
  t.true(row!.tokens >= 10);
  t.true(row!.shared_symbols >= 1);
  t.true(row!.with_contracts >= 10);
  t.true(row!.second_locale >= 3);
  t.is(row!.without_english, 0);
  t.true(row!.with_links >= 20);
});

test('descriptions come in the requested locale, else its language, else English', async (t) => {
  const description = async (slug: string, locale: string) =>
    (await db.sql`select d.locale from market.coins c, market.coin_description(c.id, ${locale}) d where c.slug = ${slug}`)[0]?.locale;
  t.is(await description('bitcoin', 'de'), 'de');
  t.is(await description('bitcoin', 'de-AT'), 'de');
  t.is(await description('bitcoin', 'fr'), 'en');
  t.is(await description('dogecoin', 'pt-BR'), 'pt-BR');
  t.is(await description('xrp', 'fr'), 'fr');
});

test('the data is labelled as a demo source', async (t) => {
  const [source] = await db.sql`select kind, demo, description from market.data_sources where name = 'simulated'`;
  t.is(source!.kind, 'simulated');
  t.true(source!.demo);
  t.regex(source!.description as string, /demo/i);
  const [owned] = await db.sql`select count(*)::int as n from market.coins where source <> 'simulated'`;
  t.is(owned!.n, 0);
});

test('prices are a pure function of seed, coin and time: the same window twice, and overlapping windows, agree', async (t) => {
  // one instant for every call: a minute boundary between two calls must not shift the window
  const [{ at }] = (await db.sql`select date_trunc('minute', now())::text as at`) as [{ at: string }];
  const now = `'${at}'::timestamptz`;
  const first = await bars(`${now} - interval '2 hours'`, `${now} - interval '1 hour'`);
  t.true(first.length > 50 * 59);
  t.deepEqual(await bars(`${now} - interval '2 hours'`, `${now} - interval '1 hour'`), first);
  // a window shifted by half an hour holds the same bars where they overlap
  const shifted = await bars(`${now} - interval '90 minutes'`, `${now} - interval '30 minutes'`);
  const key = (bar: Record<string, unknown>) => `${bar.coin_id}/${(bar.time as Date).toISOString()}`;
  const earlier = new Map(first.map((bar) => [key(bar), bar]));
  const overlap = shifted.filter((bar) => earlier.has(key(bar)));
  t.true(overlap.length > 50 * 25);
  for (const bar of overlap) t.deepEqual(bar, earlier.get(key(bar)));
});

test('a bar closes where the next one opens, and high and low bound open and close', async (t) => {
  const rows = await bars(`now() - interval '1 hour'`, `now()`);
  let checked = 0;
  for (let i = 1; i < rows.length; i++) {
    const [a, b] = [rows[i - 1]!, rows[i]!];
    if (a.coin_id === b.coin_id) {
      t.is(b.open, a.close);
      checked++;
    }
  }
  t.true(checked > 50 * 50);
  const [bounds] = await db.sql`
    select count(*) filter (where not (low <= least(open, close) and high >= greatest(open, close) and low > 0))::int as bad
    from market.simulated_bars(now() - interval '1 day', now() - interval '20 hours')`;
  t.is(bounds!.bad, 0);
});

test.serial('another seed makes another market', async (t) => {
  const first = await bars(`now() - interval '10 minutes'`, `now()`);
  await db.sql`update market.data_sources set settings = settings || '{"seed": 7}' where name = 'simulated'`;
  try {
    const other = await bars(`now() - interval '10 minutes'`, `now()`);
    t.is(other.length, first.length);
    t.notDeepEqual(other.map((bar) => bar.close), first.map((bar) => bar.close));
  } finally {
    await db.sql`update market.data_sources set settings = settings || jsonb_build_object('seed', ${readCatalogue().seed}::bigint) where name = 'simulated'`;
  }
});

test('history is daily beyond 6 months, hourly beyond 3 months, half-hourly beyond 8 days, then by the minute', async (t) => {
  const rows = await db.sql`
    select width, min(time) as first, max(time) as last, count(*)::int as n
    from market.simulated_bar_grid(now() - interval '2 years 7 days', now()) group by width order by width desc`;
  t.deepEqual(rows.map((row) => row.width), ['1 day', '01:00:00', '00:30:00', '00:01:00']);
  const day = 86_400_000;
  t.true(Date.now() - (rows[0]!.first as Date).getTime() >= 730 * day, 'at least two years of daily history');
  t.true(Date.now() - (rows[3]!.first as Date).getTime() >= 8 * day, 'at least eight days of minute bars');
  // the bands tile the window: each starts where the previous one ends
  const [gaps] = await db.sql`
    select count(*)::int as n from (
      select time, width, lead(time) over (order by time) as next
      from market.simulated_bar_grid(now() - interval '2 years 7 days', now())) g
    where next is not null and next <> time + width`;
  t.is(gaps!.n, 0);
});

test('coins trade only while listed: none before listing, none after delisting', async (t) => {
  const rows = await db.sql`
    select c.slug, c.status, count(b.time)::int as n, max(b.time) as last, c.status_updated_at
    from market.coins c
    left join market.simulated_bars(now() - interval '402 days', now() - interval '399 days') b on b.coin_id = c.id
    where c.slug in ('megaeth', 'ftx-token', 'plasma', 'bitcoin')
    group by c.slug, c.status, c.status_updated_at order by c.slug`;
  const bySlug = Object.fromEntries(rows.map((row) => [row.slug, row]));
  t.is(bySlug.megaeth!.n, 0, 'preparing: no market yet');
  t.is(bySlug.plasma!.n, 0, 'listed a day ago: no bars 400 days back');
  t.true(bySlug.bitcoin!.n >= 2, 'daily bars that far back');
  t.is(bySlug['ftx-token']!.n, bySlug.bitcoin!.n, 'delisted 200 days ago: it still traded 400 days ago');
  const [after] = await db.sql`
    select count(*)::int as n from market.simulated_bars(now() - interval '2 hours', now())
    where coin_id = (select id from market.coins where slug = 'ftx-token')`;
  t.is(after!.n, 0, 'no bars after the delisting');
});

test.serial('a tick appends the bars since the last one through the bar table and refreshes the state; repeating it adds nothing', async (t) => {
  // a short history keeps the test fast; the first tick is the backfill
  await db.sql`
    update market.data_sources set covered_until = date_trunc('minute', now()) - interval '90 minutes'
    where name = 'simulated'`;
  const first = await withQuery(db, (query) => tick(query));
  t.true(first.bars >= 60 * 85, `${first.bars} bars`);
  t.is(first.refreshCalls > 0, true, 'a 90-minute catch-up refreshes the aggregates itself');
  const [state] = await db.sql`
    select count(*) filter (where s.price is not null)::int as priced, count(*) filter (where s.rank is not null)::int as ranked
    from market.coin_state s`;
  t.true(state!.priced >= 55);
  t.true(state!.ranked >= 50);
  const [pending] = await db.sql`select count(*)::int as n from app.coin_bar_backfills`;
  t.is(pending!.n, 0);
  const [retention] = await db.sql`
    select bool_and(scheduled) as on from timescaledb_information.jobs where proc_name = 'policy_retention' and hypertable_schema = 'market' and hypertable_name like 'coin_bars%'`;
  t.true(retention!.on, 'retention runs again once the backfill is refreshed');
  const again = await withQuery(db, (query) => tick(query));
  t.true(again.bars <= 60 * 2, 'at most the minute that passed meanwhile');
});

test.serial('old bars are kept from retention until the aggregates have them', async (t) => {
  await db.sql`select app.begin_coin_bar_backfill('test', now() - interval '30 days', now() - interval '29 days')`;
  const [paused] = await db.sql`
    select bool_or(scheduled) as on from timescaledb_information.jobs where proc_name = 'policy_retention' and hypertable_schema = 'market' and hypertable_name like 'coin_bars%'`;
  t.false(paused!.on);
  const [due] = await db.sql`select count(*)::int as n from app.due_timescaledb_jobs() where proc_name = 'policy_retention' and hypertable_name like 'coin_bars%'`;
  t.is(due!.n, 0, 'paused jobs are never due');
  await withQuery(db, (query) => tick(query));
  const [resumed] = await db.sql`
    select bool_and(scheduled) as on from timescaledb_information.jobs where proc_name = 'policy_retention' and hypertable_schema = 'market' and hypertable_name like 'coin_bars%'`;
  t.true(resumed!.on);
});

test.serial('the worker task runs a tick; it is on the crontab every minute in its own queue', async (t) => {
  const [before] = await db.sql`select covered_until from market.data_sources where name = 'simulated'`;
  await db.sql`update market.data_sources set covered_until = covered_until - interval '5 minutes' where name = 'simulated'`;
  const config = db.config({ MARKET_SOURCE: 'simulated' });
  const options = { connectionString: config.database.url, noPreparedStatements: true, taskList: taskList(config) };
  await quickAddJob(options, 'simulate_market', {}, { queueName: 'market' });
  await runOnce(options);
  const [after] = await db.sql`select covered_until from market.data_sources where name = 'simulated'`;
  t.true((after!.covered_until as Date) >= (before!.covered_until as Date), 'the tick caught up the five minutes');
  const [failed] = await db.sql`select count(*)::int as n from graphile_worker.jobs where last_error is not null`;
  t.is(failed!.n, 0);
  t.regex(crontab, /^\* \* \* \* \* simulate_market \?.*queue=market/m);
});

test.serial('MARKET_SOURCE=none turns the demo market off', async (t) => {
  const [before] = await db.sql`select covered_until from market.data_sources where name = 'simulated'`;
  await db.sql`update market.data_sources set covered_until = covered_until - interval '5 minutes' where name = 'simulated'`;
  const config = db.config({ MARKET_SOURCE: 'none' });
  const options = { connectionString: config.database.url, noPreparedStatements: true, taskList: taskList(config) };
  await quickAddJob(options, 'simulate_market', {});
  await runOnce(options);
  const [after] = await db.sql`select covered_until from market.data_sources where name = 'simulated'`;
  t.true((after!.covered_until as Date) < (before!.covered_until as Date));
});

test.serial('a starting worker queues the demo venues, the market\'s present, the tickers on it, its last day, the tickers again, the history, then the sentiment readings, in the same serial queue', async (t) => {
  const config = db.config({ MARKET_SOURCE: 'simulated' });
  const utils = await makeWorkerUtils({ connectionString: config.database.url, noPreparedStatements: true });
  try {
    await onWorkerStart(utils, config);
    await onWorkerStart(utils, config); // a second start replaces the queued jobs (job keys), never doubles them
    const jobs = await db.sql`
      select id, task_identifier as task, queue_name as queue from graphile_worker.jobs where key like '%:start' order by id`;
    const payload = async (key: string) => (await db.sql`select payload from graphile_worker._private_jobs where key = ${key}`)[0]!.payload;
    t.deepEqual(jobs.map(({ task, queue }) => ({ task, queue })), [
      // the venues first (a few seconds, no history): they answer from the first minute (test/jobs/first_minute.test.ts)
      { task: 'simulate_exchanges', queue: 'market' },
      // the present first (test/jobs/present_first.test.ts), the history behind it
      { task: 'simulate_market', queue: 'market' }, { task: 'simulate_exchanges', queue: 'market' },
      { task: 'simulate_market', queue: 'market' }, { task: 'simulate_exchanges', queue: 'market' },
      { task: 'simulate_market', queue: 'market' }, { task: 'refresh_sentiment', queue: 'market' },
    ]);
    t.deepEqual(await payload('simulate_exchanges:start'), { venuesOnly: true });
    t.deepEqual(await payload('simulate_market:present:start'), { history: 'none' });
    t.deepEqual(await payload('simulate_market:day:start'), { history: 'day' });
    t.deepEqual(await payload('simulate_exchanges:present:start'), { presentOnly: true });
    t.deepEqual(await payload('simulate_market:start'), {});
    await utils.completeJobs(jobs.map((job) => job.id as string));
  } finally {
    await utils.release();
  }
});
