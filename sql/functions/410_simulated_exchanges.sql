-- The simulated venues of the demo market. Which coins a venue lists, in which quotes and
-- instruments, its raw symbols, spreads and volume shares are pure functions of the seed and the
-- slugs (market.sim_hash); prices follow the simulated coins' current state, so tickers agree with
-- /coins. Venue history is a seeded noise around the venue's current volume, so that backfilled
-- and live snapshots join. Everything is labelled: market.data_sources row 'simulated-exchanges',
-- demo = true.

-- why: a venue's own slow volume wander (log scale), from monthly swings down to hourly jitter
create or replace function market.sim_exchange_noise(p_key bigint, p_epoch double precision) returns double precision
language sql immutable parallel safe
as $$
  select 0.35 * market.sim_octave(p_key * 32 + 1, p_epoch / 2592000)
       + 0.20 * market.sim_octave(p_key * 32 + 2, p_epoch / 604800)
       + 0.10 * market.sim_octave(p_key * 32 + 3, p_epoch / 86400)
       + 0.03 * market.sim_octave(p_key * 32 + 4, p_epoch / 3600)
$$;
comment on function market.sim_exchange_noise(bigint, double precision) is 'Simulated venues: the log-scale deviation of a venue''s 24h volume at an instant (unix seconds), roughly in [-0.7, 0.7].';

-- why: the venue catalogue (src/sources/simulated/exchanges.json) becomes rows, idempotently
create or replace function market.load_simulated_exchanges(p_catalogue jsonb) returns int
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_count int;
begin
  insert into market.data_sources as s (name, kind, demo, description, settings)
  values ('simulated-exchanges', 'simulated', true,
    'Simulated demo venues: real-world exchange names, made-up deterministic markets, spreads and volumes around the simulated coin prices. Not market data.',
    jsonb_build_object('seed', p_catalogue -> 'seed', 'quotes', p_catalogue -> 'quotes', 'catalogue', p_catalogue ->> 'version'))
  on conflict (name) do update set
    settings = s.settings || jsonb_build_object('seed', p_catalogue -> 'seed', 'quotes', p_catalogue -> 'quotes',
      'catalogue', p_catalogue ->> 'version'),
    updated_at = now();

  create temporary table simulated_venues on commit drop as
  select x.* from jsonb_to_recordset(p_catalogue -> 'exchanges') as x (
    slug text, name text, taxonomy text[], status text, established date, location text, website text,
    share double precision, coverage double precision, spread_bps double precision, quotes text[],
    format text, swap_format text, aliases jsonb);

  insert into market.exchanges as e (slug, name, taxonomy, status, established, location, website, source)
  select v.slug, v.name, coalesce(v.taxonomy, '{}'), coalesce(v.status, 'active'), v.established, v.location, v.website,
    'simulated-exchanges'
  from simulated_venues v
  on conflict (slug) do update set
    name = excluded.name, taxonomy = excluded.taxonomy, status = excluded.status, established = excluded.established,
    location = excluded.location, website = excluded.website
  where e.source = 'simulated-exchanges';

  delete from market.simulated_exchanges s using market.exchanges e
  where e.id = s.exchange_id and e.source = 'simulated-exchanges';
  insert into market.simulated_exchanges (exchange_id, volume_share, coverage, spread_bps, quotes, symbol_format, swap_format, aliases)
  select e.id, v.share, v.coverage, v.spread_bps, v.quotes, v.format, v.swap_format, coalesce(v.aliases, '{}')
  from simulated_venues v
  join market.exchanges e on e.slug = v.slug and e.source = 'simulated-exchanges';
  get diagnostics v_count = row_count;
  drop table simulated_venues;
  return v_count;
end;
$$;
comment on function market.load_simulated_exchanges(jsonb) is 'Loads the simulated venue catalogue (src/sources/simulated/exchanges.json): the data source row simulated-exchanges (demo), the venues and their demo parameters. Idempotent; venues of other sources are left alone. Returns the number of simulated venues.';

