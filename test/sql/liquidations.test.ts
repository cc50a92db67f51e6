// The liquidation feed's lifecycle: raw rows pruned at 48 hours by the retention policy while the
// daily rollup keeps their days, and the 15-minute refresh policy bringing today's row up to date.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
});
test.after.always(() => db?.close());

const insert = (ageHours: number, position: 'long' | 'short', valueUsd: number) => db.sql`
  insert into market.liquidations (time, exchange, symbol, instrument, position, "order", price, quantity, value_usd, source)
  values (now() - ${ageHours} * interval '1 hour', 'okx', 'BTC-USDT-SWAP', 'swap', ${position},
    ${position === 'long' ? 'sell' : 'buy'}, 100, ${valueUsd / 100}, ${valueUsd}, 'simulated-liquidations')`;

const jobId = async (proc: string, table: string) => {
  const [job] = await db.sql`select job_id from timescaledb_information.jobs where proc_name = ${proc} and hypertable_name = ${table}`;
  return job!.job_id as number;
};
const daily = async () =>
  Object.fromEntries((await db.sql`select day, total_usd::float8 as total, longs::int, shorts::int from market.liquidations_1d`).map((r) => [
    (r.day as Date).toISOString().slice(0, 10), { total: r.total, longs: r.longs, shorts: r.shorts },
  ]));

test.serial('policies: raw kept 48 hours in one-hour chunks, the daily rollup refreshed every 15 minutes from 47 hours back', async (t) => {
  const [retention] = await db.sql`
    select (config ->> 'drop_after')::interval = interval '48 hours' as ok from timescaledb_information.jobs
    where proc_name = 'policy_retention' and hypertable_name = 'liquidations'`;
  t.true(retention!.ok);
  const [refresh] = await db.sql`
    select schedule_interval = interval '15 minutes' as every_15, (config ->> 'start_offset')::interval as start_offset, config -> 'end_offset' as end_offset
    from timescaledb_information.jobs where proc_name = 'policy_refresh_continuous_aggregate' and hypertable_name = 'liquidations_1d'`;
  t.true(refresh!.every_15);
  t.true((refresh!.start_offset as string) === '47:00:00', 'the refresh window stays inside the raw retention');
  t.is(refresh!.end_offset, null, "today's partial bucket is refreshed too");
});

test.serial('retention drops raw rows older than 48 hours; their days stay in the daily rollup', async (t) => {
  // old rows, as a backfill writes them: the rollup is refreshed over them before retention runs
  await insert(72, 'long', 1000);
  await insert(72.5, 'short', 250);
  await insert(50, 'long', 400);
  await insert(20, 'short', 600);
  await insert(0.1, 'long', 50);
  await db.sql`call refresh_continuous_aggregate('market.liquidations_1d', null, null)`;
  const before = await daily();
  const expectedTotal = 1000 + 250 + 400 + 600 + 50;
  t.is(Object.values(before).reduce((s, d) => s + d.total, 0), expectedTotal);

  await db.sql`call run_job(${await jobId('policy_retention', 'liquidations')})`;
  const [raw] = await db.sql`
    select count(*) filter (where time < now() - interval '48 hours')::int as old, count(*)::int as total from market.liquidations`;
  t.is(raw!.old, 0, 'nothing older than 48 hours is left');
  t.is(raw!.total, 2, 'the rows of the last 48 hours stay');
  t.deepEqual(await daily(), before, 'the daily rollup keeps every day');

  // the refresh policy later runs over the last 47 hours: the pruned days are not recomputed
  await insert(0.05, 'short', 70);
  await db.sql`call run_job(${await jobId('policy_refresh_continuous_aggregate', 'liquidations_1d')})`;
  const after = await daily();
  const today = new Date().toISOString().slice(0, 10);
  for (const [day, figures] of Object.entries(before)) {
    if (day !== today) t.deepEqual(after[day], figures, day);
  }
  t.is(after[today]!.total, before[today]!.total + 70, "today's row picks up the new liquidation");
  t.is(after[today]!.shorts, before[today]!.shorts + 1);
});

test.serial('the service runs the due policies itself on a database without a TimescaleDB scheduler', async (t) => {
  await insert(49.5, 'long', 5);
  await db.sql`call refresh_continuous_aggregate('market.liquidations_1d', null, null)`;
  await db.sql`delete from app.timescaledb_job_runs`;
  await db.sql`call app.run_due_timescaledb_jobs()`;
  const [raw] = await db.sql`select count(*)::int as old from market.liquidations where time < now() - interval '48 hours'`;
  t.is(raw!.old, 0);
  const [day] = await db.sql`select count(*)::int as n from market.liquidations_1d where day <= now() - interval '49 hours'`;
  t.true(day!.n >= 1);
});
