-- Price and volume volatility: not in TA-Lib, defined here. The sample standard deviation (n - 1)
-- of the last `period` daily log changes, in percent, not annualized:
--   price:  r_t = ln(close_t / close_t-1)      value_t = 100 * stddev_samp(r_t-period+1 .. r_t)
--   volume: r_t = ln(volume_t / volume_t-1)    likewise
-- A change is undefined when either value is 0; a window holding one is null.

-- why: one definition for both volatilities, shared by their api functions and the snapshot
create or replace function market.log_change_volatility_series(p_coin_id int, p_period int, p_of text)
returns table (i int, date date, value double precision)
language sql stable
as $$
  select s.i, s.date, case when s.i >= p_period and s.n = p_period then 100 * s.deviation end
  from (
    select r.i, r.date, count(r.change) over w as n, stddev_samp(r.change) over w as deviation
    from (
      select x.i, x.date,
        case when x.value > 0 and x.previous > 0 then ln(x.value / x.previous) end as change
      from (
        select b.i, b.date,
          case p_of when 'price' then b.close_f else b.volume_f end as value,
          lag(case p_of when 'price' then b.close_f else b.volume_f end) over (order by b.i) as previous
        from market.indicator_bars(p_coin_id) b
      ) x
      offset 0 -- the logarithms once per row, not once per row of every frame
    ) r
    window w as (order by r.i rows between p_period - 1 preceding and current row)
  ) s
  order by s.i
$$;
comment on function market.log_change_volatility_series(int, int, text) is 'Volatility of a coin''s daily close (p_of = ''price'') or USD volume (''volume''): 100 * sample standard deviation (n - 1) of the last `period` daily log changes ln(x_t / x_t-1), in percent per day, not annualized. Null for the first `period` rows and while the window holds a change from or to 0.';

create or replace function api.price_volatility(
  p_slug text, p_period int default 7, p_start date default null, p_end date default null, p_limit int default null
) returns table (date date, value double precision)
language plpgsql stable
as $$
declare
  v_coin int := market.coin_id(p_slug);
begin
  perform market.check_indicator_args(p_period, 2, p_limit);
  return query
  select w.date, w.value from (
    select s.date, s.value from market.log_change_volatility_series(v_coin, p_period, 'price') s
    where market.indicator_window(s.date, p_start, p_end)
    order by s.date desc limit p_limit
  ) w order by w.date;
end;
$$;
comment on function api.price_volatility(text, int, date, date, int) is 'Daily price volatility of the coin with this slug: 100 * sample standard deviation (n - 1) of the last p_period daily log returns ln(close_t / close_t-1), in percent per day, not annualized (multiply by sqrt(365) for an annual figure). Rows (date, value), oldest first, cut to [p_start, p_end] and the most recent p_limit rows. Warm-up: the first p_period rows are null. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/indicators/price-volatility.';

create or replace function api.volume_volatility(
  p_slug text, p_period int default 7, p_start date default null, p_end date default null, p_limit int default null
) returns table (date date, value double precision)
language plpgsql stable
as $$
declare
  v_coin int := market.coin_id(p_slug);
begin
  perform market.check_indicator_args(p_period, 2, p_limit);
  return query
  select w.date, w.value from (
    select s.date, s.value from market.log_change_volatility_series(v_coin, p_period, 'volume') s
    where market.indicator_window(s.date, p_start, p_end)
    order by s.date desc limit p_limit
  ) w order by w.date;
end;
$$;
comment on function api.volume_volatility(text, int, date, date, int) is 'Daily volume volatility of the coin with this slug: 100 * sample standard deviation (n - 1) of the last p_period daily log changes of USD volume ln(volume_t / volume_t-1), in percent, not annualized; null while the window holds a day without volume. Rows (date, value), oldest first, cut to [p_start, p_end] and the most recent p_limit rows. Warm-up: the first p_period rows are null. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/indicators/volume-volatility.';
