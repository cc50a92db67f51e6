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

-- why: one documented formula, usable by analysts on any figures, not only the stored ones. The
-- factors are the reference's 13; those the reference types as integers are whole numbers here too.
create or replace function market.exchange_trust_score(
  p_rank int,
  p_volume_24h numeric,
  p_age_years double precision,
  p_volume_change_7d double precision,
  p_volume_cv double precision,
  p_rank_range_7d int,
  p_spread double precision,
  p_fresh_share double precision,
  p_anomaly_share double precision,
  p_pairs int,
  p_assets int,
  p_dominance double precision,
  p_top_coins_listed int,
  p_top_coins int,
  p_quoted_share double precision,
  p_metadata_share double precision
) returns jsonb
language sql immutable parallel safe
as $$
  with f as (
    select
      -- rank: 10 at rank 1, one tenth of a point less per place, 0 from rank 101
      round((10 * least(1, greatest(0, 1 - (p_rank - 1) / 100.0)))::numeric, 0) as rank,
      -- volume: log scale of the 24h USD volume, $100k or less 0, $10B or more 10
      round((10 * least(1, greatest(0, (log(greatest(coalesce(p_volume_24h, 0), 1)) - 5) / 5)))::numeric, 0) as volume,
      -- age: years since established (or first seen), 5 years or more 10
      round((10 * least(1, greatest(0, coalesce(p_age_years, 0) / 5)))::numeric, 0) as age,
      -- volume_trend: 5 when flat or unknown, +-50 % over 7 days or more 10 / 0
      round((10 * least(1, greatest(0, 0.5 + coalesce(p_volume_change_7d, 0) / 100)))::numeric, 0) as volume_trend,
      -- stability: coefficient of variation of the hourly volume over 7 days, 0 scores 10, 0.5 or more 0; unknown 5
      -- (greatest/least skip nulls, hence the explicit case for the unknown input)
      round(case when p_volume_cv is null then 5 else 10 * least(1, greatest(0, 1 - p_volume_cv / 0.5)) end::numeric, 0) as stability,
      -- rank_stability: places between best and worst hourly rank over 7 days, 0 scores 10, 10 or more 0; unknown 5
      round(case when p_rank_range_7d is null then 5 else 10 * least(1, greatest(0, 1 - p_rank_range_7d / 10.0)) end::numeric, 0) as rank_stability,
      -- ticker_health: half the spread (0 % scores 1, 1 % or more 0, unknown 0.5), a quarter the share of
      -- fresh tickers, a quarter the share of tickers priced in line with the other venues
      round((10 * (0.5 * case when p_spread is null then 0.5 else least(1, greatest(0, 1 - p_spread)) end
        + 0.25 * coalesce(p_fresh_share, 0) + 0.25 * (1 - coalesce(p_anomaly_share, 0))))::numeric, 1) as ticker_health,
      -- pairs: log scale, 1 pair 0, 1000 or more 10
      round((10 * least(1, log(greatest(coalesce(p_pairs, 0), 1)) / 3))::numeric, 1) as pairs,
      -- community: no social data is collected; a neutral constant, weighted 0
      5::numeric as community,
      -- assets: log scale of the distinct coins listed, 1 coin 0, 500 or more 10
      round((10 * least(1, log(greatest(coalesce(p_assets, 0), 1)) / log(500)))::numeric, 1) as assets,
      -- dominance: log scale of the percent share of all ranked venues' volume, 0.01 % or less 0, 10 % or more 10
      round((10 * least(1, greatest(0, (log(greatest(coalesce(p_dominance, 0), 0.01)::numeric) + 2) / 3)))::numeric, 1) as dominance,
      -- market_breadth: share of the top-100 coins (by rank) the venue lists
      round((10 * least(1, greatest(0, coalesce(p_top_coins_listed, 0)::numeric / greatest(1, coalesce(p_top_coins, 0)))))::numeric, 0) as market_breadth,
      -- transparency: half the share of tickers with a published bid and ask, half the curated metadata known
      round((10 * (0.5 * least(1, greatest(0, coalesce(p_quoted_share, 0))) + 0.5 * least(1, greatest(0, coalesce(p_metadata_share, 0)))))::numeric, 1) as transparency
  )
  select case when p_rank is not null then jsonb_build_object(
    'score', round(0.10 * f.rank + 0.15 * f.volume + 0.08 * f.age + 0.05 * f.volume_trend + 0.10 * f.stability
      + 0.05 * f.rank_stability + 0.15 * f.ticker_health + 0.07 * f.pairs + 0 * f.community + 0.07 * f.assets
      + 0.05 * f.dominance + 0.08 * f.market_breadth + 0.05 * f.transparency, 1),
    'breakdown', jsonb_build_object(
      'rank', f.rank, 'volume', f.volume, 'age', f.age, 'volume_trend', f.volume_trend, 'stability', f.stability,
      'rank_stability', f.rank_stability, 'ticker_health', f.ticker_health, 'pairs', f.pairs, 'community', f.community,
      'assets', f.assets, 'dominance', f.dominance, 'market_breadth', f.market_breadth, 'transparency', f.transparency)) end
  from f