-- why: every ticker of every simulated venue at an instant, set-based, from the coins' current state
create or replace function market.simulated_tickers(p_now timestamptz default now())
returns table (
  exchange_id int, base_coin_id int, quote_symbol text, quote_coin_id int, instrument text, exchange_symbol text,
  price numeric, price_usd numeric, bid numeric, ask numeric, spread double precision, volume_base numeric,
  volume_usd numeric, change_24h double precision, last_trade_at timestamptz
)
language sql stable
as $$
  with source as (
    select s.settings ->> 'seed' as seed, s.settings -> 'quotes' as quotes
    from market.data_sources s where s.name = 'simulated-exchanges'
  ),
  minute as (
    select extract(epoch from date_trunc('minute', p_now))::double precision as epoch
  ),
  venues as (
    select e.id, e.slug, x.*, hashtext(src.seed || '/' || e.slug)::bigint as key
    from market.exchanges e
    join market.simulated_exchanges x on x.exchange_id = e.id
    cross join source src
    where e.status = 'active' and x.coverage > 0
  ),
  coins as (
    select c.id, c.slug, c.symbol, s.price, s.volume_24h, s.change_24h, s.rank
    from market.coins c
    join market.coin_state s on s.coin_id = c.id
    where c.status = 'active' and s.price > 0 and s.rank is not null
  ),
  quotes as (
    -- a quote's USD price: its coin's price, else a fiat rate (units per USD)
    select q.key as symbol, qc.id as coin_id,
      coalesce(qs.price, case when q.key = 'USD' then 1 end, 1 / nullif(fx.rate, 0)) as usd
    from source src
    cross join lateral jsonb_each_text(src.quotes) q
    left join market.coins qc on qc.slug = q.value
    left join market.coin_state qs on qs.coin_id = qc.id
    left join market.fx_latest fx on fx.currency = q.key
  ),
  listed as (
    -- bitcoin and ethereum trade everywhere; any other coin with probability `coverage`
    select v.id as exchange_id, v.key, v.volume_share, v.spread_bps, v.quotes, v.symbol_format, v.swap_format, v.aliases,
      c.id as coin_id, c.symbol, c.price, c.volume_24h, c.change_24h, c.rank,
      hashtext(v.key || '/' || c.slug)::bigint as pair_key
    from venues v
    cross join coins c
    where c.slug in ('bitcoin', 'ethereum')
       or (market.sim_hash(v.key, hashtext(c.slug)) + 1) / 2 < v.coverage
  ),
  markets as (
    -- the first quote always, each further one with probability one half; a perpetual swap on
    -- the first quote for the top 40 coins of venues that trade derivatives
    select l.*, q.symbol as quote_symbol, q.coin_id as quote_coin_id, q.usd as quote_usd, i.instrument, qn.n as quote_n,
      case when qn.n = 1 then 1.0 else 0.25 end * case i.instrument when 'swap' then 2.0 else 1.0 end as weight
    from listed l
    cross join lateral unnest(l.quotes) with ordinality qn (symbol, n)
    join quotes q on q.symbol = qn.symbol and q.usd > 0
    cross join lateral (values ('spot'), ('swap')) i (instrument)
    where (q.coin_id is null or q.coin_id <> l.coin_id)
      and (qn.n = 1 or market.sim_hash(l.pair_key, qn.n) > 0)
      and (i.instrument = 'spot' or (l.swap_format is not null and qn.n = 1 and l.rank <= 40))
  ),
  priced as (
    select m.*, mi.epoch,
      m.price * (1 + market.sim_hash(m.pair_key * 8 + m.quote_n, mi.epoch::bigint) * m.spread_bps / 20000)::numeric as usd_price,
      m.spread_bps / 100 * (1 + m.rank / 25.0) * (0.75 + 0.25 * (market.sim_hash(m.pair_key * 8 + m.quote_n + 1, mi.epoch::bigint) + 1))
        * case m.instrument when 'swap' then 0.7 else 1 end as spread_pct,
      (m.volume_24h * m.volume_share * m.weight
        * (0.4 + 0.6 * (market.sim_hash(m.pair_key, m.quote_n * 2 + 1) + 1))
        * exp(market.sim_exchange_noise(m.key, mi.epoch)))::numeric as usd_volume
    from markets m
    cross join minute mi
  ),
  named as (
    select p.*,
      coalesce(p.aliases ->> p.symbol, p.symbol) as b,
      coalesce(p.aliases ->> p.quote_symbol, p.quote_symbol) as q,
      market.sim_round((p.usd_price / p.quote_usd)::double precision) as quote_price
    from priced p
  )
  select n.exchange_id, n.coin_id, n.quote_symbol, n.quote_coin_id, n.instrument,
    replace(replace(replace(replace(case n.instrument when 'swap' then n.swap_format else n.symbol_format end,
      '{B}', n.b), '{Q}', n.q), '{b}', lower(n.b)), '{q}', lower(n.q)),
    n.quote_price,
    market.sim_round(n.usd_price::double precision),
    market.sim_round((n.quote_price * (1 - n.spread_pct / 200)::numeric)::double precision),
    market.sim_round((n.quote_price * (1 + n.spread_pct / 200)::numeric)::double precision),
    round(n.spread_pct::numeric, 4)::double precision,
    round(n.usd_volume / n.usd_price, 8),
    round(n.usd_volume, 2),
    round((coalesce(n.change_24h, 0) + 0.3 * market.sim_hash(n.pair_key * 8 + n.quote_n + 2, n.epoch::bigint))::numeric, 2)::double precision,
    date_trunc('second', p_now) - make_interval(secs => floor(abs(market.sim_hash(n.pair_key * 8 + n.quote_n + 3, n.epoch::bigint)) * 60 * (1 + n.rank / 10.0)))
  from named n
