-- The market data the DCA, profit/loss and loan calculators read: a coin's current price and its
-- daily closes on given dates. The arithmetic itself is in src/calculators (decimal.js); prices
-- leave as text so that they never pass through a float. PL/pgSQL: these read the real-time daily
-- aggregate, which is costly to plan when inlined.

-- why: the calculators' price on a date is the day's close, or the last close before it (a gap in
-- the history, or today's live bucket), and a date before the first close has no price
create or replace function market.closes_on(p_coin_id int, p_dates date[])
returns table (n bigint, date date, price numeric, price_date date)
language plpgsql stable
as $$
#variable_conflict use_column
declare
  v_last date := (select max(d) from unnest(p_dates) d);
begin
  if coalesce(cardinality(p_dates), 0) = 0 then
    return;
  end if;
  -- bars and requested dates in one ordered stream: each date takes the value of the last bar at
  -- or before it (the running count of bars numbers the group it belongs to), in one pass
  return query
  with events as (
    select (b.time at time zone 'UTC')::date as day, b.close, null::bigint as n
    from market.coin_bars(p_coin_id, 'daily', null, (v_last + 1)::timestamp at time zone 'UTC') b
    where b.close > 0 and b.time < (v_last + 1)::timestamp at time zone 'UTC'
    union all
    select d, null, i from unnest(p_dates) with ordinality as u (d, i)
  ), grouped as (
    select e.*, count(e.close) over (order by e.day, e.n nulls first) as grp from events e
  ), carried as (
    select g.n, g.day, first_value(g.close) over w as close, first_value(g.day) over w as close_day
    from grouped g
    window w as (partition by g.grp order by g.n nulls first)
  )
  select c.n, c.day, c.close, case when c.close is null then null else c.close_day end
  from carried c
  where c.n is not null
  order by c.n;
end;
$$;
comment on function market.closes_on(int, date[]) is
'For each date of p_dates (in their order, n = position from 1): the coin''s last positive daily close (UTC day) on or before it and the day of that close (price_date); '
'price and price_date null for a date before the coin''s first close.';

-- why: one place that names the coin, prices the dates and says in a 422 which parameter reaches before the history
create or replace function market.calculator_prices(p_slug text, p_dates date[], p_fields text[])
returns json
language plpgsql stable
as $$
declare
  v_coin market.coins;
  v_state market.coin_state;
  v_missing bigint;
  v_first date;
  v_closes json;
begin
  select * into v_coin from market.coins c where c.id = market.coin_id(p_slug);
  select * into v_state from market.coin_state s where s.coin_id = v_coin.id;
  if v_state.price is null then
    raise exception 'The coin % has no current price.', p_slug using errcode = 'MD422';
  end if;
  with closes as (select * from market.closes_on(v_coin.id, p_dates))
  select (select min(c.n) from closes c where c.price is null),
    (select coalesce(json_agg(json_build_object('date', market.iso_date(c.date), 'price', c.price::text, 'price_date', market.iso_date(c.price_date)) order by c.n), '[]')
     from closes c)
  into v_missing, v_closes;
  if v_missing is not null then
    select (min(b.time) at time zone 'UTC')::date into v_first from market.coin_bars_1d b where b.coin_id = v_coin.id and b.close > 0;
    raise exception '%: % is before the daily price history of %, which starts on %.',
      p_fields[least(v_missing, cardinality(p_fields))], p_dates[v_missing], p_slug, coalesce(market.iso_date(v_first), 'no day yet')
      using errcode = 'MD422';
  end if;
  return json_build_object(
    'coin', json_build_object('id', v_coin.id, 'slug', v_coin.slug, 'symbol', v_coin.symbol, 'name', v_coin.name),
    'current_price', v_state.price::text,
    'last_updated', market.iso_time(v_state.last_updated),
    'closes', v_closes);
end;
$$;
comment on function market.calculator_prices(text, date[], text[]) is
'JSON {coin {id, slug, symbol, name}, current_price (market.coin_state), last_updated, closes [{date, price, price_date}]} for the coin p_slug and the dates p_dates (prices as decimal strings; see market.closes_on). '
'Unknown slug: MD404. No current price: MD422. A date before the coin''s first daily close: MD422 naming the parameter, p_fields[i] for the i-th date (the last field for the rest).';

-- why: the dates must be real days of the history's era: after 2008-12-31 and not in the future
create or replace function market.check_calculator_date(p_field text, p_date date)
returns void
language plpgsql stable
as $$
begin
  if p_date is null or p_date <= date '2008-12-31' or p_date > (now() at time zone 'UTC')::date then
    raise exception '%: must be a date after 2008-12-31 and not in the future.', p_field using errcode = 'MD422', column = p_field;
  end if;
end;
$$;
comment on function market.check_calculator_date(text, date) is 'Raises MD422 naming p_field unless p_date is after 2008-12-31 and not after today (UTC).';

-- why: the DCA calculator's buy dates and their closes
create or replace function api.dca_prices(p_slug text, p_interval text, p_start date, p_end date default null)
returns json
language plpgsql stable
as $$
declare
  v_end date := coalesce(p_end, (now() at time zone 'UTC')::date);
  v_step interval := case p_interval
    when 'daily' then interval '1 day' when 'weekly' then interval '7 days' when 'monthly' then interval '1 month'
    when 'quarterly' then interval '3 months' when 'annually' then interval '1 year' when 'yearly' then interval '1 year' end;
  v_dates date[];
begin
  if v_step is null then
    raise exception 'interval: must be daily, weekly, monthly, quarterly or yearly.' using errcode = 'MD422', column = 'interval';
  end if;
  perform market.check_calculator_date('start', p_start);
  perform market.check_calculator_date('end', v_end);
  if v_end < p_start then
    raise exception 'end: must be on or after start.' using errcode = 'MD422';
  end if;
  -- k steps added to the start each time (not step after step), so Jan 31 + 1 month is Feb 29 and + 2 months Mar 31
  select array_agg(d order by k) into v_dates
  from generate_series(0, v_end - p_start) k, lateral (select (p_start + k * v_step)::date as d) x
  where x.d <= v_end;
  return market.calculator_prices(p_slug, v_dates, array['start']);
end;
$$;
comment on function api.dca_prices(text, text, date, date) is
'The buys of a DCA plan on the coin p_slug: dates start + k x interval (daily, weekly = 7 days, monthly, quarterly = 3 months, yearly/annually; months added to the start date, clamped to the month''s end) up to end (default today, UTC), '
'each priced at that day''s daily close or the last close before it. JSON of market.calculator_prices. Dates after 2008-12-31 and not in the future, end >= start; start before the coin''s history: MD422. '
'Endpoint: GET /api/v1/calculators/dca.';

-- why: the profit/loss calculator's two prices
create or replace function api.profit_loss_prices(p_slug text, p_buy_date date, p_sell_date date)
returns json
language plpgsql stable
as $$
begin
  perform market.check_calculator_date('buy_date', p_buy_date);
  perform market.check_calculator_date('sell_date', p_sell_date);
  if p_sell_date < p_buy_date then
    raise exception 'sell_date: must be on or after buy_date.' using errcode = 'MD422', column = 'sell_date';
  end if;
  return market.calculator_prices(p_slug, array[p_buy_date, p_sell_date], array['buy_date', 'sell_date']);
end;
$$;
comment on function api.profit_loss_prices(text, date, date) is
'The daily closes of the coin p_slug on p_buy_date and p_sell_date (or the last close before each), JSON of market.calculator_prices with closes [buy, sell]. '
'Dates after 2008-12-31, not in the future, sell on or after buy; a date before the coin''s history: MD422 naming it. Endpoint: GET /api/v1/calculators/profit-loss.';

-- why: the loan calculator values the collateral at the current price
create or replace function api.calculator_current_price(p_slug text)
returns json
language plpgsql stable
as $$
begin
  return market.calculator_prices(p_slug, array[]::date[], array[]::text[]);
end;
$$;
comment on function api.calculator_current_price(text) is
'The coin p_slug and its current USD price: JSON {coin {id, slug, symbol, name}, current_price, last_updated, closes []}. Unknown slug: MD404; no price: MD422. Endpoint: GET /api/v1/calculators/loan.';
