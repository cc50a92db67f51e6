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
  for v_job in select * from app.due_timescaledb_jobs() loop
    begin
      call public.run_job(v_job.job_id);
      insert into app.timescaledb_job_runs (job_id, last_run_at, last_error) values (v_job.job_id, now(), null)
      on conflict (job_id) do update set last_run_at = excluded.last_run_at, last_error = null;
    exception when others then
      insert into app.timescaledb_job_runs (job_id, last_run_at, last_error) values (v_job.job_id, now(), sqlerrm)
      on conflict (job_id) do update set last_run_at = excluded.last_run_at, last_error = excluded.last_error;
    end;
    commit;
  end loop;
end;
$$;
comment on procedure app.run_due_timescaledb_jobs() is 'Runs every due TimescaleDB job (CALL run_job) and records when; one commit per job.';