$$;
comment on function market.exchange_trust_score(int, numeric, double precision, double precision, double precision, int,
  double precision, double precision, double precision, int, int, double precision, int, int, double precision, double precision) is
'Trust score of a venue as {"score": s, "breakdown": {13 factors}}, null when p_rank is null (unranked venue). clamp() bounds to [0, 1]; '
'factors the reference types as integers (rank, volume, age, volume_trend, stability, rank_stability, community, market_breadth) are rounded to whole numbers, the others to 0.1. '
'rank = 10 * clamp(1 - (rank - 1) / 100): rank 1 scores 10, 101 or worse 0. '
'volume = 10 * clamp((log10(24h USD volume) - 5) / 5): $100k or less 0, $10B or more 10. '
'age = 10 * clamp(years / 5), years since the curated established date, else since the venue was first seen (its row or its oldest daily snapshot): 5 years or more 10. '
'volume_trend = 10 * clamp(0.5 + percent change of the 24h volume over 7 days / 100): flat or unknown 5, -50 % or worse 0, +50 % or better 10. '
'stability = 10 * clamp(1 - cv / 0.5), cv = stddev / mean of the hourly 24h-volume snapshots of the last 7 days: steady 10, 0.5 or more (erratic, wash-trading-like) 0; 5 (neutral) with fewer than 24 snapshots. '
'rank_stability = 10 * clamp(1 - (worst - best hourly rank of the last 7 days) / 10): a constant rank 10, 10 places or more of movement 0; 5 with fewer than 24 snapshots. '
'ticker_health = 10 * (0.5 * clamp(1 - volume-weighted bid-ask spread in percent) [0.5 when unknown] + 0.25 * share of tickers updated in the last hour + 0.25 * (1 - share of anomalous tickers)), a ticker being anomalous when its USD price is more than 5 % off the median of the pair across venues (pairs listed at least 3 times). '
'pairs = 10 * clamp(log10(distinct pairs) / 3): 1 pair 0, 1000 or more 10. '
'community = 5: the service collects no social or community data, so a neutral constant stands in, with weight 0 so that it cannot move the score. '
'assets = 10 * clamp(log10(distinct coins listed) / log10(500)): 1 coin 0, 500 or more 10. '
'dominance = 10 * clamp((log10(percent share of all ranked venues'' 24h volume) + 2) / 3): 0.01 % or less 0, 10 % or more 10. '
'market_breadth = 10 * clamp(top-100 coins listed (as base or quote) / min(100, ranked coins)). '
'transparency = 10 * (0.5 * share of tickers publishing a bid and an ask + 0.5 * share of the curated venue metadata known: established, location, website); no audit or proof-of-reserves data exists here, so published order-book quotes and disclosed identity stand in. '
'score = round(0.10 rank + 0.15 volume + 0.08 age + 0.05 volume_trend + 0.10 stability + 0.05 rank_stability + 0.15 ticker_health + 0.07 pairs + 0 community + 0.07 assets + 0.05 dominance + 0.08 market_breadth + 0.05 transparency, 1), over the rounded factors as shown (the weights add up to 1).';

-- why: venue figures are aggregates of the ticker snapshot and of the venue's own history: computed
-- once per update, set-based, so that lists are a filter and a sort over one row per venue
create or replace function market.refresh_exchange_state(p_now timestamptz default now(), p_record boolean default true)
returns int
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_count int;
  v_top_coins int;
