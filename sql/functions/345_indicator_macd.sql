-- MACD 12/26/9, as TA-Lib's MACD, on the price scale (numeric).

-- why: the whole MACD series, shared by api.macd and the snapshot
create or replace function market.macd_series(p_coin_id int)
returns table (i int, date date, macd numeric, signal numeric, histogram numeric)
language sql stable
as $$
  select s.i, s.date,
    case when s.signal is not null then trim_scale(s.macd) end,
    trim_scale(s.signal),
    trim_scale(s.macd - s.signal)
  from (
    select m.i, m.date, m.macd,
      market.ema(m.macd, 9, 0) over (order by m.i rows between unbounded preceding and current row) as signal
    from (
      -- TA-Lib seeds the fast EMA late, with the mean of closes 14..25, so that both EMAs start
      -- on the 26th bar: skip = 26 - 12
      select b.i, b.date, market.ema(b.close, 12, 14) over w - market.ema(b.close, 26, 0) over w as macd
      from market.indicator_bars(p_coin_id) b
      window w as (order by b.i rows between unbounded preceding and current row)
    ) m
  ) s
  order by s.i
$$;
comment on function market.macd_series(int) is 'MACD(12, 26, 9) over a coin''s whole daily history (TA-Lib MACD): macd = EMA12 - EMA26 of the close, signal = EMA9 of macd, histogram = macd - signal; EMAs seeded with an SMA as TA-Lib does (the 12-day one over closes 14..25, so that both start on day 26), numeric, every step rounded to 18 decimals. Null for the first 33 rows.';

create or replace function api.macd(p_slug text, p_start date default null, p_end date default null, p_limit int default null)
returns table (date date, macd numeric, signal numeric, histogram numeric)
language plpgsql stable
as $$
declare
  v_coin int := market.coin_id(p_slug);
begin
  perform market.check_indicator_args(2, 2, p_limit);
  return query
  select w.date, w.macd, w.signal, w.histogram from (
    select s.date, s.macd, s.signal, s.histogram from market.macd_series(v_coin) s
    where market.indicator_window(s.date, p_start, p_end)
    order by s.date desc limit p_limit
  ) w order by w.date;
end;
$$;
comment on function api.macd(text, date, date, int) is 'Daily MACD 12/26/9 (TA-Lib MACD with its EMA seeding) of the coin with this slug: rows (date, macd, signal, histogram) in numeric USD, oldest first. Computed from the first daily bar (EMAs depend on it), then cut to [p_start, p_end] and the most recent p_limit rows. Warm-up: the first 33 rows are null. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/indicators/macd.';
