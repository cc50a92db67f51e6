// `make topology` keeps a ledger in its throwaway database: triggers record every job graphile-worker
// queues and every time one is locked (a run starting), every step of the demo market's coverage,
// every backfill window of old bars and every TimescaleDB job run by the service. The checks count
// from it whether anything ran twice or not at all, independently of the processes under test.
import type { Sql } from '../../src/db/client.ts';

/** The tasks the crontab (jobs/index.ts) queues every minute. */
export const EVERY_MINUTE = ['run_timescaledb_jobs', 'simulate_market', 'simulate_exchanges', 'simulate_liquidations'];

export async function installLedger(sql: Sql): Promise<void> {
  await sql.unsafe(`
    create schema if not exists topology;
    comment on schema topology is 'make topology only (a throwaway database): what the job workers did, recorded by triggers.';

    create table topology.job_events (
      at timestamptz not null default clock_timestamp(),
      kind text not null check (kind in ('added', 'locked')),
      job_id bigint not null,
      task text not null,
      queue text,
      cron_ts timestamptz,
      job_key text,
      attempts int not null,
      locked_by text
    );
    comment on table topology.job_events is 'Each graphile-worker job added, and each time a worker locked one (a run starting; attempts counts the runs).';
    create function topology.record_job() returns trigger language plpgsql as $$
    begin
      insert into topology.job_events (kind, job_id, task, queue, cron_ts, job_key, attempts, locked_by)
      select case tg_op when 'INSERT' then 'added' else 'locked' end, new.id, t.identifier,
        (select q.queue_name from graphile_worker._private_job_queues q where q.id = new.job_queue_id),
        (new.payload::jsonb -> '_cron' ->> 'ts')::timestamptz, new.key, new.attempts, new.locked_by
      from graphile_worker._private_tasks t where t.id = new.task_id;
      return null;
    end $$;
    create trigger topology_job_added after insert on graphile_worker._private_jobs
      for each row execute function topology.record_job();
    create trigger topology_job_locked after update of locked_by on graphile_worker._private_jobs
      for each row when (old.locked_by is null and new.locked_by is not null) execute function topology.record_job();

    create table topology.coverage (
      at timestamptz not null default clock_timestamp(),
      covered_from timestamptz,
      covered_until timestamptz not null,
      backend int not null default pg_backend_pid()
    );
    comment on table topology.coverage is 'Each advance of the simulated source''s covered_until: one row per market piece written.';
    create function topology.record_coverage() returns trigger language plpgsql as $$
    begin
      insert into topology.coverage (covered_from, covered_until) values (old.covered_until, new.covered_until);
      return null;
    end $$;
    create trigger topology_coverage after update of covered_until on market.data_sources
      for each row when (new.name = 'simulated' and old.covered_until is distinct from new.covered_until)
      execute function topology.record_coverage();

    create table topology.backfills (
      at timestamptz not null default clock_timestamp(),
      op text not null,
      id bigint not null,
      window_start timestamptz not null,
      window_end timestamptz not null
    );
    comment on table topology.backfills is 'Each backfill window of old bars recorded (INSERT) and closed after its aggregate refresh (DELETE).';
    create function topology.record_backfill() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into topology.backfills (op, id, window_start, window_end) values (tg_op, new.id, new.window_start, new.window_end);
      else
        insert into topology.backfills (op, id, window_start, window_end) values (tg_op, old.id, old.window_start, old.window_end);
      end if;
      return null;
    end $$;
    create trigger topology_backfills after insert or delete on app.coin_bar_backfills
      for each row execute function topology.record_backfill();

    create table topology.timescaledb_runs (
      at timestamptz not null default clock_timestamp(),
      job_id int not null,
      last_run_at timestamptz not null,
      last_error text
    );
    comment on table topology.timescaledb_runs is 'Each write of app.timescaledb_job_runs: a TimescaleDB job run by the service (one run = one last_run_at).';
    create function topology.record_timescaledb_run() returns trigger language plpgsql as $$
    begin
      insert into topology.timescaledb_runs (job_id, last_run_at, last_error) values (new.job_id, new.last_run_at, new.last_error);
      return null;
    end $$;
    create trigger topology_timescaledb_runs after insert or update on app.timescaledb_job_runs
      for each row execute function topology.record_timescaledb_run();
  `).simple();
}

export interface CronFigures {
  task: string;
  minutes: number;
  jobs: number;
  /** minutes with more than one job queued */
  duplicated: number;
  /** minutes between the task's first and last with no job queued (every-minute tasks) */
  missing: number;
  /** runs started (locks) of its cron jobs */
  runs: number;
  /** cron jobs locked more than once */
  rerun: number;
  /** cron jobs never locked */
  unrun: number;
  /** unrun jobs queued before `before` (they had time to run) */
  overdue: number;
}

/** Per cron task: the minutes it was queued for, duplicates, gaps, and how often its jobs were locked. */
export async function cronFigures(sql: Sql, before: Date): Promise<CronFigures[]> {
  return sql<CronFigures[]>`
    with added as (
      select job_id, task, cron_ts from topology.job_events where kind = 'added' and cron_ts is not null
    ),
    locks as (
      select job_id, count(*)::int as locks from topology.job_events where kind = 'locked' group by job_id
    ),
    per_minute as (
      select task, cron_ts, count(*)::int as jobs from added group by task, cron_ts
    ),
    span as (
      select task, min(cron_ts) as first, max(cron_ts) as last from added group by task
    )
    select s.task,
      (select count(*) from per_minute m where m.task = s.task)::int as minutes,
      (select count(*) from added a where a.task = s.task)::int as jobs,
      (select count(*) from per_minute m where m.task = s.task and m.jobs > 1)::int as duplicated,
      case when s.task = any (${EVERY_MINUTE}::text[]) then
        (select count(*) from generate_series(s.first, s.last, interval '1 minute') g (minute)
         where not exists (select 1 from per_minute m where m.task = s.task and m.cron_ts = g.minute))::int
      else 0 end as missing,
      coalesce((select sum(l.locks) from added a join locks l using (job_id) where a.task = s.task), 0)::int as runs,
      (select count(*) from added a join locks l using (job_id) where a.task = s.task and l.locks > 1)::int as rerun,
      (select count(*) from added a where a.task = s.task and not exists (select 1 from locks l where l.job_id = a.job_id))::int as unrun,
      (select count(*) from added a where a.task = s.task and a.cron_ts < ${before}
         and not exists (select 1 from locks l where l.job_id = a.job_id))::int as overdue
    from span s
    order by s.task`;
}

