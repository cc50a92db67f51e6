-- Simulated OKX swap liquidations of the demo coins (source simulated-liquidations, demo = true).
-- Like the demo market's prices, a liquidation is a pure function of (seed, coin, minute, slot):
-- the same minute always yields the same liquidations, whenever and however often it is generated.
-- Each one-minute bar of a coin offers three slots; a slot fires with a probability that grows
-- with the coin's volume; a falling minute liquidates mostly longs, a rising one mostly shorts.

-- why: the liquidations of every simulated coin in a window, set-based, from its one-minute bars
create or replace function market.simulated_liquidations(p_start timestamptz, p_end timestamptz)
returns setof market.liquidations
language sql stable
as $$
  with source as (
    select (s.settings ->> 'seed')::bigint as seed from market.data_sources s where s.name = 'simulated'
  ),
  coins as materialized (
    select c.id, upper(c.symbol) as symbol, sc.daily_volume::double precision as daily_volume,
      hashtext(s.seed || '/liquidations/' || c.slug)::bigint as key
    from market.simulated_coins sc
    join market.coins c on c.id = sc.coin_id
    cross join source s
    -- stablecoins have no swap market worth liquidating
    where sc.volatility >= 0.05 and c.status = 'active'
  ),
  slots as (
    select c.id as coin_id, c.symbol, b.time, b.open, b.close, slot,
      extract(epoch from b.time)::bigint / 60 as step,
      c.key * 64 + slot * 8 as key,
      least(0.5, 0.004 * sqrt(c.daily_volume / 1e8)) as p
    from coins c
    join market.coin_bars_1m b on b.coin_id = c.id and b.time >= p_start and b.time < p_end
    cross join generate_series(0, 2) slot
    where b.close > 0
  ),
  fired as (
    select s.*,
      -- a falling minute liquidates longs: the chance of a long is 0.5 minus 200 times the return, within 0.1..0.9
      (market.sim_hash(s.key + 1, s.step) + 1) / 2
        < greatest(0.1, least(0.9, 0.5 - 200 * ((s.close - s.open) / s.open)::double precision)) as is_long,
      (market.sim_hash(s.key + 2, s.step) + 1) / 2 as size,
      market.sim_hash(s.key + 3, s.step) as slip,
      (market.sim_hash(s.key + 4, s.step) + 1) / 2 as at
    from slots s
    where (market.sim_hash(s.key, s.step) + 1) / 2 < s.p
  ),
  priced as (
    select f.*,
      market.sim_round(f.close::double precision * (1 + 0.001 * f.slip)) as price,
      -- heavy-tailed sizes: 500 USD up to about 120 000 USD
      500 * exp(5.5 * f.size * f.size) as usd
    from fired f
  ),
  sized as (
    select p.*, round((p.usd / p.price::double precision)::numeric,
      greatest(0, least(12, 4 - floor(log((p.usd / p.price::double precision)::numeric))::int))) as quantity
    from priced p
  )
  select
    -- slot instants within the minute, to the millisecond, distinct per slot
    s.time + make_interval(secs => round(((s.slot + s.at) * 20)::numeric, 3)::double precision) as time,
    'okx', s.symbol || '-USDT-SWAP', s.coin_id, 'swap',
    case when s.is_long then 'long' else 'short' end,
    case when s.is_long then 'sell' else 'buy' end,
    s.price, s.quantity, round(s.price * s.quantity, 2), 'simulated-liquidations'
  from sized s
  where s.quantity > 0
$$;
comment on function market.simulated_liquidations(timestamptz, timestamptz) is
'Simulated market: the demo liquidations (OKX USDT swaps) of the active simulated coins whose one-minute bars start in [p_start, p_end); a pure function of the seed, the coin and the minute. Stablecoins (volatility below 0.05) have none.';

-- why: the cron task's step: the liquidations since the last run (at most the feed's 48 hours), once
create or replace function market.simulate_liquidations(p_now timestamptz default now())
returns table (inserted int, earliest timestamptz)
language plpgsql volatile
as $$
declare
  v_from timestamptz;
  v_until timestamptz;
  v_inserted int;
  v_earliest timestamptz;
begin
  if not exists (select from market.data_sources where name = 'simulated' and settings ? 'seed') then
    return query select 0, null::timestamptz;
    return;
  end if;
  select greatest(coalesce(s.covered_until, '-infinity'), date_trunc('minute', p_now) - interval '48 hours')
    into v_from
  from market.data_sources s where s.name = 'simulated-liquidations';
  -- only minutes whose bars exist (the demo market may lag a tick behind)
  select least(date_trunc('minute', p_now), max(b.time) + interval '1 minute') into v_until
  from market.coin_bars_1m b where b.time >= v_from and b.time < date_trunc('minute', p_now) + interval '1 minute';
  if v_until is null or v_until <= v_from then
    return query select 0, null::timestamptz;
    return;
  end if;
  with written as (
    insert into market.liquidations
    select * from market.simulated_liquidations(v_from, v_until)
    on conflict do nothing
    returning time
  )
  select count(*)::int, min(time) into v_inserted, v_earliest from written;
  update market.data_sources set covered_until = v_until, updated_at = now() where name = 'simulated-liquidations';
  if v_inserted > 0 then perform app.bump_data_version('liquidations'); end if;
  return query select v_inserted, v_earliest;
end;
$$;
comment on function market.simulate_liquidations(timestamptz) is
'Simulated market: writes the demo liquidations of the minutes since market.data_sources.covered_until of simulated-liquidations (at most the last 48 hours) up to the newest one-minute bar; safe to repeat. Returns how many rows it wrote and the earliest.';
