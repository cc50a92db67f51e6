-- The per-coin figures of the coin state, as both of its computations return them (issue 46):
-- market.computed_coin_figures from the bars, market.moved_coin_figures from the stored row.
create type market.coin_figures as (
  coin_id int,
  price numeric,
  last_updated timestamptz,
  volume_24h numeric,
  change_24h double precision,
  change_7d double precision,
  ath numeric,
  ath_at timestamptz,
  atl numeric,
  atl_at timestamptz,
  today_open numeric,
  today_high numeric,
  today_low numeric,
  today_close numeric,
  close_24h numeric,
  close_7d numeric
);
comment on type market.coin_figures is 'A coin''s own figures in market.coin_state (the columns of the same names), before marketcap, valuation, ranks and dominance: what market.computed_coin_figures and market.moved_coin_figures return.';
