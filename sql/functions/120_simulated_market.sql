-- The simulated demo market. A price is a pure function of (seed, slug, instant): smooth value
-- noise summed over octaves from three months down to one minute, partly shared by all coins (the
-- market) and partly the coin's own. So a bar is the same whenever and however often it is
-- generated, history and live bars join seamlessly, and tests can compare runs.
-- Floating point is used for the noise only; every stored figure is rounded into numeric.

-- why: the only source of randomness: a uniform number in [-1, 1) from a key and a step
create or replace function market.sim_hash(p_key bigint, p_step bigint) returns double precision
language sql immutable parallel safe
as $$
  select hashint8extended(p_step, p_key)::double precision / 9223372036854775808.0
$$;
comment on function market.sim_hash(bigint, bigint) is 'Simulated market: deterministic uniform pseudo-random number in [-1, 1) for (key, step).';

-- why: one octave of smooth value noise: random knots at whole x, smoothstep-interpolated between
create or replace function market.sim_octave(p_key bigint, p_x double precision) returns double precision
language sql immutable parallel safe
as $$
  select market.sim_hash(p_key, floor(p_x)::bigint)
           * (1 - (p_x - floor(p_x)) * (p_x - floor(p_x)) * (3 - 2 * (p_x - floor(p_x))))
       + market.sim_hash(p_key, floor(p_x)::bigint + 1)
           * ((p_x - floor(p_x)) * (p_x - floor(p_x)) * (3 - 2 * (p_x - floor(p_x))))
$$;
comment on function market.sim_octave(bigint, double precision) is 'Simulated market: value noise in [-1, 1] at position x (knots at whole numbers).';

-- why: a coin's own log-price wander, from 90-day swings down to minute jitter
create or replace function market.sim_coin_noise(p_key bigint, p_epoch double precision) returns double precision
language sql immutable parallel safe
as $$
  select 0.45 * market.sim_octave(p_key * 32 + 1, p_epoch / 7776000)
       + 0.25 * market.sim_octave(p_key * 32 + 2, p_epoch / 1728000)
       + 0.10 * market.sim_octave(p_key * 32 + 3, p_epoch / 345600)
       + 0.05 * market.sim_octave(p_key * 32 + 4, p_epoch / 86400)
       + 0.025 * market.sim_octave(p_key * 32 + 5, p_epoch / 10800)
       + 0.012 * market.sim_octave(p_key * 32 + 6, p_epoch / 1800)
       -- minute jitter: a step per minute is enough below the half-hour octave
       + 0.003 * market.sim_hash(p_key * 32 + 7, floor(p_epoch / 60)::bigint)
$$;
comment on function market.sim_coin_noise(bigint, double precision) is 'Simulated market: a coin''s own log-price deviation at an instant (unix seconds), roughly in [-1, 1].';

-- why: the part of the wander all coins share, so that the market moves together
create or replace function market.sim_market_noise(p_key bigint, p_epoch double precision) returns double precision
language sql immutable parallel safe
as $$
  select 0.45 * market.sim_octave(p_key * 32 + 1, p_epoch / 7776000)
       + 0.25 * market.sim_octave(p_key * 32 + 2, p_epoch / 1728000)
       + 0.10 * market.sim_octave(p_key * 32 + 3, p_epoch / 345600)
       + 0.05 * market.sim_octave(p_key * 32 + 4, p_epoch / 86400)
       + 0.025 * market.sim_octave(p_key * 32 + 5, p_epoch / 10800)
$$;
comment on function market.sim_market_noise(bigint, double precision) is 'Simulated market: the market-wide log-price deviation at an instant (unix seconds).';

-- why: one formula for a simulated coin's price at an instant, for its bars and its live price
create or replace function market.sim_price(p_reference double precision, p_volatility double precision, p_beta double precision,
  p_market double precision, p_coin double precision) returns double precision
