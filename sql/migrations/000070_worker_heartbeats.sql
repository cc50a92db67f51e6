-- Every graphile-worker worker pool of every process beats here every few seconds. A worker whose
-- beat has gone stale has died (SIGKILL, a crash, a lost database), so the locks it holds on
-- jobs and queues are given back long before graphile-worker's own 4-hour lock expiry.
create table app.worker_heartbeats (
  worker_id text primary key,
  process text not null,
  started_at timestamptz not null default now(),
  beat_at timestamptz not null default now()
);
create index worker_heartbeats_beat_at on app.worker_heartbeats (beat_at);
comment on table app.worker_heartbeats is 'The last heartbeat of each graphile-worker worker pool (the id it locks jobs and queues with), written by its process every few seconds; a stale beat marks a dead worker whose job and queue locks are released.';
comment on column app.worker_heartbeats.process is 'host:pid of the process that runs the worker';