$$;
comment on function market.simulated_tickers(timestamptz) is 'Simulated venues: every ticker at an instant, from the simulated coins'' current state (market.coin_state): listings, quotes, instruments and raw symbols by seed; price within half a spread of the coin price; spread from the venue''s basis points, wider for lower-ranked coins; 24h USD volume a seeded share of the coin''s 24h volume times the venue''s volume wander. Deterministic for a given seed, state and minute.';

-- why: one minute of the simulated venues: rewrite their tickers (the snapshot), then the venue state
create or replace function market.simulate_exchange_tickers(p_now timestamptz default now()) returns int
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_count int;
begin
  create temporary table simulated_ticker_rows on commit drop as select * from market.simulated_tickers(p_now);

  insert into market.pair_keys (base_coin_id, quote_symbol, quote_coin_id)
  select distinct t.base_coin_id, t.quote_symbol, t.quote_coin_id from simulated_ticker_rows t
  on conflict (base_coin_id, quote_symbol) do nothing;

  delete from market.tickers t
  using market.exchanges e
  where e.id = t.exchange_id and e.source = 'simulated-exchanges'
    and not exists (
      select from simulated_ticker_rows r join market.pair_keys k on k.base_coin_id = r.base_coin_id and k.quote_symbol = r.quote_symbol
      where r.exchange_id = t.exchange_id and k.id = t.pair_id and r.instrument = t.instrument);

  insert into market.tickers as t (exchange_id, pair_id, base_coin_id, quote_symbol, quote_coin_id, instrument, exchange_symbol,
    price, price_usd, bid, ask, spread, volume_base, volume_usd, change_24h, last_trade_at, updated_at)
  select r.exchange_id, k.id, r.base_coin_id, r.quote_symbol, r.quote_coin_id, r.instrument, r.exchange_symbol,
    r.price, r.price_usd, r.bid, r.ask, r.spread, r.volume_base, r.volume_usd, r.change_24h, r.last_trade_at, date_trunc('second', p_now)
  from simulated_ticker_rows r
  join market.pair_keys k on k.base_coin_id = r.base_coin_id and k.quote_symbol = r.quote_symbol
  on conflict (exchange_id, pair_id, instrument) do update set
    exchange_symbol = excluded.exchange_symbol, quote_coin_id = excluded.quote_coin_id, price = excluded.price,
    price_usd = excluded.price_usd, bid = excluded.bid, ask = excluded.ask, spread = excluded.spread,
    volume_base = excluded.volume_base, volume_usd = excluded.volume_usd, change_24h = excluded.change_24h,
    last_trade_at = excluded.last_trade_at, updated_at = excluded.updated_at;
  get diagnostics v_count = row_count;
  drop table simulated_ticker_rows;
  return v_count;
