-- Money Flow Index, as TA-Lib's MFI.

-- why: the whole MFI series, shared by api.mfi and the snapshot
create or replace function market.mfi_series(p_coin_id int, p_period int)
returns table (i int, date date, value double precision)
language sql stable
as $$
  select s.i, s.date,
    case when s.i >= p_period then
      case when s.positive + s.negative < 1 then 0 else 100 * (s.positive / (s.positive + s.negative)) end
    end
  from (
    select f.i, f.date, sum(f.positive) over w as positive, sum(f.negative) over w as negative
    from (
      select t.i, t.date,
        case when t.tp > t.prev_tp then t.tp * t.volume_f else 0 end as positive,
        case when t.tp < t.prev_tp then t.tp * t.volume_f else 0 end as negative
      from (
        select b.i, b.date, b.volume_f, market.typical_price(b.high_f, b.low_f, b.close_f) as tp,
          lag(market.typical_price(b.high_f, b.low_f, b.close_f)) over (order by b.i) as prev_tp
        from market.indicator_bars(p_coin_id) b
      ) t
      offset 0 -- the flows once per row, not once per row of every frame
    ) f
    window w as (order by f.i rows between p_period - 1 preceding and current row)
  ) s
  order by s.i
$$;
comment on function market.mfi_series(int, int) is 'MFI(period) over a coin''s whole daily history (TA-Lib MFI): 100 * positive / (positive + negative) money flow over the last `period` days, a day''s flow being typical price * volume (USD volume), positive when the typical price rose from the day before, negative when it fell; 0 when the two sum to less than 1 (TA-Lib). Null for the first `period` rows.';

create or replace function api.mfi(
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
    select s.date, s.value from market.mfi_series(v_coin, p_period) s
    where market.indicator_window(s.date, p_start, p_end)
    order by s.date desc limit p_limit
  ) w order by w.date;
end;
$$;
comment on function api.mfi(text, int, date, date, int) is 'Daily Money Flow Index (TA-Lib MFI; volume = the day''s USD volume) of the coin with this slug: rows (date, value 0..100), oldest first, cut to [p_start, p_end] and the most recent p_limit rows. Above 80 overbought, below 20 oversold. Warm-up: the first p_period rows are null. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/indicators/mfi.';
