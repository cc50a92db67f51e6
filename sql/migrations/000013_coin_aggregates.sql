-- Hierarchical continuous aggregates of market.coin_bars_1m: 30 minutes <- raw bars, 1 hour <-
-- 30 minutes, 1 day <- 1 hour. Kept 3 months, 6 months and forever. Each refresh policy looks
-- back less far than its SOURCE keeps data, so a refresh never recomputes a bucket whose source
-- rows retention has already dropped (which would erase materialized history).
-- Real-time aggregation is on: the newest, not yet materialized buckets are computed live.
create materialized view market.coin_bars_30m
with (timescaledb.continuous, timescaledb.materialized_only = false) as
select coin_id,
  time_bucket(interval '30 minutes', time) as time,
  first(open, time) as open,
  max(high) as high,
  min(low) as low,
  last(close, time) as close,
  sum(volume) as volume,
  last(marketcap, time) as marketcap
from market.coin_bars_1m
group by coin_id, time_bucket(interval '30 minutes', time)
with no data;

create materialized view market.coin_bars_1h
with (timescaledb.continuous, timescaledb.materialized_only = false) as
select coin_id,
  time_bucket(interval '1 hour', time) as time,
  first(open, time) as open,
  max(high) as high,
  min(low) as low,
  last(close, time) as close,
  sum(volume) as volume,
  last(marketcap, time) as marketcap
from market.coin_bars_30m
group by coin_id, time_bucket(interval '1 hour', time)
with no data;

create materialized view market.coin_bars_1d
with (timescaledb.continuous, timescaledb.materialized_only = false) as
select coin_id,
  time_bucket(interval '1 day', time) as time,
  first(open, time) as open,
  max(high) as high,
  min(low) as low,
  last(close, time) as close,
  sum(volume) as volume,
  last(marketcap, time) as marketcap
from market.coin_bars_1h
group by coin_id, time_bucket(interval '1 day', time)
with no data;

-- Chunks sized to each level's density and retention (the default, 10 days, would split the
-- daily history into a hundred chunks that every per-coin query has to visit).
select set_chunk_time_interval('market.coin_bars_1h', interval '30 days');
select set_chunk_time_interval('market.coin_bars_1d', interval '365 days');

-- Source retention: raw 8 days -> 30m looks back 7 days; 30m 3 months -> 1h looks back 1 month;
-- 1h 6 months -> 1d looks back 3 months. Older windows are refreshed explicitly by whoever
-- writes old bars (backfill, import), before retention may drop them (see app.coin_bar_backfills).
select add_continuous_aggregate_policy('market.coin_bars_30m',
  start_offset => interval '7 days', end_offset => interval '1 minute', schedule_interval => interval '5 minutes');
select add_continuous_aggregate_policy('market.coin_bars_1h',
  start_offset => interval '1 month', end_offset => interval '1 minute', schedule_interval => interval '15 minutes');
select add_continuous_aggregate_policy('market.coin_bars_1d',
  start_offset => interval '3 months', end_offset => interval '1 minute', schedule_interval => interval '1 hour');

select add_retention_policy('market.coin_bars_30m', drop_after => interval '3 months');
select add_retention_policy('market.coin_bars_1h', drop_after => interval '6 months');

comment on view market.coin_bars_30m is 'Half-hourly OHLCV per coin, rolled up from market.coin_bars_1m: open = first open, high = max, low = min, close = last close, volume = sum (USD), marketcap = last. Kept 3 months; the newest buckets are computed live.';
comment on view market.coin_bars_1h is 'Hourly OHLCV per coin, rolled up from market.coin_bars_30m the same way. Kept 6 months; the newest buckets are computed live.';
comment on view market.coin_bars_1d is 'Daily (UTC) OHLCV per coin, rolled up from market.coin_bars_1h the same way. Kept forever; today''s bucket is computed live. Indicators are computed from it.';

-- Old bars written after the fact (a backfill, an import) must reach the aggregates before
-- retention drops them. Each write records its window here; retention jobs of the bar tables are
-- paused while any window is pending and resumed when the last one has been refreshed.
create table app.coin_bar_backfills (
  id bigint generated always as identity primary key,
  source text not null,
  window_start timestamptz not null,
  window_end timestamptz not null check (window_end > window_start),
  created_at timestamptz not null default now()
);
comment on table app.coin_bar_backfills is 'Windows of old coin bars written but not yet refreshed into the continuous aggregates; while any is pending, the retention policies of market.coin_bars_* are paused.';
