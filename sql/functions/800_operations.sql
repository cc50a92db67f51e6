-- What GET /metrics reads from the database at scrape time, in one call: every row is one sample
-- (metric name, labels, value). State shared by all processes (job queues, data freshness,
-- webhook deliveries, connections) is read here rather than counted in one process's memory.
create or replace function app.metrics_snapshot(p_heartbeat_fresh interval)
returns table (metric text, labels jsonb, value double precision)
language sql stable
set search_path = app, pg_temp
as $$
  -- graphile-worker jobs per queue (unqueued jobs under '') and state.
  select 'mdapi_job_queue_jobs', jsonb_build_object('queue', coalesce(q.queue_name, ''), 'state', s.state), count(*)::double precision
  from graphile_worker._private_jobs j
  left join graphile_worker._private_job_queues q on q.id = j.job_queue_id
  cross join lateral (
    select case
      when j.locked_at is not null then 'locked'
      when j.attempts >= j.max_attempts then 'failed'
      when j.run_at > now() then 'scheduled'
      else 'ready'
    end as state
  ) s
  group by q.queue_name, s.state
  union all
  -- A named queue is serial: while its lock is held no other job of it runs (0 when free).
  select 'mdapi_job_queue_lock_age_seconds', jsonb_build_object('queue', q.queue_name),
    coalesce(extract(epoch from now() - q.locked_at), 0)::double precision
  from graphile_worker._private_job_queues q
  union all
  -- Newest 1-minute bar per source, a coin's bars counted for the source that created the coin.
  select 'mdapi_newest_bar_age_seconds', jsonb_build_object('source', c.source), extract(epoch from now() - max(b.time))::double precision
  from market.coins c
  cross join lateral (select b.time from market.coin_bars_1m b where b.coin_id = c.id order by b.time desc limit 1) b
  group by c.source
  union all
  select 'mdapi_live_price_age_seconds', jsonb_build_object('venue', e.slug), extract(epoch from now() - max(p.at))::double precision
  from market.live_venue_prices p
  join market.exchanges e on e.id = p.exchange_id
  group by e.slug
  union all
  -- Venue candles by path (rest, stream), REST/stream disagreements and refused stream candles (issue 46).
  select 'mdapi_venue_candles_total', jsonb_build_object('venue', e.slug, 'outcome', k.outcome), k.candles::double precision
  from market.venue_candle_counts k
  join market.exchanges e on e.id = k.exchange_id
  union all
  -- Per venue (market.venue_health): markets on the candle stream and on REST fallback, candles per
  -- minute by path and the delay from a minute's close to its index bar (issue 46).
  select g.metric, jsonb_build_object('venue', h.exchange) || g.labels, g.value::double precision
  from market.venue_health h
  cross join lateral (values
    ('mdapi_venue_candle_markets', jsonb_build_object('path', 'stream'), h.markets_streamed::numeric),
    ('mdapi_venue_candle_markets', jsonb_build_object('path', 'rest_fallback'), h.markets_rest_fallback::numeric),
    ('mdapi_venue_candles_per_minute', jsonb_build_object('path', 'stream'), h.candles_per_minute_stream),
    ('mdapi_venue_candles_per_minute', jsonb_build_object('path', 'rest'), h.candles_per_minute_rest),
    ('mdapi_venue_index_delay_seconds', jsonb_build_object('quantile', '0.5'), h.index_delay_p50_seconds),
    ('mdapi_venue_index_delay_seconds', jsonb_build_object('quantile', '0.99'), h.index_delay_p99_seconds)
  ) g (metric, labels, value)
  where g.value is not null
  union all
  select 'mdapi_webhook_deliveries_24h', jsonb_build_object('status', d.status), count(*)::double precision
  from app.webhook_deliveries d
  where d.created_at > now() - interval '24 hours'
  group by d.status
  union all
  select 'mdapi_workers', jsonb_build_object('state', s.state), count(h.worker_id)::double precision
  from (values ('fresh'), ('stale')) s (state)
  left join app.worker_heartbeats h on (h.beat_at > now() - p_heartbeat_fresh) = (s.state = 'fresh')
  group by s.state
  union all
  -- Server-side view of the pools: this database's connections by client and state.
  select 'mdapi_db_connections', jsonb_build_object('application', a.application_name, 'state', coalesce(a.state, 'unknown')), count(*)::double precision
  from pg_stat_activity a
  where a.datname = current_database() and a.backend_type = 'client backend'
  group by a.application_name, a.state
