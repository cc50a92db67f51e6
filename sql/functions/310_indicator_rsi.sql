-- RSI and Stochastic RSI, as TA-Lib's RSI and STOCHRSI.

-- why: the whole RSI series of a coin, shared by api.rsi, api.stoch_rsi and the snapshot
create or replace function market.rsi_series(p_coin_id int, p_period int)
returns table (i int, date date, value double precision)
language sql stable
as $$
  select s.i, s.date,
    case when s.avg_gain is not null then
      case when market.ta_is_zero(s.avg_gain + s.avg_loss) then 0
           else 100 * (s.avg_gain / (s.avg_gain + s.avg_loss)) end
    end
  from (
    select c.i, c.date,
      market.wilder_mean(case when c.change > 0 then c.change when c.change is not null then 0 end, p_period) over w as avg_gain,
      market.wilder_mean(case when c.change < 0 then -c.change when c.change is not null then 0 end, p_period) over w as avg_loss
    from (
      select b.i, b.date, b.close_f - lag(b.close_f) over (order by b.i) as change
      from market.indicator_bars(p_coin_id) b
    ) c
    window w as (order by c.i rows between unbounded preceding and current row)
  ) s
  order by s.i
$$;
comment on function market.rsi_series(int, int) is 'RSI(period) of a coin over its whole daily history (TA-Lib RSI): 100 * avg_gain / (avg_gain + avg_loss) with Wilder-smoothed close-to-close gains and losses, seeded with their plain mean over the first `period` changes; 0 when both averages are (TA-Lib''s) zero. Null for the first `period` rows.';

create or replace function api.rsi(
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
    select s.date, s.value from market.rsi_series(v_coin, p_period) s
    where market.indicator_window(s.date, p_start, p_end)
    order by s.date desc limit p_limit
  ) w order by w.date;
end;
$$;
comment on function api.rsi(text, int, date, date, int) is 'Daily RSI (TA-Lib RSI, Wilder smoothing) of the coin with this slug: rows (date, value 0..100), oldest first. Computed from the coin''s first daily bar, then cut to [p_start, p_end] (inclusive dates, null = open) and to the most recent p_limit rows of that window (null = all). The first p_period days of history are warm-up rows with a null value. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/indicators/rsi.';

-- why: the whole Stochastic RSI series, shared by api.stoch_rsi and the snapshot
create or replace function market.stoch_rsi_series(p_coin_id int, p_period int)
returns table (i int, date date, k double precision, d double precision)
language sql stable
as $$
  select s.i, s.date, case when s.d is not null then s.k end, s.d
  from (
    select f.i, f.date, f.k,
      case when count(f.k) over wd = 3 then avg(f.k) over wd end as d
    from (
      select r.i, r.date,
        case when r.n = p_period then
          case when (r.highest - r.lowest) / 100.0 <> 0 then (r.value - r.lowest) / ((r.highest - r.lowest) / 100.0) else 0 end
        end as k
      from (
        select x.i, x.date, x.value,
          count(x.value) over wk as n, min(x.value) over wk as lowest, max(x.value) over wk as highest
        from market.rsi_series(p_coin_id, p_period) x
        window wk as (order by x.i rows between p_period - 1 preceding and current row)
      ) r
    ) f
    window wd as (order by f.i rows between 2 preceding and current row)
  ) s
  order by s.i
$$;
comment on function market.stoch_rsi_series(int, int) is 'Stochastic RSI of a coin over its whole daily history, as TA-Lib STOCHRSI(period, fastK = period, fastD = 3, SMA): k = 100 * (RSI - lowest RSI) / (highest RSI - lowest RSI) over the last `period` RSI values (0 when they are all equal), d = mean of the last 3 k. Both null for the first 2 * period + 1 rows.';

create or replace function api.stoch_rsi(
  p_slug text, p_period int default 14, p_start date default null, p_end date default null, p_limit int default null
) returns table (date date, k double precision, d double precision)
language plpgsql stable
as $$
declare
  v_coin int := market.coin_id(p_slug);
begin
  perform market.check_indicator_args(p_period, 2, p_limit);
  return query
  select w.date, w.k, w.d from (
    select s.date, s.k, s.d from market.stoch_rsi_series(v_coin, p_period) s
    where market.indicator_window(s.date, p_start, p_end)
    order by s.date desc limit p_limit
  ) w order by w.date;
end;
$$;
comment on function api.stoch_rsi(text, int, date, date, int) is 'Daily Stochastic RSI (TA-Lib STOCHRSI with fastK period = p_period, fastD = 3-day SMA) of the coin with this slug: rows (date, k, d), both 0..100, oldest first. Computed from the first daily bar (RSI depends on it), then cut to [p_start, p_end] and the most recent p_limit rows. Warm-up: the first 2 * p_period + 1 rows are null. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/indicators/stoch-rsi.';
