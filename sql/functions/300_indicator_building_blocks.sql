-- Building blocks of the technical indicators (sql/functions/310..): the daily bars an indicator
-- reads, typical price and true range, and the running smoothers as custom aggregates. Used as
-- window functions over `rows between unbounded preceding and current row`, an aggregate is
-- stepped once per row and finalised once per row: O(n) over the whole history, no recursive CTE.
-- The recursions follow TA-Lib (ta_EMA.c, ta_RSI.c, ta_ADX.c, ta_PLUS_DI.c) step for step.

-- why: every indicator reads the same series: the coin's whole daily history, numbered from its
-- first bar, with the float8 copies the oscillators compute on converted once per row (a numeric
-- to float8 cast is costly, and a window frame would repeat it for every row of every frame).
-- PL/pgSQL, not an inlinable SQL function: inlined into a caller, the real-time daily aggregate
-- takes the planner about a second on a 3 000-day coin; planned here, milliseconds.
create or replace function market.indicator_bars(p_coin_id int)
returns table (
  i int, date date, open numeric, high numeric, low numeric, close numeric, volume numeric,
  high_f double precision, low_f double precision, close_f double precision, volume_f double precision
)
language plpgsql stable
as $$
begin
  return query
  select (row_number() over (order by b.time))::int - 1, (b.time at time zone 'UTC')::date,
    b.open, b.high, b.low, b.close, b.volume,
    b.high::double precision, b.low::double precision, b.close::double precision, b.volume::double precision
  from market.coin_bars_1d b
  where b.coin_id = p_coin_id
  order by b.time;
end;
$$;
comment on function market.indicator_bars(int) is 'A coin''s daily bars (market.coin_bars_1d, today''s live bucket included) from its first day, numbered i = 0, 1, ..., with float8 copies of high, low, close and volume: the input of every indicator.';

-- why: the request window of every series function: start/end bounds, then the most recent `limit` rows
create or replace function market.indicator_window(p_date date, p_start date, p_end date) returns boolean
language sql immutable parallel safe
as $$
  select (p_start is null or p_date >= p_start) and (p_end is null or p_date <= p_end)
$$;
comment on function market.indicator_window(date, date, date) is 'True when a daily row lies within the inclusive [start, end] bounds (a null bound is open).';

-- why: argument checks shared by the api.* indicator functions, raised as the API's 422 code
create or replace function market.check_indicator_args(p_period int, p_min_period int, p_limit int) returns void
language plpgsql immutable
as $$
begin
  if p_period is null or p_period < p_min_period or p_period > 100000 then
    raise exception 'period must be an integer from % to 100000.', p_min_period using errcode = 'MD422', column = 'period';
  end if;
  if p_limit is not null and p_limit < 1 then
    raise exception 'limit must be at least 1.' using errcode = 'MD422', column = 'limit';
  end if;
end;
$$;
comment on function market.check_indicator_args(int, int, int) is 'Raises MD422 (HTTP 422) for a period below the indicator''s minimum or a limit below 1.';

-- why: CCI, MFI and VWAP weigh the typical price
create or replace function market.typical_price(p_high double precision, p_low double precision, p_close double precision)
returns double precision
language sql immutable parallel safe
as $$ select (p_high + p_low + p_close) / 3.0 $$;
create or replace function market.typical_price(p_high numeric, p_low numeric, p_close numeric) returns numeric
language sql immutable parallel safe
as $$ select (p_high + p_low + p_close) / 3 $$;
comment on function market.typical_price(double precision, double precision, double precision) is 'Typical price (high + low + close) / 3.';
comment on function market.typical_price(numeric, numeric, numeric) is 'Typical price (high + low + close) / 3, in numeric (price-scale indicators).';

-- why: ADX and the directional indicators divide by the smoothed true range
create or replace function market.true_range(p_high double precision, p_low double precision, p_prev_close double precision)
returns double precision
language sql immutable parallel safe
as $$
  select case when p_prev_close is not null
    then greatest(p_high - p_low, abs(p_high - p_prev_close), abs(p_low - p_prev_close)) end
$$;
comment on function market.true_range(double precision, double precision, double precision) is 'True range: the largest of high - low, |high - previous close| and |low - previous close|; null on the first bar (no previous close).';

-- why: TA-Lib treats |x| < 1e-14 as zero before dividing (TA_IS_ZERO); so do we, to give its values
create or replace function market.ta_is_zero(p_value double precision) returns boolean
language sql immutable parallel safe
as $$ select p_value > -1e-14 and p_value < 1e-14 $$;
comment on function market.ta_is_zero(double precision) is 'TA-Lib''s TA_IS_ZERO: true when |x| < 1e-14.';