end;
$$;
comment on function market.simulate_exchange_tickers(timestamptz) is 'Simulated venues: rewrites the tickers of every simulated venue from market.simulated_tickers(p_now) (new pairs get a pair id, delisted markets are removed). Returns the number of tickers written.';

-- why: venue history before the source ran (or while it was down), so /exchanges/{slug}/history
-- has a past at once: a seeded wander around the venue's current volume, daily rows beyond 90
-- days, hourly beyond a day, minute rows after that; only instants before p_end
create or replace function market.simulate_exchange_history(p_start timestamptz, p_end timestamptz, p_now timestamptz default now())
returns bigint
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_count bigint;
  v_old boolean := p_end <= date_trunc('day', p_now, 'UTC') - interval '8 days';
begin
  -- Rows older than the raw retention are rolled up and dropped soon after: month-long chunks
  -- instead of day-long ones spare hundreds of chunk creations. Set back before the transaction ends.
  if v_old then
    perform public.set_chunk_time_interval('market.exchange_volumes', interval '30 days');
  end if;
  with source as (
    select s.settings ->> 'seed' as seed from market.data_sources s where s.name = 'simulated-exchanges'
  ),
  grid as (
    select g.time
    from (values
      (p_now - interval '365 days', date_trunc('day', p_now - interval '90 days', 'UTC'), interval '1 day'),
      (date_trunc('day', p_now - interval '90 days', 'UTC'), date_trunc('hour', p_now - interval '1 day'), interval '1 hour'),
      (date_trunc('hour', p_now - interval '1 day'), 'infinity'::timestamptz, interval '1 minute')) b (band_start, band_end, width)
    cross join lateral generate_series(
      date_bin(b.width, greatest(p_start, b.band_start) - interval '1 microsecond', timestamptz '2000-01-01') + b.width,
      least(p_end, b.band_end) - interval '1 microsecond', b.width) g (time)
    where greatest(p_start, b.band_start) < least(p_end, b.band_end)
  ),
  venues as (
    -- the level that makes the wander meet the current volume at p_now
    select e.id, s.pairs, s.assets, hashtext(src.seed || '/' || e.slug)::bigint as key,
      s.volume_24h::double precision / exp(market.sim_exchange_noise(hashtext(src.seed || '/' || e.slug),
        extract(epoch from date_trunc('minute', p_now))::double precision)) as level
    from market.exchanges e
    join market.simulated_exchanges x on x.exchange_id = e.id
    join market.exchange_state s on s.exchange_id = e.id
    cross join source src
    where e.status = 'active' and s.volume_24h > 0
  ),
  points as (
    select g.time, v.id, v.pairs, v.assets,
      round((v.level * exp(market.sim_exchange_noise(v.key, extract(epoch from g.time)::double precision)))::numeric, 2) as volume
    from grid g cross join venues v
  )
  insert into market.exchange_volumes (time, exchange_id, volume_24h, volume_dominance, rank, pairs, assets)
  select p.time, p.id, p.volume,
    round((p.volume / sum(p.volume) over (partition by p.time) * 100)::numeric, 4)::double precision,
    row_number() over (partition by p.time order by p.volume desc, p.id)::int,
    p.pairs, p.assets
  from points p
  on conflict (exchange_id, time) do nothing;
  get diagnostics v_count = row_count;
  if v_old then
    perform public.set_chunk_time_interval('market.exchange_volumes', interval '1 day');
  end if;
  return v_count;
end;
$$;
comment on function market.simulate_exchange_history(timestamptz, timestamptz, timestamptz) is 'Simulated venues: writes venue snapshots into market.exchange_volumes for [p_start, p_end) (at most a year back): daily beyond 90 days, hourly beyond one day, per minute after that, volumes a seeded wander that meets each venue''s current volume (market.exchange_state) at p_now. Existing rows are kept. Returns rows written.';

revoke execute on function market.load_simulated_exchanges(jsonb) from public;
revoke execute on function market.simulate_exchange_tickers(timestamptz) from public;
revoke execute on function market.simulate_exchange_history(timestamptz, timestamptz, timestamptz) from public;
