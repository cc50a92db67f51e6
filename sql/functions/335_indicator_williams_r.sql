-- Williams %R, as TA-Lib's WILLR.

-- why: the whole Williams %R series, shared by api.williams_r and the snapshot
create or replace function market.williams_r_series(p_coin_id int, p_period int)
returns table (i int, date date, value double precision)
language sql stable
as $$
  select s.i, s.date,
    case when s.i >= p_period - 1 then
      case when (s.highest - s.lowest) / (-100.0) <> 0 then (s.highest - s.close_f) / ((s.highest - s.lowest) / (-100.0)) else 0 end
    end
  from (
    select b.i, b.date, b.close_f, max(b.high_f) over w as highest, min(b.low_f) over w as lowest
    from market.indicator_bars(p_coin_id) b
    window w as (order by b.i rows between p_period - 1 preceding and current row)
  ) s
  order by s.i
$$;
comment on function market.williams_r_series(int, int) is 'Williams %R(period) over a coin''s whole daily history (TA-Lib WILLR): -100 * (highest high - close) / (highest high - lowest low) over the last `period` days; 0 when the range is 0. Null for the first period - 1 rows.';

create or replace function api.williams_r(
  p_slug text, p_period int default 14, p_start date default null, p_end date default null, p_limit int default null
) returns table (date date, value double precision)
language plpgsql stable
as $$
declare
  v_coin int := market.coin_id(p_slug);
begin
  perform market.check_indicator_args(p_period, 2, p_limit);
  return query
  select w.date, w.value from (
    select s.date, s.value from market.williams_r_series(v_coin, p_period) s
    where market.indicator_window(s.date, p_start, p_end)
    order by s.date desc limit p_limit
  ) w order by w.date;
end;
$$;
comment on function api.williams_r(text, int, date, date, int) is 'Daily Williams %R (TA-Lib WILLR) of the coin with this slug: rows (date, value -100..0), oldest first, cut to [p_start, p_end] and the most recent p_limit rows. Above -20 overbought, below -80 oversold. Warm-up: the first p_period - 1 rows are null. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/indicators/williams-r.';
