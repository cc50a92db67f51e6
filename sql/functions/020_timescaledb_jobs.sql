-- Runs the TimescaleDB policy jobs that are due, for databases without TimescaleDB's
-- background scheduler (the embedded PGlite runs no background workers). A procedure so that
-- each job commits on its own: refresh policies cannot run inside a transaction block.
create or replace function app.timescaledb_scheduler_started_at() returns timestamptz
language sql stable
as $$
  select min(backend_start) from pg_stat_activity
  where (backend_type like 'TimescaleDB Background Worker Scheduler%'
      or application_name like 'TimescaleDB Background Worker Scheduler%')
    and (datname = current_database() or datname is null);
$$;
comment on function app.timescaledb_scheduler_started_at() is 'When TimescaleDB''s job scheduler for this database started; null when none runs.';

-- why: a scheduler process proves nothing (on PostgreSQL 15.20 every TimescaleDB 2.23 job fails
-- in it); what counts is whether each job has succeeded on schedule, by either runner.
create or replace function app.neglected_timescaledb_jobs(p_grace interval default interval '5 minutes')
returns table (job_id int, last_success timestamptz)
language sql stable
set search_path = app, pg_temp
as $$
  select j.job_id, greatest(s.last_successful_finish, case when r.last_error is null then r.last_run_at end)
  from timescaledb_information.jobs j
  left join timescaledb_information.job_stats s on s.job_id = j.job_id
  left join app.timescaledb_job_runs r on r.job_id = j.job_id
  left join app.timescaledb_jobs_seen seen on seen.job_id = j.job_id
  where j.scheduled
    -- the scheduler has had a whole interval and the grace since the job was first seen (a job
    -- not seen yet, as in a database just created, is not judged)
    and greatest(s.last_successful_finish, case when r.last_error is null then r.last_run_at end, coalesce(seen.first_seen_at, 'infinity'))
      < now() - j.schedule_interval - p_grace
  order by j.job_id;
$$;
comment on function app.neglected_timescaledb_jobs(interval) is
'Scheduled TimescaleDB jobs that have not succeeded within their schedule interval plus p_grace, counting successes by TimescaleDB''s scheduler (job_stats) and by the service (timescaledb_job_runs), and not before the service has known the job that long (app.timescaledb_jobs_seen).';

create or replace function app.decide_timescaledb_job_runner(p_mode text, p_grace interval default interval '5 minutes')
returns table (runner text, reason text, changed boolean)
language plpgsql volatile
set search_path = app, pg_temp
as $$
declare
  v_previous text;
  v_neglected int[];
begin
  select r.runner into v_previous from app.timescaledb_job_runner r;
  insert into app.timescaledb_jobs_seen (job_id) select j.job_id from timescaledb_information.jobs j on conflict do nothing;
  if p_mode = 'off' then
    runner := 'none'; reason := 'TIMESCALEDB_JOB_RUNNER=off';
  elsif p_mode = 'on' then
    runner := 'service'; reason := 'TIMESCALEDB_JOB_RUNNER=on';
  elsif app.timescaledb_scheduler_started_at() is null then
    runner := 'service'; reason := 'no TimescaleDB scheduler runs on this database';
  else
    select array_agg(n.job_id) into v_neglected from app.neglected_timescaledb_jobs(p_grace) n;
    if v_neglected is null then
      runner := 'timescaledb'; reason := 'the TimescaleDB scheduler runs every job on schedule';
    else
      runner := 'service';
      reason := format('the TimescaleDB scheduler runs but jobs %s have not succeeded on schedule', array_to_string(v_neglected, ', '));
    end if;
  end if;
  insert into app.timescaledb_job_runner as t (runner, reason) values (runner, reason)
  on conflict (id) do update set runner = excluded.runner, reason = excluded.reason, decided_at = now();
  changed := v_previous is distinct from runner;
  return next;
end;
$$;
comment on function app.decide_timescaledb_job_runner(text, interval) is
'Decides and records (app.timescaledb_job_runner) who runs the TimescaleDB jobs: off = none; on = the service; auto = the service when no scheduler runs or when the scheduler neglects jobs (app.neglected_timescaledb_jobs), else TimescaleDB. changed: the runner differs from the last decision.';

