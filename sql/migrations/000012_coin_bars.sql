-- The raw price history: OHLCV bars per coin, kept 8 days. Everything older lives on in the
-- continuous aggregates (000013), which are refreshed before retention drops the raw rows.
create table market.coin_bars_1m (
  time timestamptz not null,
  coin_id int not null,
  open numeric not null check (open >= 0),
  high numeric not null,
  low numeric not null,
  close numeric not null check (close >= 0),
  volume numeric not null default 0 check (volume >= 0),
  marketcap numeric check (marketcap >= 0),
  primary key (coin_id, time),
  check (low >= 0 and low <= open and low <= close and high >= open and high >= close)
);
-- No foreign key to market.coins: it would cost a lookup per inserted bar on the ingest path,
-- and coins are never deleted while they have history. Writers go through the functions of
-- sql/functions, which resolve coins first.
select create_hypertable('market.coin_bars_1m', 'time', chunk_time_interval => interval '1 day', create_default_indexes => false);
select add_retention_policy('market.coin_bars_1m', drop_after => interval '8 days');
comment on table market.coin_bars_1m is 'Raw OHLCV bars per coin, normally one per minute, kept 8 days. A bar may be wider (imported or backfilled history): it is stored at its start time and the aggregates roll it up into the buckets it starts in. Prices in USD.';
comment on column market.coin_bars_1m.time is 'Start of the bar (UTC). The bar closes at the next bar''s start.';
comment on column market.coin_bars_1m.volume is 'Traded volume in USD during the bar.';
comment on column market.coin_bars_1m.marketcap is 'Marketcap in USD at the bar''s close (close times circulating supply); null when the supply is unknown.';
