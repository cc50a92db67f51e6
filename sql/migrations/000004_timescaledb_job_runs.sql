-- Without TimescaleDB's scheduler (the embedded database runs no background workers) the
-- service runs due policy jobs itself and remembers here when each last ran.
create table app.timescaledb_job_runs (
  job_id int primary key,
  last_run_at timestamptz not null,
  last_error text
);
comment on table app.timescaledb_job_runs is 'When the service last ran each TimescaleDB job itself (embedded database, no background scheduler).';