create or replace function app.due_timescaledb_jobs(p_neglected_only boolean default false)
returns table (job_id int, proc_name name, hypertable_name name)
language sql stable
set search_path = app, pg_temp
as $$
  select j.job_id, j.proc_name, j.hypertable_name
  from timescaledb_information.jobs j
  left join app.timescaledb_job_runs r on r.job_id = j.job_id
  where j.scheduled
    and (r.last_run_at is null or r.last_run_at + j.schedule_interval <= now())
    and (not p_neglected_only or j.job_id in (select n.job_id from app.neglected_timescaledb_jobs() n))
  order by j.job_id;
$$;
comment on function app.due_timescaledb_jobs(boolean) is 'Scheduled TimescaleDB jobs whose interval has passed since the service last ran them; with p_neglected_only, only those TimescaleDB''s scheduler neglects.';

-- why: no refresh call may hold the embedded database long (one statement at a time serves every
-- client there): a window is cut into pieces on multiples of p_piece counted from 2000-01-01, where
-- the buckets of every aggregate here begin too, so the pieces together refresh exactly the buckets
-- one call over the whole window would; the outer ends stay as given
create or replace function app.refresh_pieces(p_start timestamptz, p_end timestamptz, p_piece interval, p_now timestamptz default now())
returns table (window_start timestamptz, window_end timestamptz)
language sql stable
as $$
  with bounds as (
    select array[p_start] || coalesce(array_agg(c order by c), '{}') || array[p_end] as b
    from generate_series(date_bin(p_piece, p_start, timestamptz '2000-01-01') + p_piece,
                         coalesce(p_end, p_now) - interval '1 microsecond', p_piece) c
    -- no piece shorter than half a piece: each holds whole buckets (a refresh over none fails)
    where c >= p_start + p_piece / 2 and (p_end is null or c <= p_end - p_piece / 2)
  )
  select b[i], b[i + 1] from bounds cross join generate_subscripts(b, 1) i where i < cardinality(b)
  order by i;
$$;
comment on function app.refresh_pieces(timestamptz, timestamptz, interval, timestamptz) is 'The window [p_start, p_end) cut at multiples of p_piece (from 2000-01-01): the windows of refresh_continuous_aggregate calls that together refresh what one call over the whole window would. No piece is shorter than half of p_piece. A null p_start gives one piece; a null p_end (no end) counts up to p_now, the last piece staying open.';

-- why: the piece length that keeps a refresh call of the embedded database around half a second
-- or less, by bucket width (source rows per piece: a day of minutes, a week of half-hours, two
-- months of hours)
create or replace function app.refresh_piece_length(p_bucket_width interval) returns interval
language sql immutable
as $$
  select case when p_bucket_width < interval '1 hour' then interval '1 day'
              when p_bucket_width < interval '1 day' then interval '7 days'
              else interval '60 days' end;
$$;
comment on function app.refresh_piece_length(interval) is 'How long a window one refresh call of a continuous aggregate with buckets of p_bucket_width covers at most where its source is dense (app.refresh_pieces).';

-- why: the due jobs as statements a caller runs one by one: a refresh policy as pieces of its window
-- (now - start_offset to now - end_offset), any other job whole; in the order jobs run
create or replace function app.due_timescaledb_job_steps(p_neglected_only boolean default false, p_now timestamptz default now())
returns table (job_id int, aggregate text, window_start timestamptz, window_end timestamptz, first boolean, last boolean)
language sql stable
set search_path = app, pg_temp
as $$
  select d.job_id, p.aggregate, p.window_start, p.window_end,
    coalesce(p.piece = 1, true), coalesce(p.piece = p.pieces, true)
  from app.due_timescaledb_jobs(p_neglected_only) d
  left join lateral (
    select format('%I.%I', j.hypertable_schema, j.hypertable_name) as aggregate, r.window_start, r.window_end,
      row_number() over (order by r.window_start) as piece, count(*) over () as pieces
    from timescaledb_information.jobs j
    join _timescaledb_catalog.continuous_aggs_bucket_function f on f.mat_hypertable_id = (j.config ->> 'mat_hypertable_id')::int
    cross join lateral app.refresh_pieces(p_now - (j.config ->> 'start_offset')::interval, p_now - (j.config ->> 'end_offset')::interval,
      app.refresh_piece_length(f.bucket_width::interval), p_now) r
    where j.job_id = d.job_id and d.proc_name = 'policy_refresh_continuous_aggregate'
  ) p on true
  -- refresh policies last, in job order (30m before 1h before 1d): everything else first
  order by d.proc_name = 'policy_refresh_continuous_aggregate', d.job_id, p.window_start;
