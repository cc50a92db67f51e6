// Who runs TimescaleDB's policy jobs, on either kind of database: the embedded database has no
// scheduler, so the service's cron task runs every due job (a retention policy really drops old
// chunks, and only when due); on a server the scheduler runs them, and the task steps in only for
// a job the scheduler neglects (no success within its interval plus a grace). The decision is
// recorded for /readyz. The probe job is kept from the real scheduler (next start years away) so
// that the chunks it drops are the task's doing on both.
import test from 'ava';
import { quickAddJob, runOnce } from 'graphile-worker';
import { crontab, taskList } from '../../jobs/index.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { onServer } from '../helpers/targets.ts';

let db: TestDatabase;
let probeJob: number;
test.before(async () => {
  db = await testDatabase();
  await db.sql`create table market.retention_probe (time timestamptz not null, value int not null)`;
  await db.sql`select create_hypertable('market.retention_probe', 'time', chunk_time_interval => interval '1 day')`;
  [{ job: probeJob }] = (await db.sql`select add_retention_policy('market.retention_probe', interval '5 days') as job`) as unknown as [{ job: number }];
  await db.sql`select alter_job(${probeJob}, next_start => now() + interval '10 years')`;
  await db.sql`
    insert into market.retention_probe
    select g, 1 from generate_series(now() - interval '20 days', now(), interval '1 hour') g`;
});
test.after.always(() => db?.close());

const chunkCount = async () =>
  (await db.sql`select count(*)::int as n from timescaledb_information.chunks where hypertable_name = 'retention_probe'`)[0]!.n as number;

async function runTask(mode = 'auto') {
  const config = db.config({ TIMESCALEDB_JOB_RUNNER: mode });
  const options = { connectionString: config.database.url, noPreparedStatements: true, taskList: taskList(config) };
  await quickAddJob(options, 'run_timescaledb_jobs', {});
  await runOnce(options);
}

const recorded = async () => (await db.sql`select runner, reason from app.timescaledb_job_runner`)[0];

/** Makes the probe job look neglected: known for two days, its last success (if any) two days old. */
async function neglectProbe() {
  await db.sql`insert into app.timescaledb_jobs_seen (job_id, first_seen_at) values (${probeJob}, now() - interval '2 days')
    on conflict (job_id) do update set first_seen_at = excluded.first_seen_at`;
  await db.sql`update app.timescaledb_job_runs set last_run_at = now() - interval '2 days' where job_id = ${probeJob}`;
  if (onServer) {
    await db.sql`update _timescaledb_internal.bgw_job_stat set last_successful_finish = now() - interval '2 days' where job_id = ${probeJob}`;
  }
}

test.serial('auto: the service is in charge where no scheduler runs, TimescaleDB where its scheduler runs every job', async (t) => {
  const [row] = await db.sql`select app.timescaledb_scheduler_started_at() is not null as scheduler`;
  t.is(row!.scheduler, onServer, onServer ? 'a server runs the TimescaleDB scheduler' : 'the embedded database has none');
  const [decision] = await db.sql`select runner, reason, changed from app.decide_timescaledb_job_runner('auto')`;
  t.true(decision!.changed, 'the first decision is news');
  t.deepEqual(
    await recorded(),
    onServer
      ? { runner: 'timescaledb', reason: 'the TimescaleDB scheduler runs every job on schedule' }
      : { runner: 'service', reason: 'no TimescaleDB scheduler runs on this database' },
  );
  t.false((await db.sql`select changed from app.decide_timescaledb_job_runner('auto')`)[0]!.changed, 'the same decision again is not');
});

test.serial('off and on are obeyed and recorded', async (t) => {
  const decide = async (mode: string) => (await db.sql`select runner, reason from app.decide_timescaledb_job_runner(${mode})`)[0];
  t.deepEqual(await decide('off'), { runner: 'none', reason: 'TIMESCALEDB_JOB_RUNNER=off' });
  t.deepEqual(await recorded(), { runner: 'none', reason: 'TIMESCALEDB_JOB_RUNNER=off' });
  t.deepEqual(await decide('on'), { runner: 'service', reason: 'TIMESCALEDB_JOB_RUNNER=on' });
  const before = await chunkCount();
  await runTask('off');
  t.is(await chunkCount(), before, 'off runs nothing');
});

