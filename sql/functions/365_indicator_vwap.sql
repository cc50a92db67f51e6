-- Rolling VWAP: not in TA-Lib, defined here. Over the last `period` days,
--   vwap_t = sum(typical price * volume) / sum(volume),  typical price = (high + low + close) / 3
-- with the day's USD volume as the weight; numeric (price scale), rounded to 18 decimals.
-- Null for the first period - 1 rows, and when the window has no volume at all.

-- why: the whole VWAP series, shared by api.vwap and the snapshot
create or replace function market.vwap_series(p_coin_id int, p_period int)
returns table (i int, date date, value numeric)
language sql stable
as $$
  select s.i, s.date, case when s.i >= p_period - 1 and s.volume > 0 then trim_scale(round(s.weighted / s.volume, 18)) end
  from (
    select t.i, t.date, sum(t.tp * t.volume) over w as weighted, sum(t.volume) over w as volume
    from (
      select b.i, b.date, b.volume, market.typical_price(b.high, b.low, b.close) as tp
      from market.indicator_bars(p_coin_id) b
    ) t
    window w as (order by t.i rows between p_period - 1 preceding and current row)
  ) s
  order by s.i
$$;
comment on function market.vwap_series(int, int) is 'Rolling VWAP(period) over a coin''s whole daily history: sum(typical price * volume) / sum(volume) over the last `period` days, typical price = (high + low + close) / 3, USD volume as the weight. Numeric, rounded to 18 decimals. Null for the first period - 1 rows and when the window has no volume.';

create or replace function api.vwap(
  p_slug text, p_period int default 20, p_start date default null, p_end date default null, p_limit int default null
) returns table (date date, value numeric)
language plpgsql stable
as $$
declare
  v_coin int := market.coin_id(p_slug);
begin
  perform market.check_indicator_args(p_period, 1, p_limit);
  return query
  select w.date, w.value from (
    select s.date, s.value from market.vwap_series(v_coin, p_period) s
    where market.indicator_window(s.date, p_start, p_end)
    order by s.date desc limit p_limit
  ) w order by w.date;
end;
$$;
comment on function api.vwap(text, int, date, date, int) is 'Daily rolling volume-weighted average price of the coin with this slug (the endpoint uses 20 days): sum of typical price (high + low + close) / 3 times USD volume over the last p_period days divided by their volume; numeric USD, 18 decimals at most. Rows (date, value), oldest first, cut to [p_start, p_end] and the most recent p_limit rows. Warm-up: the first p_period - 1 rows are null; null too when the window has no volume. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/indicators/vwap.';