$$;
comment on function app.metrics_snapshot(interval) is
  'Samples for GET /metrics read at scrape time: graphile-worker jobs per queue and state (ready, scheduled, locked, failed), age of each queue lock, age in seconds of the newest 1-minute bar per data source (the source of the coin), age of the newest live price per venue (market.live_venue_prices), venue 1-minute candles counted per venue and outcome (market.venue_candle_counts: written by path, REST/stream disagreements, refused stream candles), per venue (market.venue_health) its markets on the candle stream and on REST fallback, its candles per minute by path over the last 5 closed minutes and the p50/p99 delay in seconds from a minute''s close to its index bar (samples left out while null), webhook deliveries of the last 24 hours by status, workers whose last heartbeat is fresh (newer than p_heartbeat_fresh) or stale, and this database''s client connections by application and state.';
revoke execute on function app.metrics_snapshot(interval) from public;

-- Migration files the calling code knows that this database has not applied: /readyz, the status
-- page, and the commands that need the schema but not a migration run (mdapi create-key) ask it.
create or replace function app.pending_migrations(p_migration_files text[])
returns text[]
language sql stable
set search_path = app, pg_temp
as $$
  select array(select f from unnest(p_migration_files) f where not exists (select from app.migrations m where m.name = f) order by f)
$$;
comment on function app.pending_migrations(text[]) is
  'The names among p_migration_files (the numbered files of sql/migrations the calling code knows) not recorded in app.migrations, in order: what a migration run would apply.';
revoke execute on function app.pending_migrations(text[]) from public;

-- What GET /readyz asks the database, in one call: migration files the code knows but the
-- database has not applied (pending) or the other way round (unknown: newer code ran a rolling
-- upgrade), and the worker heartbeats.
create or replace function app.readiness(p_migration_files text[], p_heartbeat_fresh interval)
returns table (pending text[], unknown text[], fresh_workers int, workers int, newest_beat_age_seconds double precision,
  timescaledb_job_runner text, timescaledb_job_runner_reason text, timescaledb_job_runner_decided_at timestamptz,
  sources jsonb)
language sql stable
set search_path = app, pg_temp
as $$
  select
    app.pending_migrations(p_migration_files),
    array(select m.name from app.migrations m where m.name <> all (p_migration_files) order by m.name),
    (select count(*)::int from app.worker_heartbeats h where h.beat_at > now() - p_heartbeat_fresh),
    (select count(*)::int from app.worker_heartbeats),
    (select extract(epoch from now() - max(h.beat_at))::float8 from app.worker_heartbeats h),
    r.runner, r.reason, r.decided_at,
    (select coalesce(jsonb_agg(jsonb_build_object('name', h.name, 'status', h.status, 'lag_seconds', h.lag_seconds,
        'last_success_at', h.last_success_at, 'last_error', case when h.status = 'failing' then h.last_error end)
        || case when h.venues is not null then jsonb_build_object('venues', h.venues) else '{}' end order by h.name), '[]')
     from market.source_health h where h.status <> 'idle')
  from (select) one
  left join app.timescaledb_job_runner r on true
$$;
comment on function app.readiness(text[], interval) is
  'Readiness as GET /readyz reads it: migration files not yet applied (pending) and applied migrations the calling code does not know (unknown), workers whose heartbeat is newer than p_heartbeat_fresh, all workers on record, the age of the newest beat, who runs the TimescaleDB jobs (app.timescaledb_job_runner; null before the first decision), and the health of every data source that has run (market.source_health: status, lag, last success, the error when failing, venues up and down).';
revoke execute on function app.readiness(text[], interval) from public;
