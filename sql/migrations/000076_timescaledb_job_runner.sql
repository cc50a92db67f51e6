-- Who runs the TimescaleDB policy jobs (retention, aggregate refresh) on this database, as the
-- service last decided: TimescaleDB's own scheduler, or the service's run_timescaledb_jobs task
-- (the embedded database has no scheduler; a server's scheduler may run and still fail its jobs).
create table app.timescaledb_job_runner (
  id boolean primary key default true check (id),
  runner text not null check (runner in ('service', 'timescaledb', 'none')),
  reason text not null,
  decided_at timestamptz not null default now()
);
comment on table app.timescaledb_job_runner is 'The last decision of the run_timescaledb_jobs task: which runner is in charge of the TimescaleDB jobs (service, timescaledb, none) and why. One row.';

create table app.timescaledb_jobs_seen (
  job_id int primary key,
  first_seen_at timestamptz not null default now()
);
comment on table app.timescaledb_jobs_seen is 'When the service first saw each TimescaleDB job: a job is judged neglected by the scheduler only once it has been known for its interval plus a grace.';
