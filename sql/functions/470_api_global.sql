-- The Global Market group: market-wide totals, dominance, the top-100 heatmap and the total
-- marketcap/volume history. Totals are over the ranked coins (active, priced) of market.coin_state;
-- venue counts come from market.venue_counts(); the Fear & Greed reading from the snapshot.

-- why: totals and dominance are shared by /global and /global/heatmap
create or replace function market.global_figures()
returns table (
  total_marketcap double precision, total_volume_24h double precision,
  btc double precision, eth double precision, top3 json, top3_total double precision, last_updated timestamptz
)
language sql stable
as $$
  select
    round(sum(s.marketcap), 2)::double precision,
    round(sum(s.volume_24h), 2)::double precision,
    round(max(s.dominance) filter (where c.slug = 'bitcoin')::numeric, 2)::double precision,
    round(max(s.dominance) filter (where c.slug = 'ethereum')::numeric, 2)::double precision,
    coalesce(json_agg(json_build_object('symbol', c.symbol, 'domination', round(s.dominance::numeric, 2)::double precision)
      order by s.rank) filter (where s.rank <= 3), '[]'),
    round(sum(s.dominance) filter (where s.rank <= 3)::numeric, 2)::double precision,
    max(s.last_updated)
  from market.coin_state s
  join market.coins c on c.id = s.coin_id
  where s.rank is not null
$$;
comment on function market.global_figures() is 'Totals over the ranked coins (active with a price): marketcap (coins without circulating supply add nothing), 24h USD volume; dominance (percent of that marketcap, 2 decimals) of bitcoin and ethereum (by slug), the coins ranked 1-3 as [{symbol, domination}] (domination null for a coin without circulating supply) and their sum; the newest price time.';

create or replace function api.global_market() returns json
language sql stable
as $$
  select json_build_object(
    'total_marketcap', g.total_marketcap,
    'total_volume_24h', g.total_volume_24h,
    'total_cryptocurrencies', (select count(*) from market.coins c where c.status = 'active')::int,
    'total_tokens', (select count(*) from market.coins c where c.status = 'active' and c.type = 'token')::int,
    'total_exchanges', v.exchanges,
    'total_pairs', v.pairs,
    'total_markets', v.markets,
    'dominance', json_build_object('btc', g.btc, 'eth', g.eth, 'top3', g.top3),
    'fear_greed', (
      select json_build_object('score', (f.reading->>'score')::int, 'index', (f.reading->>'index')::int, 'regime', f.reading->>'regime')
      from market.sentiment_snapshots f where f.kind = 'fear_greed' and f.coin_id is null),
    'last_updated', market.iso_time(g.last_updated))
  from market.global_figures() g
  cross join market.venue_counts() v
$$;
comment on function api.global_market() is 'Market overview: total_marketcap and total_volume_24h (USD numbers, ranked coins), total_cryptocurrencies (active coins and tokens), total_tokens (active tokens), total_exchanges, total_pairs and total_markets (market.venue_counts()), dominance {btc, eth, top3 [{symbol, domination}] by rank}, fear_greed {score, index, regime} of the market (null before the first refresh) and last_updated (newest price). Endpoint: GET /api/v1/global.';

-- why: the heatmap endpoint returns rows and framing figures together: one call, one envelope
create or replace function api.market_heatmap() returns json
language sql stable
as $$
  select json_build_object(
    'data', (
      select coalesce(json_agg(json_build_object(
          'slug', c.slug, 'name', c.name, 'symbol', c.symbol, 'rank', s.rank, 'price', s.price::text,
          'marketcap', s.marketcap::double precision, 'volume_24h', s.volume_24h::double precision,
          'change_24h', s.change_24h, 'change_7d', s.change_7d, 'dominance', s.dominance, 'logo', market.logo_url('coins', c.slug, c.logo))
        order by s.rank), '[]')
      from market.coin_state s join market.coins c on c.id = s.coin_id
      -- a tile is sized by marketcap: a coin without one (no circulating supply) has no tile
      where s.rank <= 100 and s.marketcap is not null),
    'meta', json_build_object(
      'total_marketcap', g.total_marketcap,
      'total_volume_24h', g.total_volume_24h,
      'dominance', json_build_object('btc', g.btc, 'eth', g.eth, 'top3', g.top3_total),
      'fear_greed', (select (f.reading->>'index')::int from market.sentiment_snapshots f where f.kind = 'fear_greed' and f.coin_id is null)))
  from market.global_figures() g
