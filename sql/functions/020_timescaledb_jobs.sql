-- Runs the TimescaleDB policy jobs that are due, for databases without TimescaleDB's
-- background scheduler (the embedded PGlite runs no background workers). A procedure so that
-- each job commits on its own: refresh policies cannot run inside a transaction block.
create or replace function app.timescaledb_scheduler_running() returns boolean
language sql stable
as $$
  select exists (
    select from pg_stat_activity
    where backend_type like 'TimescaleDB Background Worker Scheduler%'
       or application_name like 'TimescaleDB Background Worker Scheduler%'
  );
$$;
comment on function app.timescaledb_scheduler_running() is 'True when TimescaleDB''s own job scheduler runs on this database.';

create or replace function app.due_timescaledb_jobs()
returns table (job_id int, proc_name name, hypertable_name name)
language sql stable
set search_path = app, pg_temp
as $$
  select j.job_id, j.proc_name, j.hypertable_name
  from timescaledb_information.jobs j
  left join app.timescaledb_job_runs r on r.job_id = j.job_id
  where j.scheduled
    and (r.last_run_at is null or r.last_run_at + j.schedule_interval <= now())
  order by j.job_id;
$$;
comment on function app.due_timescaledb_jobs() is 'Scheduled TimescaleDB jobs whose interval has passed since the service last ran them.';

create or replace procedure app.run_due_timescaledb_jobs()
language plpgsql
as $$
declare
  v_job record;
begin
  -- Refresh policies last, in job order (30m before 1h before 1d): everything else first.
  for v_job in
    select * from app.due_timescaledb_jobs() d
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
comment on procedure app.run_due_timescaledb_jobs() is 'Runs every due TimescaleDB job (CALL run_job) and records when; one commit per job. Continuous-aggregate refreshes run last and outside any subtransaction (they cannot run inside one).';
