// The hierarchical continuous aggregates of market.coin_bars_1m: OHLC consistency at every level,
// wide bars rolled up by their start, the refresh policies run by app.run_due_timescaledb_jobs (the
// embedded database's runner, and a server's when its scheduler neglects a job), and retention that
// drops raw rows without erasing aggregated history. On a server, TimescaleDB's own scheduler is kept
// off these jobs (their next start years away), so what the tests see is the procedure's doing.
import test from 'ava';
import { refreshCoinAggregates } from '../../src/sources/aggregates.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { withQuery } from '../helpers/query.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
  await db.sql`
    select alter_job(job_id, next_start => now() + interval '10 years') from timescaledb_information.jobs
    where hypertable_schema = 'market' and hypertable_name like 'coin_bars%'`;
  await db.sql`insert into market.data_sources (name, kind, description) values ('test', 'import', 'test bars')`;
  await db.sql`
    insert into market.coins (id, slug, symbol, name, type, source) values
      (101, 'minute-coin', 'MIN', 'Minute Coin', 'coin', 'test'),
      (102, 'wide-coin', 'WIDE', 'Wide Coin', 'coin', 'test'),
      (103, 'policy-coin', 'POL', 'Policy Coin', 'coin', 'test')`;
});
test.after.always(() => db?.close());

// Pseudo-random but reproducible one-minute bars: the prices are a walk built from hashes.
async function insertMinuteBars(coinId: number, from: string, to: string) {
  await db.sql`
    insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume, marketcap)
    select t, ${coinId}, o, greatest(o, c) + 0.5, least(o, c) - 0.25, c, v, c * 1000
    from (
      select t,
        round((100 + (hashint8extended(extract(epoch from t)::bigint, ${coinId}) % 1000) / 100.0)::numeric, 4) as o,
        round((100 + (hashint8extended(extract(epoch from t)::bigint + 60, ${coinId}) % 1000) / 100.0)::numeric, 4) as c,
        abs(hashint8extended(extract(epoch from t)::bigint, 7) % 100000) / 100.0 as v
      from generate_series(${from}::timestamptz, ${to}::timestamptz - interval '1 minute', interval '1 minute') t
    ) s`;
}

const refresh = (from: string, to: string) => withQuery(db, (query) => refreshCoinAggregates(query, from, to));

// Rolls a finer series up into buckets in SQL the plain way, to compare with an aggregate.
const rollupMismatches = (source: string, target: string, width: string, coinId: number) =>
  db.sql.unsafe(`
    with expected as (
      select time_bucket('${width}', time) as bucket,
        (array_agg(open order by time))[1] as open, max(high) as high, min(low) as low,
        (array_agg(close order by time desc))[1] as close, sum(volume) as volume,
        (array_agg(marketcap order by time desc))[1] as marketcap
      from ${source} where coin_id = ${coinId} group by 1
    )
    select e.bucket, e.open, a.open as got_open, e.high, a.high as got_high, e.low, a.low as got_low,
      e.close, a.close as got_close, e.volume, a.volume as got_volume
    from expected e full join (select * from ${target} where coin_id = ${coinId}) a on a.time = e.bucket
    where (e.open, e.high, e.low, e.close, e.volume, e.marketcap) is distinct from (a.open, a.high, a.low, a.close, a.volume, a.marketcap)`)
    .then((rows) => [...rows]);

test.serial('each level is the OHLCV rollup of the level below: open first, high max, low min, close last, volume sum', async (t) => {
  const [{ from, to }] = (await db.sql`
    select (date_trunc('day', now()) - interval '3 days')::text as from, (date_trunc('day', now()) - interval '1 day')::text as to`) as [
    { from: string; to: string },
  ];
  await insertMinuteBars(101, from, to);
  await refresh(from, to);
  const [counts] = await db.sql`
    select (select count(*) from market.coin_bars_30m where coin_id = 101)::int as m30,
      (select count(*) from market.coin_bars_1h where coin_id = 101)::int as h1,
      (select count(*) from market.coin_bars_1d where coin_id = 101)::int as d1`;
  t.deepEqual(counts, { m30: 96, h1: 48, d1: 2 });
  t.deepEqual(await rollupMismatches('market.coin_bars_1m', 'market.coin_bars_30m', '30 minutes', 101), []);
  t.deepEqual(await rollupMismatches('market.coin_bars_30m', 'market.coin_bars_1h', '1 hour', 101), []);
  t.deepEqual(await rollupMismatches('market.coin_bars_1h', 'market.coin_bars_1d', '1 day', 101), []);
  // and straight from the raw bars to the day, for good measure
  t.deepEqual(await rollupMismatches('market.coin_bars_1m', 'market.coin_bars_1d', '1 day', 101), []);
  const [day] = await db.sql`
    select d.open = (select open from market.coin_bars_1h h where h.coin_id = 101 and h.time = d.time) as open_is_first_hour,
      d.close = (select close from market.coin_bars_1h h where h.coin_id = 101 and h.time = d.time + interval '23 hours') as close_is_last_hour
    from market.coin_bars_1d d where d.coin_id = 101 order by d.time limit 1`;
  t.deepEqual(day, { open_is_first_hour: true, close_is_last_hour: true });
});