$$;
comment on function app.due_timescaledb_job_steps(boolean, timestamptz) is 'The due TimescaleDB jobs (app.due_timescaledb_jobs) as steps for app.run_timescaledb_job_step, in order: a continuous-aggregate refresh policy as the pieces of its window (app.refresh_pieces; first and last mark its first and last piece), any other job as one step.';

drop procedure if exists app.run_due_timescaledb_jobs();
-- why: one step of a due job in a statement of its own, so that the service can run a job's steps
-- as separate statements (the embedded database serves one statement at a time)
create or replace procedure app.run_timescaledb_job_step(p_job_id int, p_aggregate text default null,
  p_window_start timestamptz default null, p_window_end timestamptz default null, p_first boolean default true, p_last boolean default true)
language plpgsql
as $$
begin
  if p_aggregate is not null then
    -- A continuous-aggregate refresh refuses to run in a subtransaction, which an EXCEPTION
    -- block would open. So it runs bare, after the attempt is recorded and committed: if it
    -- fails, the error ends this call (the worker logs it), the job is not retried before its
    -- schedule interval has passed, and the next call goes on with the other due jobs.
    if p_first then
      insert into app.timescaledb_job_runs (job_id, last_run_at, last_error)
      values (p_job_id, now(), 'started; did not finish')
      on conflict (job_id) do update set last_run_at = excluded.last_run_at, last_error = excluded.last_error;
      commit;
    end if;
    call public.refresh_continuous_aggregate(p_aggregate::regclass, p_window_start, p_window_end);
    if p_last then
      update app.timescaledb_job_runs set last_error = null where job_id = p_job_id;
    end if;
  else
    begin
      call public.run_job(p_job_id);
      insert into app.timescaledb_job_runs (job_id, last_run_at, last_error) values (p_job_id, now(), null)
      on conflict (job_id) do update set last_run_at = excluded.last_run_at, last_error = null;
    exception when others then
      insert into app.timescaledb_job_runs (job_id, last_run_at, last_error) values (p_job_id, now(), sqlerrm)
      on conflict (job_id) do update set last_run_at = excluded.last_run_at, last_error = excluded.last_error;
    end;
  end if;
end;
$$;
comment on procedure app.run_timescaledb_job_step(int, text, timestamptz, timestamptz, boolean, boolean) is 'Runs one step of app.due_timescaledb_job_steps and records the job''s run (app.timescaledb_job_runs): a piece of a refresh policy''s window (refresh_continuous_aggregate; the first piece records the attempt, the last its success), or a whole other job (CALL run_job, its error recorded). Not inside a transaction block: a refresh cannot run in one.';

create or replace procedure app.run_due_timescaledb_jobs(p_neglected_only boolean default false)
language plpgsql
as $$
declare
  v_step record;
begin
  for v_step in select * from app.due_timescaledb_job_steps(p_neglected_only) loop
    call app.run_timescaledb_job_step(v_step.job_id, v_step.aggregate, v_step.window_start, v_step.window_end, v_step.first, v_step.last);
    commit;
  end loop;
end;
$$;
comment on procedure app.run_due_timescaledb_jobs(boolean) is 'Runs every due TimescaleDB job (with p_neglected_only: those TimescaleDB''s scheduler neglects) step by step (app.due_timescaledb_job_steps, app.run_timescaledb_job_step) and records when; one commit per step. The service''s task runs the same steps as statements of their own.';