language sql immutable parallel safe
as $$
  select p_reference * exp(p_volatility * (p_beta * p_market + sqrt(1 - p_beta * p_beta) * p_coin))
$$;
comment on function market.sim_price(double precision, double precision, double precision, double precision, double precision) is 'Simulated market: a coin''s USD price from its reference price, volatility and market beta, the market-wide noise and its own noise at an instant (market.simulated_bars, market.simulate_live_venue_prices).';

-- why: stored prices keep about eight significant digits, whatever their magnitude
create or replace function market.sim_round(p_value double precision) returns numeric
language sql immutable parallel safe
as $$
  select round(p_value::numeric, greatest(2, least(16, 7 - floor(log(p_value))::int)))
$$;
comment on function market.sim_round(double precision) is 'Simulated market: a positive price rounded to about eight significant digits (at least two decimals).';

-- why: bar starts and widths of a window: daily bars older than 6 months, hourly older than 3
-- months, half-hourly older than 8 days, one-minute bars after that; only whole bars that end by p_end
create or replace function market.simulated_bar_grid(p_start timestamptz, p_end timestamptz, p_now timestamptz default now())
returns table ("time" timestamptz, width interval)
language sql stable
as $$
  with bands (band_start, band_end, width) as (
    values
      ('-infinity'::timestamptz, date_trunc('day', p_now - interval '6 months', 'UTC'), interval '1 day'),
      (date_trunc('day', p_now - interval '6 months', 'UTC'), date_trunc('day', p_now - interval '3 months', 'UTC'), interval '1 hour'),
      (date_trunc('day', p_now - interval '3 months', 'UTC'), date_trunc('day', p_now, 'UTC') - interval '8 days', interval '30 minutes'),
      (date_trunc('day', p_now, 'UTC') - interval '8 days', 'infinity'::timestamptz, interval '1 minute')
  )
  select g.time, b.width
  from bands b
  cross join lateral generate_series(
    date_bin(b.width, greatest(p_start, b.band_start) - interval '1 microsecond', timestamptz '2000-01-01') + b.width,
    least(p_end, b.band_end) - b.width,
    b.width) as g ("time")
  where greatest(p_start, b.band_start) < least(p_end, b.band_end)
$$;
comment on function market.simulated_bar_grid(timestamptz, timestamptz, timestamptz) is 'Simulated market: start and width of every bar in [p_start, p_end), by age relative to p_now: 1 day beyond 6 months, 1 hour beyond 3 months, 30 minutes beyond 8 days, else 1 minute.';

