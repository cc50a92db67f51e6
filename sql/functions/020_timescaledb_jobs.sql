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

drop procedure if exists app.run_due_timescaledb_jobs();
create or replace procedure app.run_due_timescaledb_jobs(p_neglected_only boolean default false)
language plpgsql
as $$
declare
  v_job record;
begin
  -- Refresh policies last, in job order (30m before 1h before 1d): everything else first.
  for v_job in
    select * from app.due_timescaledb_jobs(p_neglected_only) d
    order by d.proc_name = 'policy_refresh_continuous_aggregate', d.job_id
  loop
    if v_job.proc_name = 'policy_refresh_continuous_aggregate' then
      -- A continuous-aggregate refresh refuses to run in a subtransaction, which an EXCEPTION
      -- block would open. So it runs bare, after the attempt is recorded and committed: if it
      -- fails, the error ends this call (the worker logs it), the job is not retried before its
      -- schedule interval has passed, and the next call goes on with the other due jobs.
      insert into app.timescaledb_job_runs (job_id, last_run_at, last_error)
      values (v_job.job_id, now(), 'started; did not finish')
      on conflict (job_id) do update set last_run_at = excluded.last_run_at, last_error = excluded.last_error;
      commit;
      call public.run_job(v_job.job_id);
      update app.timescaledb_job_runs set last_error = null where job_id = v_job.job_id;
    else
      begin
        call public.run_job(v_job.job_id);
        insert into app.timescaledb_job_runs (job_id, last_run_at, last_error) values (v_job.job_id, now(), null)
        on conflict (job_id) do update set last_run_at = excluded.last_run_at, last_error = null;
      exception when others then
        insert into app.timescaledb_job_runs (job_id, last_run_at, last_error) values (v_job.job_id, now(), sqlerrm)
        on conflict (job_id) do update set last_run_at = excluded.last_run_at, last_error = excluded.last_error;
      end;
    end if;
    commit;
  end loop;
end;
$$;
comment on procedure app.run_due_timescaledb_jobs(boolean) is 'Runs every due TimescaleDB job (with p_neglected_only: those TimescaleDB''s scheduler neglects) (CALL run_job) and records when; one commit per job. Continuous-aggregate refreshes run last and outside any subtransaction (they cannot run inside one).';
