-- The incremental coin state (issue 46) keeps the closes its 24h and 7d changes are measured
-- against, and moves them forward as the windows pass bars, instead of looking them up for every
-- coin every minute.
alter table market.coin_state add column close_24h numeric, add column close_7d numeric;
comment on column market.coin_state.close_24h is 'Close of the last bar at least 24 hours old: what change_24h compares the price with; null when there is none.';
comment on column market.coin_state.close_7d is 'Close of the last bar at least 7 days old: what change_7d compares the price with; null when there is none.';
comment on column market.coin_state.refreshed_at is 'When market.refresh_coin_state() last changed the row (a refresh leaves a row whose figures did not move alone).';
