-- On-balance volume, as TA-Lib's OBV, in exact numeric.

-- why: the whole OBV series, shared by api.obv and the snapshot
create or replace function market.obv_series(p_coin_id int)
returns table (i int, date date, value numeric)
language sql stable
as $$
  select s.i, s.date,
    sum(case when s.i = 0 then s.volume when s.close > s.previous then s.volume when s.close < s.previous then -s.volume else 0 end)
      over (order by s.i rows between unbounded preceding and current row)
  from (
    select b.i, b.date, b.close, b.volume, lag(b.close) over (order by b.i) as previous
    from market.indicator_bars(p_coin_id) b
  ) s
  order by s.i
$$;
comment on function market.obv_series(int) is 'On-balance volume over a coin''s whole daily history (TA-Lib OBV): the first day''s volume, then plus the day''s USD volume when the close rose, minus it when it fell. Exact numeric; no warm-up.';

create or replace function api.obv(p_slug text, p_start date default null, p_end date default null, p_limit int default null)
returns table (date date, value numeric)
language plpgsql stable
as $$
declare
  v_coin int := market.coin_id(p_slug);
begin
  perform market.check_indicator_args(2, 2, p_limit);
  return query
  select w.date, w.value from (
    select s.date, s.value from market.obv_series(v_coin) s
    where market.indicator_window(s.date, p_start, p_end)
    order by s.date desc limit p_limit
  ) w order by w.date;
end;
$$;
comment on function api.obv(text, date, date, int) is 'Daily on-balance volume (TA-Lib OBV; volume in USD) of the coin with this slug: rows (date, value numeric), oldest first. Cumulative from the coin''s first daily bar (starting at that day''s volume), then cut to [p_start, p_end] and the most recent p_limit rows. No warm-up. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/indicators/obv.';