-- why: the bars of every simulated coin in a window, set-based (one statement generates them all)
create or replace function market.simulated_bars(p_start timestamptz, p_end timestamptz, p_now timestamptz default now())
returns setof market.coin_bars_1m
language sql stable
set work_mem = '64MB'
as $$
  with source as (
    select (s.settings ->> 'seed')::bigint as seed from market.data_sources s where s.name = 'simulated'
  ),
  grid as (
    select g.time, g.width from market.simulated_bar_grid(p_start, p_end, p_now) g
  ),
  market_points as materialized (
    -- every bar start, plus the instant the last bar closes (a bar closes at the next one's open),
    -- with the market-wide part of the price, computed once per instant for all coins
    select p.time, p.width, e.epoch, market.sim_market_noise(hashtext(s.seed || '/market'), e.epoch) as m
    from (select time, width from grid
          union all
          select max(time + width), null from grid having count(*) > 0) p
    cross join source s
    cross join lateral (select extract(epoch from p.time)::double precision as epoch) e
  ),
  coins as materialized (
    -- materialized, so that key is a plain column and the noise functions get inlined
    select c.id, c.circulating_supply, sc.reference_price::double precision as reference, sc.volatility,
      sc.market_beta as beta, sc.daily_volume::double precision as daily_volume,
      coalesce(sc.bars_from, '-infinity') as bars_from,
      coalesce(sc.bars_until, case when c.status = 'active' then 'infinity'::timestamptz else '-infinity' end) as bars_until,
      hashtext(s.seed || '/' || c.slug)::bigint as key
    from market.simulated_coins sc
    join market.coins c on c.id = sc.coin_id
    cross join source s
  ),
  bars as (
    select q.coin_id, q.circulating_supply, q.key, q.volatility, q.daily_volume, q.time, q.width, q.epoch,
      market.sim_round(q.price) as open,
      market.sim_round(lead(q.price) over w) as close,
      lead(q.time) over w as close_time
    from (
      -- offset 0 keeps the price a plain column above, so that sim_round is inlined, not called
      select c.id as coin_id, c.circulating_supply, c.key, c.volatility, c.daily_volume, p.time, p.width, p.epoch,
        market.sim_price(c.reference, c.volatility, c.beta, p.m, market.sim_coin_noise(c.key, p.epoch)) as price
      from coins c
      join market_points p on p.time >= c.bars_from and p.time <= c.bars_until
      offset 0
    ) q
    window w as (partition by q.coin_id order by q.time)
  ),
  shaped as (
    select b.time, b.coin_id, b.open, b.close, b.circulating_supply,
      -- wicks grow with the square root of the bar's width
      greatest(b.open, b.close)::double precision
        * (1 + b.volatility * 0.0015 * sqrt(extract(epoch from b.width)::double precision / 60)
             * abs(market.sim_hash(b.key * 32 + 20, b.epoch::bigint))) as high,
      least(b.open, b.close)::double precision
        * (1 - least(0.9, b.volatility * 0.0015 * sqrt(extract(epoch from b.width)::double precision / 60)
             * abs(market.sim_hash(b.key * 32 + 21, b.epoch::bigint)))) as low,
      b.daily_volume * extract(epoch from b.width)::double precision / 86400
        * exp(0.6 * market.sim_octave(b.key * 32 + 16, b.epoch / 86400)
            + 0.3 * market.sim_octave(b.key * 32 + 17, b.epoch / 10800)
            + 0.2 * market.sim_hash(b.key * 32 + 18, b.epoch::bigint)) as volume
    from bars b
    where b.width is not null and b.close_time = b.time + b.width
    offset 0
  )
  select s.time, s.coin_id, s.open,
    greatest(s.open, s.close, market.sim_round(s.high)) as high,
    least(s.open, s.close, market.sim_round(s.low)) as low,
    s.close,
    round(s.volume::numeric, 2) as volume,
    round(s.close * s.circulating_supply, 2) as marketcap
  from shaped s
$$;
comment on function market.simulated_bars(timestamptz, timestamptz, timestamptz) is 'Simulated market: the bars of every simulated coin that start in [p_start, p_end) and end by p_end, with the widths of market.simulated_bar_grid. Deterministic for a given seed.';

-- why: one insert of simulated bars for both writers (the present forwards, the history backwards)
create or replace function market.write_simulated_bars(p_start timestamptz, p_end timestamptz, p_now timestamptz) returns bigint
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_hourly timestamptz := date_trunc('day', p_now - interval '3 months', 'UTC');
  v_bars bigint := 0;
begin
  if p_end <= p_start then
    return 0;
  end if;
  -- Bars older than 3 months are rolled up and dropped soon after: written into month-long
  -- chunks, not day-long ones, they cost 20 chunk creations instead of 500 (seconds on the
  -- embedded database). The interval is set back before this transaction ends.
  if p_end <= v_hourly then
    perform public.set_chunk_time_interval('market.coin_bars_1m', interval '30 days');
  end if;
  insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume, marketcap)
  select b.time, b.coin_id, b.open, b.high, b.low, b.close, b.volume, b.marketcap from market.simulated_bars(p_start, p_end, p_now) b
  on conflict do nothing;
  get diagnostics v_bars = row_count;
  if p_end <= v_hourly then
    perform public.set_chunk_time_interval('market.coin_bars_1m', interval '1 day');
  end if;
  return v_bars;
