-- The current figures of every coin in one row, rewritten set-based by market.refresh_coin_state()
-- after each ingest, so that list endpoints filter and sort an indexed table instead of
-- aggregating bars per request.
create table market.coin_state (
  coin_id int primary key references market.coins (id) on delete cascade,
  price numeric,
  volume_24h numeric not null default 0,
  change_24h double precision,
  change_7d double precision,
  marketcap numeric,
  fully_diluted_valuation numeric,
  dominance double precision,
  rank int,
  change_rank_24h int,
  change_rank_7d int,
  ath numeric,
  ath_at timestamptz,
  atl numeric,
  atl_at timestamptz,
  today_open numeric,
  today_high numeric,
  today_low numeric,
  today_close numeric,
  last_updated timestamptz,
  refreshed_at timestamptz not null default now()
);
comment on table market.coin_state is 'Current figures per coin (one row per coin, also for coins without any price): rewritten by market.refresh_coin_state() after every ingest. Prices in USD.';
comment on column market.coin_state.price is 'Close of the latest bar; null when the coin has no bars (not yet listed).';
comment on column market.coin_state.volume_24h is 'Sum of the USD volume of the bars that started in the last 24 hours; 0 when none.';
comment on column market.coin_state.change_24h is 'Percent change of price against the close of the last bar at least 24 hours old; null when there is none. 0 for a coin whose prices stopped (delisted).';
comment on column market.coin_state.change_7d is 'Percent change of price against the close of the last bar at least 7 days old; null when there is none.';
comment on column market.coin_state.marketcap is 'price times circulating supply; null when the circulating supply is unknown.';
comment on column market.coin_state.fully_diluted_valuation is 'price times max supply, else times total supply; null when neither is known.';
comment on column market.coin_state.dominance is 'Percent share of marketcap in the total marketcap of ranked coins; null without marketcap or rank.';
comment on column market.coin_state.rank is 'Rank of active coins with a price: by marketcap (coins without one after all that have one), then 24h volume. Null for coins that are not active or have no price.';
comment on column market.coin_state.change_rank_24h is 'Position of the coin among ranked coins by change_24h, largest gain first.';
comment on column market.coin_state.change_rank_7d is 'Position of the coin among ranked coins by change_7d, largest gain first.';
comment on column market.coin_state.ath is 'All-time high: highest high of any bar on record (daily aggregate plus raw bars).';
comment on column market.coin_state.ath_at is 'Start of the day (UTC) of the all-time high, or of the raw bar when it is within the raw retention.';
comment on column market.coin_state.atl is 'All-time low: lowest low of any bar on record.';
comment on column market.coin_state.atl_at is 'Start of the day (UTC) of the all-time low, or of the raw bar when it is within the raw retention.';
comment on column market.coin_state.today_open is 'Open of the current UTC day (first bar since midnight); today_* are null when the coin has no bar today.';
comment on column market.coin_state.last_updated is 'Start time of the bar the price comes from.';
comment on column market.coin_state.refreshed_at is 'When market.refresh_coin_state() last wrote the row.';

create index coin_state_rank on market.coin_state (rank) where rank is not null;
create index coin_state_marketcap on market.coin_state (marketcap desc nulls last);
create index coin_state_volume_24h on market.coin_state (volume_24h desc);
create index coin_state_change_24h on market.coin_state (change_24h desc nulls last);
create index coin_state_change_7d on market.coin_state (change_7d desc nulls last);
create index coin_state_price on market.coin_state (price desc nulls last);
