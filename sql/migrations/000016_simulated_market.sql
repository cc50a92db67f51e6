-- Parameters of the simulated demo market per coin. Prices are a pure function of the seed,
-- the coin's slug and the time (sql/functions/120_simulated_market.sql), so the same instant
-- always gets the same bar, whenever and however often it is generated.
create table market.simulated_coins (
  coin_id int primary key references market.coins (id) on delete cascade,
  reference_price numeric not null check (reference_price > 0),
  volatility double precision not null check (volatility >= 0),
  market_beta double precision not null default 0.7 check (market_beta between 0 and 1),
  daily_volume numeric not null check (daily_volume >= 0),
  bars_from timestamptz,
  bars_until timestamptz
);
comment on table market.simulated_coins is 'Demo market parameters per coin: prices wander around reference_price (log-scale amplitude volatility, correlated with the market by market_beta); bars exist in [bars_from, bars_until), bars_until null meaning still trading.';
