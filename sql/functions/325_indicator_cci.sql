-- Commodity Channel Index, as TA-Lib's CCI.

-- why: the whole CCI series, shared by api.cci and the snapshot
create or replace function market.cci_series(p_coin_id int, p_period int)
returns table (i int, date date, value double precision)
language sql stable
as $$
  select s.i, s.date,
    case when s.i >= p_period - 1 then
      case when s.tp - s.mean <> 0 and s.deviation <> 0 then (s.tp - s.mean) / (0.015 * s.deviation) else 0 end
    end
  from (
    select t.i, t.date, t.tp, avg(t.tp) over w as mean, market.mean_deviation(t.tp) over w as deviation
    from (
      select b.i, b.date, market.typical_price(b.high_f, b.low_f, b.close_f) as tp
      from market.indicator_bars(p_coin_id) b
      offset 0 -- evaluate the typical price once per row, not once per row of every frame
    ) t
    window w as (order by t.i rows between p_period - 1 preceding and current row)
  ) s
  order by s.i
$$;
comment on function market.cci_series(int, int) is 'CCI(period) over a coin''s whole daily history (TA-Lib CCI): (tp - SMA(tp)) / (0.015 * mean absolute deviation of tp from that SMA), tp = typical price (high + low + close) / 3, over the last `period` days; 0 when the numerator or the deviation is 0. Null for the first period - 1 rows.';

create or replace function api.cci(
  p_slug text, p_period int default 20, p_start date default null, p_end date default null, p_limit int default null
) returns table (date date, value double precision)
language plpgsql stable
as $$
declare
  v_coin int := market.coin_id(p_slug);
begin
  perform market.check_indicator_args(p_period, 2, p_limit);
  return query
  select w.date, w.value from (
    select s.date, s.value from market.cci_series(v_coin, p_period) s
    where market.indicator_window(s.date, p_start, p_end)
    order by s.date desc limit p_limit
  ) w order by w.date;
end;
$$;
comment on function api.cci(text, int, date, date, int) is 'Daily Commodity Channel Index (TA-Lib CCI, mean absolute deviation, constant 0.015) of the coin with this slug: rows (date, value), oldest first, cut to [p_start, p_end] and the most recent p_limit rows. Readings beyond +/-100 mark strong trends. Warm-up: the first p_period - 1 rows are null. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/indicators/cci.';
