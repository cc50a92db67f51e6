-- Simple moving average of the close, as TA-Lib's SMA, on the price scale (numeric).

-- why: the whole SMA series, shared by api.sma and the snapshot
create or replace function market.sma_series(p_coin_id int, p_period int)
returns table (i int, date date, value numeric)
language sql stable
as $$
  select s.i, s.date, case when s.i >= p_period - 1 then trim_scale(round(s.mean, 18)) end
  from (
    select b.i, b.date, avg(b.close) over (order by b.i rows between p_period - 1 preceding and current row) as mean
    from market.indicator_bars(p_coin_id) b
  ) s
  order by s.i
$$;
comment on function market.sma_series(int, int) is 'SMA(period) of the daily close over a coin''s whole history (TA-Lib SMA), numeric, rounded to 18 decimals with trailing zeros trimmed. Null for the first period - 1 rows.';

create or replace function api.sma(
  p_slug text, p_period int default 50, p_start date default null, p_end date default null, p_limit int default null
) returns table (date date, value numeric)
language plpgsql stable
as $$
declare
  v_coin int := market.coin_id(p_slug);
begin
  perform market.check_indicator_args(p_period, 1, p_limit);
  return query
  select w.date, w.value from (
    select s.date, s.value from market.sma_series(v_coin, p_period) s
    where market.indicator_window(s.date, p_start, p_end)
    order by s.date desc limit p_limit
  ) w order by w.date;
end;
$$;
comment on function api.sma(text, int, date, date, int) is 'Daily simple moving average of the close (TA-Lib SMA) of the coin with this slug: rows (date, value numeric USD, 18 decimals at most), oldest first, cut to [p_start, p_end] (inclusive, null = open) and the most recent p_limit rows (null = all). Warm-up: the first p_period - 1 rows are null. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/indicators/sma.';
