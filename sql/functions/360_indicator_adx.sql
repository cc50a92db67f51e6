-- Average Directional Index with +DI and -DI, as TA-Lib's ADX, PLUS_DI and MINUS_DI.

-- why: the whole ADX series, shared by api.adx and the snapshot
create or replace function market.adx_series(p_coin_id int, p_period int)
returns table (i int, date date, adx double precision, plus_di double precision, minus_di double precision)
language sql stable
as $$
  select x.i, x.date,
    market.wilder_mean(x.dx, p_period) over (order by x.i rows between unbounded preceding and current row),
    x.plus_di, x.minus_di
  from (
    select d.i, d.date, d.plus_di, d.minus_di,
      -- NaN: TR or the DI sum is (TA-Lib's) zero: ADX keeps its value (counts as 0 while seeding)
      case when d.plus_di is null then null
           when market.ta_is_zero(d.tr) or market.ta_is_zero(d.plus_di + d.minus_di) then 'NaN'::double precision
           else 100 * (abs(d.minus_di - d.plus_di) / (d.minus_di + d.plus_di)) end as dx
    from (
      select m.i, m.date, m.tr,
        case when m.tr is not null then case when market.ta_is_zero(m.tr) then 0 else 100 * (m.plus_dm / m.tr) end end as plus_di,
        case when m.tr is not null then case when market.ta_is_zero(m.tr) then 0 else 100 * (m.minus_dm / m.tr) end end as minus_di
      from (
        select r.i, r.date,
          market.wilder_sum(r.plus_dm, p_period) over w as plus_dm,
          market.wilder_sum(r.minus_dm, p_period) over w as minus_dm,
          market.wilder_sum(r.tr, p_period) over w as tr
        from (
          select c.i, c.date,
            case when c.up is null then null when c.up > 0 and c.up > c.down then c.up else 0 end as plus_dm,
            case when c.up is null then null when c.down > 0 and c.up < c.down then c.down else 0 end as minus_dm,
            market.true_range(c.high_f, c.low_f, c.prev_close) as tr
          from (
            select b.i, b.date, b.high_f, b.low_f,
              b.high_f - lag(b.high_f) over o as up, lag(b.low_f) over o - b.low_f as down,
              lag(b.close_f) over o as prev_close
            from market.indicator_bars(p_coin_id) b
            window o as (order by b.i)
          ) c
        ) r
        window w as (order by r.i rows between unbounded preceding and current row)
      ) m
    ) d
  ) x
  order by x.i
$$;
comment on function market.adx_series(int, int) is 'ADX(period) with +DI and -DI over a coin''s whole daily history (TA-Lib ADX, PLUS_DI, MINUS_DI): +DM, -DM and true range smoothed by Wilder''s running sum (market.wilder_sum), DI = 100 * DM / TR, DX = 100 * |+DI - -DI| / (+DI + -DI), ADX = Wilder mean of DX. DIs null for the first `period` rows, ADX for the first 2 * period - 1.';

create or replace function api.adx(
  p_slug text, p_period int default 14, p_start date default null, p_end date default null, p_limit int default null
) returns table (date date, adx double precision, plus_di double precision, minus_di double precision)
language plpgsql stable
as $$
declare
  v_coin int := market.coin_id(p_slug);
begin
  perform market.check_indicator_args(p_period, 2, p_limit);
  return query
  select w.date, w.adx, w.plus_di, w.minus_di from (
    select s.date, s.adx, s.plus_di, s.minus_di from market.adx_series(v_coin, p_period) s
    where market.indicator_window(s.date, p_start, p_end)
    order by s.date desc limit p_limit
  ) w order by w.date;
end;
$$;
comment on function api.adx(text, int, date, date, int) is 'Daily Average Directional Index with the directional indicators (TA-Lib ADX, PLUS_DI, MINUS_DI; the endpoint uses 14 days) of the coin with this slug: rows (date, adx, plus_di, minus_di), all 0..100, oldest first. Computed from the first daily bar (Wilder smoothing depends on it), then cut to [p_start, p_end] and the most recent p_limit rows. Warm-up: plus_di and minus_di are null for the first p_period rows, adx for the first 2 * p_period - 1. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/indicators/adx.';