test.serial('bars wider than a minute are stored at their start and rolled up into the day they start in', async (t) => {
  // daily bars a year ago, hourly bars four months ago
  const [{ daily, hourly }] = (await db.sql`
    select (date_trunc('day', now()) - interval '365 days')::text as daily, (date_trunc('day', now()) - interval '120 days')::text as hourly`) as [
    { daily: string; hourly: string },
  ];
  await db.sql`
    insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
    select ${daily}::timestamptz + d * interval '1 day', 102, 10 + d, 12 + d, 9 + d, 11 + d, 1000 * (d + 1)
    from generate_series(0, 4) d`;
  await db.sql`
    insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
    select ${hourly}::timestamptz + h * interval '1 hour', 102, 50 + h, 60 + h, 40 + h, 51 + h, 10
    from generate_series(0, 23) h`;
  await refresh(daily, new Date(Date.now() - 100 * 86_400_000).toISOString());
  const days = await db.sql`select time, open, high, low, close, volume from market.coin_bars_1d where coin_id = 102 order by time`;
  t.is(days.length, 6);
  t.deepEqual(days.slice(0, 5).map((d) => [d.open, d.high, d.low, d.close, d.volume]), [0, 1, 2, 3, 4].map((d) => [
    String(10 + d), String(12 + d), String(9 + d), String(11 + d), String(1000 * (d + 1)),
  ]));
  t.deepEqual([days[5]!.open, days[5]!.high, days[5]!.low, days[5]!.close, days[5]!.volume], ['50', '83', '40', '74', '240']);
  t.deepEqual(await rollupMismatches('market.coin_bars_1m', 'market.coin_bars_1d', '1 day', 102), []);
});

test.serial('dropping the raw chunks (retention) leaves the 30m, 1h and 1d rows as they were', async (t) => {
  // ten days ago: older than the raw retention, inside the 30m retention
  const [{ from, to }] = (await db.sql`
    select (date_trunc('day', now()) - interval '12 days')::text as from, (date_trunc('day', now()) - interval '10 days')::text as to`) as [
    { from: string; to: string },
  ];
  await insertMinuteBars(103, from, to);
  await refresh(from, to);
  const snapshot = () =>
    db.sql`
      select 'm30' as level, time, open, high, low, close, volume from market.coin_bars_30m where coin_id = 103
      union all select 'h1', time, open, high, low, close, volume from market.coin_bars_1h where coin_id = 103
      union all select 'd1', time, open, high, low, close, volume from market.coin_bars_1d where coin_id = 103
      order by 1, 2`;
  const before = [...(await snapshot())];
  t.is(before.length, 96 + 48 + 2);

  // every job due now: retention of raw bars and of the aggregates, and the refresh policies
  await db.sql`delete from app.timescaledb_job_runs`;
  await db.sql`call app.run_due_timescaledb_jobs()`;
  const [raw] = await db.sql`select count(*)::int as n from market.coin_bars_1m where coin_id = 103`;
  t.is(raw!.n, 0, 'the raw bars are gone');
  t.deepEqual([...(await snapshot())], before);

  // a later insert elsewhere invalidates a recent window; the policies refresh only that
  await db.sql`update app.timescaledb_job_runs set last_run_at = now() - interval '1 day'`;
  await db.sql`call app.run_due_timescaledb_jobs()`;
  t.deepEqual([...(await snapshot())], before);
});

