// The cron task that stands in for TimescaleDB's scheduler: a retention policy really drops
// old chunks on the embedded database when the task runs, and only when the job is due.
import test from 'ava';
import { quickAddJob, runOnce } from 'graphile-worker';
import { crontab, taskList } from '../../jobs/index.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
  await db.sql`create table market.retention_probe (time timestamptz not null, value int not null)`;
  await db.sql`select create_hypertable('market.retention_probe', 'time', chunk_time_interval => interval '1 day')`;
  await db.sql`
    insert into market.retention_probe
    select g, 1 from generate_series(now() - interval '20 days', now(), interval '1 hour') g`;
  await db.sql`select add_retention_policy('market.retention_probe', interval '5 days')`;
});
test.after.always(() => db?.close());

const chunkCount = async () =>
  (await db.sql`select count(*)::int as n from timescaledb_information.chunks where hypertable_name = 'retention_probe'`)[0]!.n as number;

async function runTask() {
  const config = db.config();
  const options = { connectionString: config.database.url, noPreparedStatements: true, taskList: taskList(config) };
  await quickAddJob(options, 'run_timescaledb_jobs', {});
  await runOnce(options);
}

test.serial('the embedded database has no TimescaleDB scheduler', async (t) => {
  const [row] = await db.sql`select app.timescaledb_scheduler_running() as running`;
  t.false(row!.running);
});

test.serial('running the task drops the chunks the retention policy no longer keeps', async (t) => {
  const before = await chunkCount();
  t.true(before >= 20);
  await runTask();
  const after = await chunkCount();
  t.true(after <= 7, `expected at most 7 chunks, found ${after}`);
  const [oldest] = await db.sql`select min(time) as time from market.retention_probe`;
  t.true(Date.now() - (oldest!.time as Date).getTime() <= 7 * 86_400_000);
  const runs = await db.sql`
    select r.job_id from app.timescaledb_job_runs r
    join timescaledb_information.jobs j using (job_id)
    where j.hypertable_name = 'retention_probe' and r.last_error is null`;
  t.is(runs.length, 1);
});

test.serial('a job that ran is not run again before its schedule interval has passed', async (t) => {
  await db.sql`
    insert into market.retention_probe
    select g, 2 from generate_series(now() - interval '15 days', now() - interval '10 days', interval '1 hour') g`;
  const refilled = await chunkCount();
  await runTask();
  t.is(await chunkCount(), refilled, 'not due yet: nothing dropped');
  await db.sql`update app.timescaledb_job_runs set last_run_at = now() - interval '2 days'`;
  await runTask();
  t.true((await chunkCount()) < refilled, 'due again: the old chunks are gone');
});

test('the task is on the crontab every minute', (t) => {
  t.regex(crontab, /^\* \* \* \* \* run_timescaledb_jobs\b/m);
});