end;
$$;
comment on function market.write_simulated_bars(timestamptz, timestamptz, timestamptz) is 'Simulated market: inserts the bars of market.simulated_bars(p_start, p_end, p_now) into market.coin_bars_1m (a bar already there is kept), old ones into month-long chunks. Returns the bars written.';

-- why: one tick of the demo market: bars since the source's coverage, written through the same
-- path as any bars; old windows are recorded for the aggregate refresh before retention may drop them.
-- The first tick writes the present only (the current hour: every coin's price, marketcap and rank
-- at once) and leaves the history behind it to market.simulate_market_history.
create or replace function market.simulate_market(p_now timestamptz default now(), p_piecewise boolean default true)
returns table (window_start timestamptz, window_end timestamptz, bars bigint, backfill_id bigint, done boolean)
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_source market.data_sources;
  v_target timestamptz := date_trunc('minute', p_now);
  v_daily timestamptz := date_trunc('day', p_now - interval '6 months', 'UTC');
  v_hourly timestamptz := date_trunc('day', p_now - interval '3 months', 'UTC');
  v_half_hourly timestamptz := date_trunc('day', p_now, 'UTC') - interval '8 days';
  v_history_from timestamptz;
begin
  select * into v_source from market.data_sources s where s.name = 'simulated' for update;
  if not found then
    return;
  end if;
  window_start := v_source.covered_until;
  if window_start is null then
    -- The first tick: the present, from the start of the current hour (a whole hour, so that no
    -- 30-minute or hourly bucket is split between present and history; at least its first minute);
    -- the history before it is the gap [history_from, history_until) that
    -- market.simulate_market_history fills backwards.
    v_history_from := date_trunc('day', p_now - coalesce(v_source.settings ->> 'history', '2 years')::interval, 'UTC');
    window_start := greatest(v_history_from, date_trunc('hour', v_target - interval '1 minute'));
    if window_start > v_history_from then
      update market.data_sources s set settings = s.settings
        || jsonb_build_object('history_from', v_history_from, 'history_until', window_start)
      where s.name = 'simulated';
    end if;
  end if;
  window_end := v_target;
  -- Piecewise, a call writes at most one band piece (about half a second on the embedded
  -- database), so that no statement holds it for long: the caller repeats until done.
  if p_piecewise then
    window_end := least(v_target, case
      when window_start < v_daily then v_daily
      when window_start < v_hourly then least(v_hourly, window_start + interval '15 days')
      when window_start < v_half_hourly then least(v_half_hourly, window_start + interval '7 days')
      else window_start + interval '6 hours' end);
  end if;
  bars := market.write_simulated_bars(window_start, window_end, p_now);
  if window_end > window_start then
    update market.data_sources s set covered_until = window_end, updated_at = now() where s.name = 'simulated';
    -- Older than the 30m refresh policy looks back, or a catch-up too long to leave to the
    -- policies and real-time aggregation: the caller refreshes the aggregates itself.
    if window_start < p_now - interval '7 days' or window_end - window_start > interval '1 hour' then
      backfill_id := app.begin_coin_bar_backfill('simulated', window_start, window_end);
    end if;
  end if;
  done := window_end >= v_target;
  return next;
end;
$$;
comment on function market.simulate_market(timestamptz, boolean) is 'Simulated market tick: writes the bars from the source''s covered_until up to the current minute into market.coin_bars_1m; the first tick writes the present only (from the start of the current hour) and records the history before it (settings history_from, history_until: 2 years back) for market.simulate_market_history. Piecewise (default) it stops after one band piece; repeat until done. Returns the window, bars written and the backfill id to refresh, if any.';