test.serial('refresh policies run through app.run_due_timescaledb_jobs, refreshing each level in order', async (t) => {
  const [{ from, to }] = (await db.sql`
    select (date_trunc('hour', now()) - interval '6 hours')::text as from, (date_trunc('hour', now()) - interval '2 hours')::text as to`) as [
    { from: string; to: string },
  ];
  await insertMinuteBars(101, from, to);
  const materialized = async (view: string) => {
    const [row] = await db.sql`
      select format('%I.%I', materialization_hypertable_schema, materialization_hypertable_name) as name
      from timescaledb_information.continuous_aggregates where view_name = ${view}`;
    const [count] = await db.sql.unsafe(`select count(*)::int as n from ${row!.name} where coin_id = 101 and time >= $1 and time < $2`, [from, to]);
    return count!.n as number;
  };
  t.is(await materialized('coin_bars_30m'), 0);
  await db.sql`delete from app.timescaledb_job_runs`;
  await db.sql`call app.run_due_timescaledb_jobs()`;
  const runs = await db.sql`
    select j.hypertable_name as view, r.last_error
    from app.timescaledb_job_runs r join timescaledb_information.jobs j using (job_id)
    where j.proc_name = 'policy_refresh_continuous_aggregate' and j.hypertable_name like 'coin_bars%' order by j.job_id`;
  t.deepEqual([...runs], [
    { view: 'coin_bars_30m', last_error: null },
    { view: 'coin_bars_1h', last_error: null },
    { view: 'coin_bars_1d', last_error: null },
  ]);
  t.is(await materialized('coin_bars_30m'), 8);
  t.is(await materialized('coin_bars_1h'), 4);
  t.deepEqual(await rollupMismatches('market.coin_bars_1m', 'market.coin_bars_30m', '30 minutes', 101), []);
});

test.serial('real-time aggregation: bars not yet materialized show in every level at once', async (t) => {
  await db.sql`
    insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
    values (date_trunc('minute', now()) - interval '1 minute', 103, 5, 7, 4, 6, 3)`;
  const [row] = await db.sql`
    select (select close from market.coin_bars_30m where coin_id = 103 order by time desc limit 1) as m30,
      (select close from market.coin_bars_1h where coin_id = 103 order by time desc limit 1) as h1,
      (select close from market.coin_bars_1d where coin_id = 103 order by time desc limit 1) as d1`;
  t.deepEqual(row, { m30: '6', h1: '6', d1: '6' });
});

test('every refresh policy looks back less far than its source keeps data', async (t) => {
  const rows = await db.sql`
    select j.hypertable_name as view, (j.config ->> 'start_offset')::interval as start_offset,
      (select (r.config ->> 'drop_after')::interval from timescaledb_information.jobs r
        where r.proc_name = 'policy_retention' and r.hypertable_name = source.name) as source_retention,
      (select (r.config ->> 'drop_after')::interval from timescaledb_information.jobs r
        where r.proc_name = 'policy_retention' and r.hypertable_name = j.hypertable_name) as own_retention
    from timescaledb_information.jobs j
    join (values ('coin_bars_30m', 'coin_bars_1m'), ('coin_bars_1h', 'coin_bars_30m'), ('coin_bars_1d', 'coin_bars_1h'),
      ('exchange_volumes_1h', 'exchange_volumes'), ('exchange_volumes_1d', 'exchange_volumes_1h'),
      ('liquidations_1d', 'liquidations')) as source (view, name) on source.view = j.hypertable_name
    where j.proc_name = 'policy_refresh_continuous_aggregate' and j.hypertable_schema = 'market'
    order by j.job_id`;
  const [all] = await db.sql`
    select count(*)::int as n from timescaledb_information.jobs
    where proc_name = 'policy_refresh_continuous_aggregate' and hypertable_schema = 'market'`;
  t.is(rows.length, all!.n, 'every refresh policy has its source listed here');
  t.is(rows.length, 6);
  for (const row of rows) {
    // a source kept forever (no retention) bounds nothing; 'infinity' intervals need PostgreSQL 17
    const [check] = await db.sql`select ${row.source_retention}::interval is null or ${row.start_offset}::interval < ${row.source_retention}::interval as ok`;
    t.true(check!.ok, `${row.view}: start_offset ${row.start_offset} must be shorter than the source retention ${row.source_retention}`);
  }
  t.deepEqual(rows.map((row) => [row.view, row.own_retention]), [
    ['coin_bars_30m', '3 mons'], ['coin_bars_1h', '6 mons'], ['coin_bars_1d', null],
    ['exchange_volumes_1h', '6 mons'], ['exchange_volumes_1d', null], ['liquidations_1d', null],
  ]);
});
