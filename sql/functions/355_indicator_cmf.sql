-- Chaikin Money Flow: not in TA-Lib, defined here (Chaikin's definition, as StockCharts gives it):
--   multiplier_t = ((close - low) - (high - close)) / (high - low), 0 when high = low
--   cmf_t = sum(multiplier * volume) / sum(volume) over the last `period` days (USD volume)
-- Null for the first period - 1 rows, and when the window has no volume at all.

-- why: the whole CMF series, shared by api.cmf and the snapshot
create or replace function market.cmf_series(p_coin_id int, p_period int)
returns table (i int, date date, value double precision)
language sql stable
as $$
  select s.i, s.date, case when s.i >= p_period - 1 and s.volume > 0 then s.flow / s.volume end
  from (
    select f.i, f.date, sum(f.flow) over w as flow, sum(f.volume_f) over w as volume
    from (
      select b.i, b.date, b.volume_f,
        case when b.high_f = b.low_f then 0
             else ((b.close_f - b.low_f) - (b.high_f - b.close_f)) / (b.high_f - b.low_f) end * b.volume_f as flow
      from market.indicator_bars(p_coin_id) b
      offset 0 -- the money flow once per row, not once per row of every frame
    ) f
    window w as (order by f.i rows between p_period - 1 preceding and current row)
  ) s
  order by s.i
$$;
comment on function market.cmf_series(int, int) is 'Chaikin Money Flow(period) over a coin''s whole daily history: sum of money-flow volume / sum of volume over the last `period` days, money-flow volume = ((close - low) - (high - close)) / (high - low) * USD volume (0 when high = low). Between -1 and 1. Null for the first period - 1 rows and when the window has no volume.';

create or replace function api.cmf(
  p_slug text, p_period int default 20, p_start date default null, p_end date default null, p_limit int default null
) returns table (date date, value double precision)
language plpgsql stable
as $$
declare
  v_coin int := market.coin_id(p_slug);
begin
  perform market.check_indicator_args(p_period, 1, p_limit);
  return query
  select w.date, w.value from (
    select s.date, s.value from market.cmf_series(v_coin, p_period) s
    where market.indicator_window(s.date, p_start, p_end)
    order by s.date desc limit p_limit
  ) w order by w.date;
end;
$$;
comment on function api.cmf(text, int, date, date, int) is 'Daily Chaikin Money Flow of the coin with this slug (the endpoint uses 20 days): sum over the last p_period days of ((close - low) - (high - close)) / (high - low) * volume (0 when high = low), divided by the sum of volume (USD). Between -1 and 1; positive = buying pressure. Rows (date, value), oldest first, cut to [p_start, p_end] and the most recent p_limit rows. Warm-up: the first p_period - 1 rows are null; null too when the window has no volume. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/indicators/cmf.';