test.serial('a job without a success within its interval plus the grace is neglected, by either runner', async (t) => {
  const neglected = async () => (await db.sql`select job_id from app.neglected_timescaledb_jobs()`).map((row) => row.job_id as number);
  t.false((await neglected()).includes(probeJob), 'a job just seen is not judged yet');
  await neglectProbe();
  t.true((await neglected()).includes(probeJob));
  const [decision] = await db.sql`select runner, reason from app.decide_timescaledb_job_runner('auto')`;
  t.is(decision!.runner, 'service');
  if (onServer) t.regex(decision!.reason as string, new RegExp(`scheduler runs but jobs .*\\b${probeJob}\\b.* have not succeeded`));
});

test.serial('running the task drops the chunks the retention policy no longer keeps', async (t) => {
  await neglectProbe();
  const before = await chunkCount();
  t.true(before >= 20);
  await runTask();
  const after = await chunkCount();
  t.true(after <= 7, `expected at most 7 chunks, found ${after}`);
  const [oldest] = await db.sql`select min(time) as time from market.retention_probe`;
  t.true(Date.now() - (oldest!.time as Date).getTime() <= 7 * 86_400_000);
  const runs = await db.sql`select job_id from app.timescaledb_job_runs where job_id = ${probeJob} and last_error is null`;
  t.is(runs.length, 1);
  // its success counts: the scheduler is trusted again where it runs
  t.false((await db.sql`select job_id from app.neglected_timescaledb_jobs()`).some((row) => row.job_id === probeJob));
});

test.serial('a job that ran is not run again before its schedule interval has passed', async (t) => {
  await db.sql`
    insert into market.retention_probe
    select g, 2 from generate_series(now() - interval '15 days', now() - interval '10 days', interval '1 hour') g`;
  const refilled = await chunkCount();
  await runTask();
  t.is(await chunkCount(), refilled, 'not due yet: nothing dropped');
  await neglectProbe();
  await runTask();
  t.true((await chunkCount()) < refilled, 'due again: the old chunks are gone');
});

test('the task is on the crontab every minute, on a serial queue of its own', (t) => {
  t.regex(crontab, /^\* \* \* \* \* run_timescaledb_jobs \?max=1&queue=timescaledb_jobs$/m);
});

test.serial('a refresh policy runs as pieces of its window: contiguous, from now - start_offset to now - end_offset, none long', async (t) => {
  await db.sql`delete from app.timescaledb_job_runs`;
  const now = '2026-03-10 13:47:00+00';
  const steps = await db.sql<{ aggregate: string | null; window_start: Date | null; window_end: Date | null; first: boolean; last: boolean }[]>`
    select aggregate, window_start, window_end, first, last from app.due_timescaledb_job_steps(false, ${now}::timestamptz)`;
  const pieces = steps.filter((step) => step.aggregate === 'market.coin_bars_30m');
  const at = (text: string) => new Date(text).getTime();
  t.true(pieces.length >= 6, `${pieces.length} pieces`);
  t.is(pieces[0]!.window_start!.getTime(), at('2026-03-03T13:47:00Z'));
  t.is(pieces.at(-1)!.window_end!.getTime(), at('2026-03-10T13:46:00Z'));
  t.deepEqual(pieces.map((piece) => [piece.first, piece.last]), pieces.map((_, i) => [i === 0, i === pieces.length - 1]));
  for (const [i, piece] of pieces.entries()) {
    if (i > 0) t.is(piece.window_start!.getTime(), pieces[i - 1]!.window_end!.getTime());
    const hours = (piece.window_end!.getTime() - piece.window_start!.getTime()) / 3_600_000;
    t.true(hours >= 12 && hours <= 36, `piece ${i}: ${hours} h`);
    if (i > 0) t.is(piece.window_start!.getUTCHours() + piece.window_start!.getUTCMinutes(), 0, 'inner cuts at midnight, on bucket boundaries');
  }
  // a policy without an end (the liquidations rollup) ends with an open piece
  const open = steps.filter((step) => step.aggregate === 'market.liquidations_1d');
  t.true(open.length >= 1);
  t.is(open.at(-1)!.window_end, null);
  // other jobs are one step each, before the refreshes
  const firstRefresh = steps.findIndex((step) => step.aggregate !== null);
  t.true(firstRefresh > 0 && steps.slice(firstRefresh).every((step) => step.aggregate !== null));
});