begin
  -- the coins market_breadth counts against: the top 100 of the ranked coins
  select count(*) into v_top_coins from market.coin_state where rank <= 100;

  with venue as (
    select e.id, e.status,
      coalesce(sum(t.volume_usd), 0) as volume_24h,
      count(distinct t.pair_id)::int as pairs,
      count(t.id)::int as tickers,
      sum(t.spread * t.volume_usd::double precision) / nullif(sum(t.volume_usd), 0)::double precision as spread,
      max(t.updated_at) as last_updated,
      -- ticker health and transparency inputs (trust score)
      (count(t.id) filter (where t.updated_at >= p_now - interval '1 hour'))::double precision / nullif(count(t.id), 0) as fresh_share,
      (count(t.id) filter (where m.median > 0 and abs(t.price_usd::double precision / m.median - 1) > 0.05))::double precision
        / nullif(count(t.id), 0) as anomaly_share,
      (count(t.id) filter (where t.bid is not null and t.ask is not null))::double precision / nullif(count(t.id), 0) as quoted_share,
      ((e.established is not null)::int + (e.location is not null)::int + (e.website is not null)::int) / 3.0 as metadata_share,
      -- first seen: the venue's row, or its oldest daily snapshot when history was backfilled before it
      extract(epoch from p_now - coalesce(e.established::timestamptz, least(e.created_at,
        (select h.time from market.exchange_volumes_1d h where h.exchange_id = e.id order by h.time limit 1))))
        / (365.25 * 86400) as age_years
    from market.exchanges e
    left join market.tickers t on t.exchange_id = e.id
    -- a pair's median USD price across venues, where at least 3 tickers make a median meaningful
    left join (
      select pair_id, percentile_cont(0.5) within group (order by price_usd::double precision) as median
      from market.tickers group by pair_id having count(*) >= 3
    ) m on m.pair_id = t.pair_id
    group by e.id
  ),
  assets as (
    select a.exchange_id, count(distinct a.coin_id)::int as assets,
      count(distinct a.coin_id) filter (where c.rank <= 100)::int as top_coins_listed
    from (select exchange_id, base_coin_id as coin_id from market.tickers
          union all
          select exchange_id, quote_coin_id from market.tickers where quote_coin_id is not null) a
    left join market.coin_state c on c.coin_id = a.coin_id
    group by a.exchange_id
  ),
  ranked as (
    select v.*, coalesce(a.assets, 0) as assets, coalesce(a.top_coins_listed, 0) as top_coins_listed,
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
      w.volume_cv, w.rank_range_7d
    from ranked r
    cross join lateral (
      select case when count(*) >= 24 then stddev_pop(h.volume_24h) / nullif(avg(h.volume_24h), 0) end::double precision as volume_cv,
        case when count(h.rank) >= 24 then max(h.rank) - min(h.rank) end as rank_range_7d
      from market.exchange_volumes_1h h
      where h.exchange_id = r.id and h.time > p_now - interval '7 days' and h.time <= p_now
    ) w
  ),
  figures as (
    select r.*, p.volume_cv, p.rank_range_7d,
      case when r.rank is not null then round((r.volume_24h / nullif(t.volume, 0) * 100)::numeric, 4)::double precision end as volume_dominance,
      round(((r.volume_24h / nullif(p.volume_1d, 0) - 1) * 100)::numeric, 2)::double precision as change_24h,
      round(((r.volume_24h / nullif(p.volume_7d, 0) - 1) * 100)::numeric, 2)::double precision as change_7d,
      p.rank_1d - r.rank as change_rank_24h,
      p.rank_7d - r.rank as change_rank_7d
    from ranked r
    join past p on p.id = r.id
    cross join totals t
  ),
  computed as (
    select f.id, f.rank, f.volume_24h, f.volume_dominance, f.change_24h, f.change_7d, f.change_rank_24h, f.change_rank_7d,
      f.pairs, f.assets, f.tickers,
      -- null for an unranked venue
      market.exchange_trust_score(
        p_rank => f.rank, p_volume_24h => f.volume_24h, p_age_years => f.age_years::double precision,
        p_volume_change_7d => f.change_7d, p_volume_cv => f.volume_cv, p_rank_range_7d => f.rank_range_7d,
        p_spread => f.spread, p_fresh_share => f.fresh_share, p_anomaly_share => f.anomaly_share,
        p_pairs => f.pairs, p_assets => f.assets, p_dominance => f.volume_dominance,
        p_top_coins_listed => f.top_coins_listed, p_top_coins => v_top_coins,
        p_quoted_share => f.quoted_share, p_metadata_share => f.metadata_share::double precision) as trust,
      f.last_updated
    from figures f
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
  perform app.bump_data_version('market');
  return v_count;
end;
$$;
comment on function market.refresh_exchange_state(timestamptz, boolean) is
'Rewrites market.exchange_state from market.tickers and the venue history: 24h volume, rank (active venues with volume, by volume), volume dominance, volume changes over 24h and 7d, rank changes, pairs, assets, tickers and the 13-factor trust score (market.exchange_trust_score, fed with the venue''s volume, rank and their 7-day hourly history, its tickers'' spreads, freshness, price anomalies and quotes, pairs, assets, top-100 coins listed, age and curated metadata; null when unranked). '
'With p_record (default) it also writes the snapshot of the minute of p_now into market.exchange_volumes. Returns the number of venues.';
revoke execute on function market.refresh_exchange_state(timestamptz, boolean) from public;
