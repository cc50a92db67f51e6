-- Venue history: a snapshot of each venue's figures per minute (rolling 24h USD volume, share of
-- all venues' volume, rank, pairs, assets), kept 8 days, with hourly (6 months) and daily
-- (forever) continuous aggregates holding the last snapshot of each bucket. The rollups carry no
-- OHLC: a snapshot series is read as "the figure at the end of the bucket".
create table market.exchange_volumes (
  time timestamptz not null,
  exchange_id int not null,
  volume_24h numeric not null check (volume_24h >= 0),
  volume_dominance double precision,
  rank int,
  pairs int not null default 0,
  assets int not null default 0,
  primary key (exchange_id, time)
);
-- No foreign key, as for market.coin_bars_1m: writers resolve venues first.
select create_hypertable('market.exchange_volumes', 'time', chunk_time_interval => interval '1 day', create_default_indexes => false);
select add_retention_policy('market.exchange_volumes', drop_after => interval '8 days');
comment on table market.exchange_volumes is 'Per-minute snapshots of each venue (older history may be coarser: a backfilled row stands for its bucket). Kept 8 days; market.exchange_volumes_1h and _1d keep the rest.';
comment on column market.exchange_volumes.volume_24h is 'Rolling 24h USD volume of the venue at that instant.';
comment on column market.exchange_volumes.volume_dominance is 'Percent share of the venue in the 24h volume of all ranked venues at that instant.';
comment on column market.exchange_volumes.rank is 'Rank of the venue by 24h volume at that instant; null when unranked.';

create materialized view market.exchange_volumes_1h
with (timescaledb.continuous, timescaledb.materialized_only = false) as
select exchange_id,
  time_bucket(interval '1 hour', time) as time,
  last(volume_24h, time) as volume_24h,
  last(volume_dominance, time) as volume_dominance,
  last(rank, time) as rank,
  last(pairs, time) as pairs,
  last(assets, time) as assets
from market.exchange_volumes
group by exchange_id, time_bucket(interval '1 hour', time)
with no data;

create materialized view market.exchange_volumes_1d
with (timescaledb.continuous, timescaledb.materialized_only = false) as
select exchange_id,
  time_bucket(interval '1 day', time) as time,
  last(volume_24h, time) as volume_24h,
  last(volume_dominance, time) as volume_dominance,
  last(rank, time) as rank,
  last(pairs, time) as pairs,
  last(assets, time) as assets
from market.exchange_volumes_1h
group by exchange_id, time_bucket(interval '1 day', time)
with no data;

select set_chunk_time_interval('market.exchange_volumes_1h', interval '30 days');
select set_chunk_time_interval('market.exchange_volumes_1d', interval '365 days');

-- Each policy looks back less far than its source keeps data (raw 8 days, hourly 6 months).
select add_continuous_aggregate_policy('market.exchange_volumes_1h',
  start_offset => interval '7 days', end_offset => interval '1 minute', schedule_interval => interval '15 minutes');
select add_continuous_aggregate_policy('market.exchange_volumes_1d',
  start_offset => interval '3 months', end_offset => interval '1 minute', schedule_interval => interval '1 hour');
select add_retention_policy('market.exchange_volumes_1h', drop_after => interval '6 months');

comment on view market.exchange_volumes_1h is 'Hourly venue snapshots (the last of each hour) from market.exchange_volumes. Kept 6 months; the newest buckets are computed live.';
comment on view market.exchange_volumes_1d is 'Daily (UTC) venue snapshots (the last of each day) from market.exchange_volumes_1h. Kept forever; today is computed live.';
