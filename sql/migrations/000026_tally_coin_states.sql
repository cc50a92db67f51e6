-- The per-coin inputs of the market-wide indicator tally, stored so that the 15-minute refresh can
-- compute them one coin per statement: on the single-backend embedded database one long statement
-- would hold every other client for seconds.
create table market.tally_coin_states (
  coin_id int not null references market.coins (id) on delete cascade,
  category text not null,
  state text not null check (state in ('bullish', 'bearish', 'neutral', 'overbought', 'oversold')),
  value double precision,
  computed_at timestamptz not null default now(),
  primary key (coin_id, category)
);
comment on table market.tally_coin_states is 'Per coin ranked 1-100 and counting category of the indicator tally (rsi ... highs-lows), its state and the value behind it; rewritten coin by coin by market.refresh_tally_coin() every 15 minutes. See market.coin_tally_states().';
