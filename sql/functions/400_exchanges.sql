-- Venues: the counts the Global endpoint shows, the trust score formula, and the refresh that
-- turns the ticker snapshot into one row of current figures per venue (market.exchange_state) and
-- one history snapshot per venue and minute (market.exchange_volumes).

-- why: the Global endpoint's exchange, pair and market counts, defined once
create or replace function market.venue_counts()
returns table (exchanges int, pairs int, markets int)
language sql stable
as $$
  select
    (select count(*) from market.exchanges e
      where e.status = 'active' and exists (select from market.tickers t where t.exchange_id = e.id))::int,
    (select count(distinct t.pair_id) from market.tickers t)::int,
    (select count(*) from market.tickers t)::int
$$;
comment on function market.venue_counts() is 'One row: exchanges = active venues listing at least one market; pairs = distinct base/quote pairs listed anywhere (rows of market.pairs); markets = tickers (one per venue, pair and instrument).';

-- why: one documented formula, usable by analysts on any figures, not only the stored ones
create or replace function market.exchange_trust_score(
  p_volume_24h numeric,
  p_spread double precision,
  p_volume_cv double precision,
  p_assets int,
  p_coverage_base int
) returns jsonb
language sql immutable parallel safe
as $$
  with parts as (
    select
      round((10 * least(1, greatest(0, (log(greatest(coalesce(p_volume_24h, 0), 1)) - 5) / 5)))::numeric, 1) as liquidity,
      round((10 * least(1, greatest(0, 1 - coalesce(p_spread, 1))))::numeric, 1) as spread,
      case when p_volume_cv is null then 5.0
        else round((10 * least(1, greatest(0, 1 - p_volume_cv / 0.5)))::numeric, 1) end as volume_consistency,
      round((10 * least(1, greatest(0, coalesce(p_assets, 0)::numeric / greatest(1, least(100, coalesce(p_coverage_base, 1))))))::numeric, 1) as coverage
  )
  select jsonb_build_object(
    'score', round(0.35 * p.liquidity + 0.25 * p.spread + 0.20 * p.volume_consistency + 0.20 * p.coverage, 1),
    'breakdown', jsonb_build_object(
      'liquidity', p.liquidity, 'spread', p.spread,
      'volume_consistency', p.volume_consistency, 'coverage', p.coverage))
  from parts p
$$;
comment on function market.exchange_trust_score(numeric, double precision, double precision, int, int) is
'Trust score of a venue, 0-10, as {"score": s, "breakdown": {liquidity, spread, volume_consistency, coverage}}, each component 0-10 rounded to 0.1: '
'liquidity = 10 * clamp((log10(24h USD volume) - 5) / 5): $100k or less scores 0, $10B or more 10; '
'spread = 10 * clamp(1 - volume-weighted bid-ask spread in percent): 0 % scores 10, 1 % or more (or unknown) 0; '
'volume_consistency = 10 * clamp(1 - cv / 0.5), cv = coefficient of variation (stddev / mean) of the hourly 24h-volume snapshots of the last 7 days: steady volume scores 10, cv 0.5 or more (erratic, wash-trading-like) 0; 5 (neutral) when fewer than 24 hourly snapshots exist; '
'coverage = 10 * clamp(assets listed / min(100, ranked coins)). '
'score = round(0.35 liquidity + 0.25 spread + 0.20 volume_consistency + 0.20 coverage, 1). Only ranked venues get a score (market.refresh_exchange_state).';

-- why: venue figures are aggregates of the ticker snapshot and of the venue's own history: computed
-- once per update, set-based, so that lists are a filter and a sort over one row per venue
create or replace function market.refresh_exchange_state(p_now timestamptz default now(), p_record boolean default true)
returns int
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_count int;
  v_ranked_coins int;