export interface RunRow {
  job_id: string;
  task: string;
  attempts: number;
  locked_by: string;
  /** host:pid of the worker process whose pool holds that id (app.worker_heartbeats) */
  process: string | null;
}

/** Every run started (job locked), with the process that ran it. */
export async function runRows(sql: Sql): Promise<RunRow[]> {
  return sql<RunRow[]>`
    select e.job_id::text, e.task, e.attempts, e.locked_by, h.process
    from topology.job_events e left join app.worker_heartbeats h on h.worker_id = e.locked_by
    where e.kind = 'locked' order by e.at`;
}

export interface CoverageFigures {
  pieces: number;
  /** a piece that did not start where the previous one ended */
  broken: number;
  /** the same window written twice */
  repeated: number;
  first: Date | null;
  last: Date | null;
}

/** The market's pieces as a chain: each starts where the previous ended, none twice. */
export async function coverageFigures(sql: Sql): Promise<CoverageFigures> {
  const [row] = await sql<CoverageFigures[]>`
    with chain as (
      select covered_from, covered_until, lag(covered_until) over (order by at) as previous, row_number() over (order by at) as n
      from topology.coverage
    )
    select count(*)::int as pieces,
      count(*) filter (where n > 1 and covered_from is distinct from previous)::int as broken,
      (count(*) - count(distinct (covered_from, covered_until)))::int as repeated,
      min(coalesce(covered_from, covered_until)) as first, max(covered_until) as last
    from chain`;
  return row!;
}

export interface BackfillFigures {
  windows: number;
  /** windows recorded under two ids */
  repeated: number;
  /** windows refreshed and closed more or less than once */
  closedWrongly: number;
  open: number;
}

export async function backfillFigures(sql: Sql): Promise<BackfillFigures> {
  const [row] = await sql<BackfillFigures[]>`
    with ids as (
      select id, window_start, window_end,
        count(*) filter (where op = 'INSERT') as inserts, count(*) filter (where op = 'DELETE') as deletes
      from topology.backfills group by id, window_start, window_end
    )
    select count(*)::int as windows,
      (count(*) - count(distinct (window_start, window_end)))::int as repeated,
      count(*) filter (where inserts <> 1 or deletes > 1)::int as "closedWrongly",
      (select count(*) from app.coin_bar_backfills)::int as open
    from ids`;
  return row!;
}

export interface TimescaledbJobRow {
  job_id: number;
  proc_name: string;
  hypertable: string;
  interval_s: number;
  /** runs by the service (run_timescaledb_jobs) */
  service_runs: number;
  /** the shortest time between two service runs, in seconds */
  min_gap_s: number | null;
  errors: number;
  /** runs by TimescaleDB's own scheduler (job_stats), null where it has none */
  scheduler_runs: number | null;
  scheduler_failures: number | null;
}

export async function timescaledbJobRows(sql: Sql): Promise<TimescaledbJobRow[]> {
  return sql<TimescaledbJobRow[]>`
    with runs as (
      select job_id, last_run_at, bool_or(last_error is not null and last_error <> 'started; did not finish') as failed
      from topology.timescaledb_runs group by job_id, last_run_at
    ),
    gaps as (
      select job_id, extract(epoch from last_run_at - lag(last_run_at) over (partition by job_id order by last_run_at)) as gap, failed
      from runs
    )
    select j.job_id, j.proc_name::text, coalesce(j.hypertable_name::text, '') as hypertable,
      extract(epoch from j.schedule_interval)::int as interval_s,
      (select count(*) from runs r where r.job_id = j.job_id)::int as service_runs,
      (select round(min(g.gap)::numeric, 1)::float8 from gaps g where g.job_id = j.job_id) as min_gap_s,
      (select count(*) from runs r where r.job_id = j.job_id and r.failed)::int as errors,
      s.total_runs::int as scheduler_runs, s.total_failures::int as scheduler_failures
    from timescaledb_information.jobs j
    left join timescaledb_information.job_stats s on s.job_id = j.job_id
    where j.scheduled
    order by j.job_id`;
}

export interface AttemptRow {
  delivery_id: number;
  event_id: string;
  /** webhook_deliveries.attempts */
  counted: number;
  status: string;
  /** outcomes of the attempt rows, in id order */
  outcomes: (string | null)[];
}

export async function attemptRows(sql: Sql, owner: string): Promise<AttemptRow[]> {
  return sql<AttemptRow[]>`
    select d.id::int as delivery_id, d.event_id::text, d.attempts as counted, d.status,
      coalesce(array_agg(a.outcome order by a.id) filter (where a.id is not null), '{}') as outcomes
    from app.webhook_deliveries d
    join app.webhook_events e on e.id = d.event_id
    left join app.webhook_attempts a on a.delivery_id = d.id
    where e.owner = ${owner} and not e.test
    group by d.id
    order by d.id`;
}