-- EMA with TA-Lib's seeding. State {n, value, ready_at, k}: n counts the non-null inputs; the first
-- `skip` are ignored (MACD's fast EMA starts late so that both of its EMAs start on the same bar),
-- the next `period` are summed and their mean is the first EMA; after that
-- value = (x - value) * k + value with k = 2 / (period + 1), rounded to 18 decimals (the
-- price scale of every numeric indicator: enough for coins priced far below a cent, and bounded).
create or replace function market.ema_step(p_state numeric[], p_value numeric, p_period int, p_skip int)
returns numeric[]
language plpgsql immutable strict parallel safe
as $$
declare
  v_n int := p_state[1] + 1;
  v_ready int := p_skip + p_period;
begin
  if v_n <= p_skip then
    return array[v_n, 0, v_ready, 0];
  elsif v_n < v_ready then
    return array[v_n, p_state[2] + p_value, v_ready, 0];
  elsif v_n = v_ready then
    return array[v_n, round((p_state[2] + p_value) / p_period, 18), v_ready, round(2::numeric / (p_period + 1), 20)];
  end if;
  return array[v_n, round((p_value - p_state[2]) * p_state[4] + p_state[2], 18), v_ready, p_state[4]];
end;
$$;
-- PL/pgSQL, not SQL: a final function runs once per row of a running window and is never inlined,
-- and a SQL-language one starts the SQL executor on every call (RSI over 738 days: 17 → 11 ms)
create or replace function market.ema_final(p_state numeric[]) returns numeric
language plpgsql immutable parallel safe
as $$ begin return case when p_state[1] >= p_state[3] and p_state[3] > 0 then p_state[2] end; end $$;
create or replace aggregate market.ema(numeric, int, int) (
  sfunc = market.ema_step, stype = numeric[], finalfunc = market.ema_final, initcond = '{0,0,0,0}'
);
comment on aggregate market.ema(numeric, int, int) is 'Exponential moving average (value, period, skip) as TA-Lib seeds it: the first `skip` non-null values are ignored, the mean of the next `period` is the first EMA, then ema = (x - ema) * 2/(period+1) + ema, rounded to 18 decimals each step. Null until period + skip values. Use as a window function over rows unbounded preceding.';

-- Wilder's smoothing in the mean form (RSI's average gain and loss, ADX's average DX). State
-- {n, value, period}: the mean of the first `period` values, then value = (value * (period-1) + x) / period.
-- NaN marks a step without a value (ADX when the directional movement is undefined): it counts as 0
-- while seeding and leaves the average unchanged afterwards, as in ta_ADX.c. Nulls are skipped.
create or replace function market.wilder_mean_step(p_state double precision[], p_value double precision, p_period int)
returns double precision[]
language plpgsql immutable strict parallel safe
as $$
declare
  v_n int := p_state[1] + 1;
  v_x double precision := p_value;
begin
  if v_x = 'NaN' then
    if v_n > p_period then
      return array[v_n, p_state[2], p_period];
    end if;
    v_x := 0;
  end if;
  if v_n < p_period then
    return array[v_n, p_state[2] + v_x, p_period];
  elsif v_n = p_period then
    return array[v_n, (p_state[2] + v_x) / p_period, p_period];
  end if;
  return array[v_n, (p_state[2] * (p_period - 1) + v_x) / p_period, p_period];
end;
$$;
-- PL/pgSQL for the reason market.ema_final is
create or replace function market.wilder_final(p_state double precision[]) returns double precision
language plpgsql immutable parallel safe
as $$ begin return case when p_state[1] >= p_state[3] and p_state[3] > 0 then p_state[2] end; end $$;
create or replace aggregate market.wilder_mean(double precision, int) (
  sfunc = market.wilder_mean_step, stype = double precision[], finalfunc = market.wilder_final, initcond = '{0,0,0}'
);
comment on aggregate market.wilder_mean(double precision, int) is 'Wilder''s smoothing, mean form (value, period), as TA-Lib''s RSI and ADX: mean of the first `period` values, then (prev * (period-1) + x) / period. Null until `period` values; NaN = a step without a value (0 while seeding, no change after). Use as a window function over rows unbounded preceding.';

-- Wilder's smoothing in the running-sum form of TA-Lib's ADX, PLUS_DI and MINUS_DI: the sum of the
-- first period-1 values, then value = value - value/period + x (first output at the period-th value).
create or replace function market.wilder_sum_step(p_state double precision[], p_value double precision, p_period int)
returns double precision[]
language plpgsql immutable strict parallel safe
as $$
declare
  v_n int := p_state[1] + 1;
begin
  if v_n < p_period then
    return array[v_n, p_state[2] + p_value, p_period];
  end if;
  return array[v_n, p_state[2] - p_state[2] / p_period + p_value, p_period];
end;
$$;
create or replace aggregate market.wilder_sum(double precision, int) (
  sfunc = market.wilder_sum_step, stype = double precision[], finalfunc = market.wilder_final, initcond = '{0,0,0}'
);
comment on aggregate market.wilder_sum(double precision, int) is 'Wilder''s smoothing, running-sum form (value, period), as TA-Lib''s ADX, PLUS_DI and MINUS_DI smooth +DM, -DM and true range: sum of the first period-1 values, then prev - prev/period + x. Null until `period` values. Use as a window function over rows unbounded preceding.';

-- Mean absolute deviation around the mean of the frame (CCI). The frame is collected into an array,
-- so use it over a bounded frame (rows between period-1 preceding and current row).
create or replace function market.mean_deviation_final(p_values double precision[]) returns double precision
language plpgsql immutable parallel safe
as $$
declare
  v_sum double precision := 0;
  v_mean double precision;
  v_x double precision;
  v_n int := cardinality(p_values);
begin
  if v_n is null or v_n = 0 then
    return null;
  end if;
  foreach v_x in array p_values loop
    v_sum := v_sum + v_x;
  end loop;
  v_mean := v_sum / v_n;
  v_sum := 0;
  foreach v_x in array p_values loop
    v_sum := v_sum + abs(v_x - v_mean);
  end loop;
  return v_sum / v_n;
end;
$$;
create or replace aggregate market.mean_deviation(double precision) (
  sfunc = array_append, stype = double precision[], finalfunc = market.mean_deviation_final
);
comment on aggregate market.mean_deviation(double precision) is 'Mean absolute deviation of the values (none may be null) from their mean: sum |x - mean| / n. Collects its frame: use over a bounded frame.';