-- why: the history behind the present, newest first (the recent days a chart asks for come
-- first), one band piece a call; each piece is recorded for the aggregate refresh
create or replace function market.simulate_market_history(p_now timestamptz default now())
returns table (window_start timestamptz, window_end timestamptz, bars bigint, backfill_id bigint, done boolean, history_from timestamptz)
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_source market.data_sources;
  v_daily timestamptz := date_trunc('day', p_now - interval '6 months', 'UTC');
  v_hourly timestamptz := date_trunc('day', p_now - interval '3 months', 'UTC');
  v_half_hourly timestamptz := date_trunc('day', p_now, 'UTC') - interval '8 days';
begin
  select * into v_source from market.data_sources s where s.name = 'simulated' for update;
  if not found or v_source.settings ->> 'history_until' is null then
    return;
  end if;
  history_from := (v_source.settings ->> 'history_from')::timestamptz;
  window_end := (v_source.settings ->> 'history_until')::timestamptz;
  window_start := greatest(history_from, case
    when window_end > v_half_hourly then greatest(v_half_hourly, window_end - interval '6 hours')
    when window_end > v_hourly then greatest(v_hourly, window_end - interval '7 days')
    when window_end > v_daily then greatest(v_daily, window_end - interval '15 days')
    else history_from end);
  bars := market.write_simulated_bars(window_start, window_end, p_now);
  done := window_start <= history_from;
  update market.data_sources s set updated_at = now(), settings = case when done
      then s.settings - 'history_from' - 'history_until'
      else s.settings || jsonb_build_object('history_until', window_start) end
  where s.name = 'simulated';
  if window_end > window_start then
    backfill_id := app.begin_coin_bar_backfill('simulated', window_start, window_end);
  end if;
  return next;
end;
$$;
comment on function market.simulate_market_history(timestamptz) is 'Simulated market history: writes one band piece of the history the first tick left behind the present (settings history_from .. history_until of the simulated source), newest first, and moves history_until back to its start; done when the history is complete (the two settings are then removed). Nothing to do (no row) when no history is pending. Returns the window, bars written, the backfill id to refresh, whether it is done and where the history begins.';

-- why: the catalogue (real coins, approximate supplies, demo parameters) becomes rows, set-based, idempotently
create or replace function market.load_simulated_market(p_catalogue jsonb, p_now timestamptz default now()) returns int
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_anchor timestamptz;
  v_count int;