begin
  select count(*) into v_ranked_coins from market.coin_state where rank is not null;

  with venue as (
    select e.id, e.status,
      coalesce(sum(t.volume_usd), 0) as volume_24h,
      count(distinct t.pair_id)::int as pairs,
      count(t.id)::int as tickers,
      sum(t.spread * t.volume_usd::double precision) / nullif(sum(t.volume_usd), 0)::double precision as spread,
      max(t.updated_at) as last_updated
    from market.exchanges e
    left join market.tickers t on t.exchange_id = e.id
    group by e.id
  ),
  assets as (
    select a.exchange_id, count(distinct a.coin_id)::int as assets
    from (select exchange_id, base_coin_id as coin_id from market.tickers
          union all
          select exchange_id, quote_coin_id from market.tickers where quote_coin_id is not null) a
    group by a.exchange_id
  ),
  ranked as (
    select v.*, coalesce(a.assets, 0) as assets,
      case when v.status = 'active' and v.volume_24h > 0
        then row_number() over (partition by v.status = 'active' and v.volume_24h > 0 order by v.volume_24h desc, v.id) end::int as rank
    from venue v
    left join assets a on a.exchange_id = v.id
  ),
  totals as (
    select sum(r.volume_24h) as volume from ranked r where r.rank is not null
  ),
  past as (
    select r.id,
      (select h.volume_24h from market.exchange_volumes h
        where h.exchange_id = r.id and h.time <= p_now - interval '24 hours' and h.time > p_now - interval '26 hours'
        order by h.time desc limit 1) as volume_1d,
      (select h.rank from market.exchange_volumes h
        where h.exchange_id = r.id and h.time <= p_now - interval '24 hours' and h.time > p_now - interval '26 hours'
        order by h.time desc limit 1) as rank_1d,
      (select h.volume_24h from market.exchange_volumes_1h h
        where h.exchange_id = r.id and h.time <= p_now - interval '7 days' and h.time > p_now - interval '7 days 2 hours'
        order by h.time desc limit 1) as volume_7d,
      (select h.rank from market.exchange_volumes_1h h
        where h.exchange_id = r.id and h.time <= p_now - interval '7 days' and h.time > p_now - interval '7 days 2 hours'
        order by h.time desc limit 1) as rank_7d,
      (select case when count(*) >= 24 then stddev_pop(h.volume_24h) / nullif(avg(h.volume_24h), 0) end
        from market.exchange_volumes_1h h
        where h.exchange_id = r.id and h.time > p_now - interval '7 days' and h.time <= p_now)::double precision as volume_cv
    from ranked r
  ),
  computed as (
    select r.id, r.rank, r.volume_24h,
      case when r.rank is not null then round((r.volume_24h / nullif(t.volume, 0) * 100)::numeric, 4)::double precision end as volume_dominance,
      round(((r.volume_24h / nullif(p.volume_1d, 0) - 1) * 100)::numeric, 2)::double precision as change_24h,
      round(((r.volume_24h / nullif(p.volume_7d, 0) - 1) * 100)::numeric, 2)::double precision as change_7d,
      p.rank_1d - r.rank as change_rank_24h,
      p.rank_7d - r.rank as change_rank_7d,
      r.pairs, r.assets, r.tickers,
      case when r.rank is not null then market.exchange_trust_score(r.volume_24h, r.spread, p.volume_cv, r.assets, v_ranked_coins) end as trust,
      r.last_updated
    from ranked r
    join past p on p.id = r.id
    cross join totals t
  )
  insert into market.exchange_state as s (exchange_id, rank, volume_24h, volume_dominance, change_24h, change_7d,
    change_rank_24h, change_rank_7d, pairs, assets, tickers, trust_score, trust_breakdown, last_updated, refreshed_at)
  select c.id, c.rank, c.volume_24h, c.volume_dominance, c.change_24h, c.change_7d, c.change_rank_24h, c.change_rank_7d,
    c.pairs, c.assets, c.tickers, (c.trust ->> 'score')::double precision, c.trust -> 'breakdown', c.last_updated, now()
  from computed c
  on conflict (exchange_id) do update set
    rank = excluded.rank, volume_24h = excluded.volume_24h, volume_dominance = excluded.volume_dominance,
    change_24h = excluded.change_24h, change_7d = excluded.change_7d, change_rank_24h = excluded.change_rank_24h,
    change_rank_7d = excluded.change_rank_7d, pairs = excluded.pairs, assets = excluded.assets, tickers = excluded.tickers,
    trust_score = excluded.trust_score, trust_breakdown = excluded.trust_breakdown, last_updated = excluded.last_updated,
    refreshed_at = excluded.refreshed_at;
  get diagnostics v_count = row_count;

  if p_record then
    insert into market.exchange_volumes as h (time, exchange_id, volume_24h, volume_dominance, rank, pairs, assets)
    select date_trunc('minute', p_now), s.exchange_id, s.volume_24h, s.volume_dominance, s.rank, s.pairs, s.assets
    from market.exchange_state s
    join market.exchanges e on e.id = s.exchange_id
    where e.status = 'active'
    on conflict (exchange_id, time) do update set
      volume_24h = excluded.volume_24h, volume_dominance = excluded.volume_dominance, rank = excluded.rank,
      pairs = excluded.pairs, assets = excluded.assets;
  end if;
  return v_count;
end;
$$;
comment on function market.refresh_exchange_state(timestamptz, boolean) is
'Rewrites market.exchange_state from market.tickers and the venue history: 24h volume, rank (active venues with volume, by volume), volume dominance, volume changes over 24h and 7d, rank changes, pairs, assets, tickers and the trust score (market.exchange_trust_score; null when unranked). '
'With p_record (default) it also writes the snapshot of the minute of p_now into market.exchange_volumes. Returns the number of venues.';
revoke execute on function market.refresh_exchange_state(timestamptz, boolean) from public;