$$;
comment on function api.market_heatmap() is 'The top-100 heatmap as the endpoint returns it, {data, meta}: data = the coins ranked 1-100 that have a marketcap {slug, name, symbol, rank, price (decimal string), marketcap, volume_24h, change_24h, change_7d (null while the coin has less than 7 days of history: an unknown value is null, never an invented 0, as the spec has it for marketcap and fully diluted valuation), dominance, logo (market.logo_url)} by rank. Null rules: marketcap is never null here, since the heatmap sizes its tiles by marketcap and a coin without circulating supply (marketcap null, the only null the spec allows it) cannot be drawn: such a coin is left out (the rank puts it after every coin with a marketcap, so the ranks shown stay 1..n without gaps); change_24h and change_7d are null only when unknown; meta = {total_marketcap, total_volume_24h, dominance {btc, eth, top3 (sum of the top three)}, fear_greed (the market''s Fear & Greed index 0-100, null before the first refresh)}. Endpoint: GET /api/v1/global/heatmap.';

-- why: the history periods, their bar level and span, in one place for the function and the API
create or replace view api.global_history_periods as
select name, bars, span
from (values
  (1, '24h', 'half-hourly', interval '24 hours'),
  (2, '7d', 'hourly', interval '7 days'),
  (3, '30d', 'daily', interval '30 days'),
  (4, 'all', 'daily', null)
) as periods (position, name, bars, span)
order by position;
comment on view api.global_history_periods is 'The period values of GET /api/v1/global/history/{metric}: the bar level read (half-hourly market.coin_bars_30m, hourly coin_bars_1h, daily coin_bars_1d) and the span back from now (null: everything).';

-- why: the total market history: per bar, the sum over the coins that are active now
create or replace function api.global_history(p_period text default '24h')
returns table ("time" text, marketcap double precision, volume double precision)
language plpgsql stable
as $$
#variable_conflict use_column
declare
  v_bars text;
  v_from timestamptz;
  -- an array, not a join: joined, the planner misjudges the real-time aggregate and loops
  v_active int[] := array(select c.id from market.coins c where c.status = 'active');
begin
  select p.bars, now() - p.span into v_bars, v_from from api.global_history_periods p where p.name = p_period;
  if v_bars is null then
    raise exception 'period must be 24h, 7d, 30d or all.' using errcode = 'MD422', column = 'period';
  end if;
  v_from := coalesce(v_from, '-infinity');
  -- one level per branch: a UNION ALL over the three real-time aggregates costs the planner more
  -- than the query costs to run
  if v_bars = 'half-hourly' then
    return query
    select market.iso_time(b.time), round(sum(b.marketcap), 2)::double precision, round(sum(b.volume), 2)::double precision
    from market.coin_bars_30m b
    where b.time >= v_from and b.coin_id = any(v_active) group by b.time order by b.time;
  elsif v_bars = 'hourly' then
    return query
    select market.iso_time(b.time), round(sum(b.marketcap), 2)::double precision, round(sum(b.volume), 2)::double precision
    from market.coin_bars_1h b
    where b.time >= v_from and b.coin_id = any(v_active) group by b.time order by b.time;
  else
    return query
    select market.iso_time(b.time), round(sum(b.marketcap), 2)::double precision, round(sum(b.volume), 2)::double precision
    from market.coin_bars_1d b
    where b.time >= v_from and b.coin_id = any(v_active) group by b.time order by b.time;
  end if;
end;
$$;
comment on function api.global_history(text) is 'Total marketcap and USD volume of the coins active now, per bar of the period''s level (24h: half-hourly, 7d: hourly, 30d and all: daily; see api.global_history_periods), oldest first. marketcap is the sum of the coins'' marketcap at the bar''s close, volume the sum of their volume within the bar. Endpoint: GET /api/v1/global/history/{metric} (the row projected to {time, <metric>}).';
