-- Operators (issue 46): when each index bar was first written, so that the delay from a minute's
-- close to its index bar is read from SQL (market.venue_health). Rows from before carry null; the
-- default stamps new rows, and an upsert of an existing bar keeps its first stamp.
alter table market.coin_bars_1m add column written_at timestamptz;
alter table market.coin_bars_1m alter column written_at set default now();
comment on column market.coin_bars_1m.written_at is 'When the bar was first written (the transaction''s time; a later rebuild of the same minute keeps it); null for bars written before this column existed. A live bar''s delay is written_at minus its close (time + 1 minute).';