begin
  insert into market.data_sources as s (name, kind, demo, description, settings)
  values ('simulated', 'simulated', true,
    'Simulated demo market: real coin names and approximate supplies, made-up deterministic prices and volumes. Not market data.',
    jsonb_build_object('seed', p_catalogue -> 'seed', 'history', coalesce(p_catalogue ->> 'history', '2 years'),
      'anchor', date_trunc('day', p_now, 'UTC'), 'catalogue', p_catalogue ->> 'version'))
  on conflict (name) do update set
    settings = s.settings || jsonb_build_object('seed', p_catalogue -> 'seed',
      'history', coalesce(p_catalogue ->> 'history', '2 years'), 'catalogue', p_catalogue ->> 'version'),
    updated_at = now();
  -- Relative dates of the catalogue (days ago) count from the first load, so they stay put.
  select (s.settings ->> 'anchor')::timestamptz into v_anchor from market.data_sources s where s.name = 'simulated';

  create temporary table simulated_catalogue on commit drop as
  select x.*,
    case
      when x.status_days_ago is not null then v_anchor - make_interval(days => x.status_days_ago)
      when x.listed_days_ago is not null then v_anchor - make_interval(days => x.listed_days_ago)
      when x.genesis_date is not null then x.genesis_date::timestamp at time zone 'UTC'
      else v_anchor - interval '1500 days'
    end as status_at
  from jsonb_to_recordset(p_catalogue -> 'coins') as x (
    slug text, symbol text, name text, type text, status text, status_days_ago int, listed_days_ago int,
    created_days_ago int, circulating_supply numeric, total_supply numeric, max_supply numeric,
    decimals smallint, genesis_date date, logo text, price numeric, volatility double precision,
    beta double precision, volume numeric, links jsonb, contracts jsonb, descriptions jsonb);

  insert into market.coins as c (slug, symbol, name, type, status, status_updated_at, created_at,
    circulating_supply, total_supply, max_supply, decimals, genesis_date, logo, source)
  select k.slug, k.symbol, k.name, k.type, coalesce(k.status, 'active'), k.status_at,
    coalesce(v_anchor - make_interval(days => k.created_days_ago), k.status_at - interval '1 day'),
    k.circulating_supply, k.total_supply, k.max_supply, k.decimals, k.genesis_date, k.logo, 'simulated'
  from simulated_catalogue k
  on conflict (slug) do update set
    symbol = excluded.symbol, name = excluded.name, type = excluded.type, status = excluded.status,
    status_updated_at = excluded.status_updated_at, created_at = excluded.created_at,
    circulating_supply = excluded.circulating_supply, total_supply = excluded.total_supply,
    max_supply = excluded.max_supply, decimals = excluded.decimals, genesis_date = excluded.genesis_date,
    logo = excluded.logo
  where c.source = 'simulated';

  -- Only coins the simulated source owns; a coin another source created keeps its data.
  create temporary table simulated_owned on commit drop as
  select c.id, k.* from simulated_catalogue k join market.coins c using (slug) where c.source = 'simulated';

  delete from market.simulated_coins where coin_id in (select id from simulated_owned);
  insert into market.simulated_coins (coin_id, reference_price, volatility, market_beta, daily_volume, bars_from, bars_until)
  select o.id, o.price, coalesce(o.volatility, 0.8), coalesce(o.beta, 0.7), coalesce(o.volume, 0),
    greatest(v_anchor - make_interval(days => o.listed_days_ago), o.genesis_date::timestamp at time zone 'UTC'),
    case when coalesce(o.status, 'active') <> 'active' then o.status_at end
  from simulated_owned o
  -- coins before listing (progressing, awaiting, preparing) have no market yet
  where coalesce(o.status, 'active') in ('active', 'delisted', 'untracked') and o.price is not null;

  delete from market.coin_links where coin_id in (select id from simulated_owned);
  insert into market.coin_links (coin_id, type, url, position)
  select o.id, l.value ->> 'type', l.value ->> 'url', l.ordinality - 1
  from simulated_owned o cross join lateral jsonb_array_elements(coalesce(o.links, '[]')) with ordinality l;

  delete from market.coin_contracts where coin_id in (select id from simulated_owned);
  insert into market.coin_contracts (coin_id, chain, address, decimals)
  select o.id, x.value ->> 'chain', x.value ->> 'address', (x.value ->> 'decimals')::smallint
  from simulated_owned o cross join lateral jsonb_array_elements(coalesce(o.contracts, '[]')) x;

  delete from market.coin_descriptions where coin_id in (select id from simulated_owned);
  insert into market.coin_descriptions (coin_id, locale, html)
  select o.id, d.key, d.value
  from simulated_owned o cross join lateral jsonb_each_text(coalesce(o.descriptions, '{}')) d;

  select count(*) into v_count from simulated_owned;
  drop table simulated_catalogue, simulated_owned;
  return v_count;
end;
$$;
comment on function market.load_simulated_market(jsonb, timestamptz) is 'Loads the simulated market''s catalogue (src/sources/simulated/catalogue.json): the data source row, coins, links, contracts, descriptions and demo parameters. Idempotent; coins another source created are left alone. Returns the number of simulated coins.';
revoke execute on function market.simulate_market(timestamptz, boolean) from public;
revoke execute on function market.simulate_market_history(timestamptz) from public;
revoke execute on function market.write_simulated_bars(timestamptz, timestamptz, timestamptz) from public;
revoke execute on function market.load_simulated_market(jsonb, timestamptz) from public;
