-- The Exchanges group: the ranked venue list (/exchanges), a venue's detail, trust score, history,
-- sparkline and listed coins. Typed as the API types them: USD volumes, dominance, changes and
-- scores as numbers, ranks and counts as integers, instants as ISO 8601 strings in UTC. The
-- figures come from market.exchange_state (market.refresh_exchange_state), history from
-- market.exchange_volumes and its aggregates.

-- why: one sort key per requested field, sorted nulls last, so that nulls come last in both
-- directions (as for the coin lists, market.coin_sort_key)
create or replace function market.exchange_sort_key(
  p_field text, p_volume numeric, p_rank int, p_dominance double precision, p_change_24h double precision,
  p_change_7d double precision, p_pairs int, p_assets int
) returns numeric
language sql immutable parallel safe
as $$
  select case ltrim(p_field, '-')
      when 'volume' then p_volume
      when 'rank' then p_rank::numeric
      when 'volume_dominance' then p_dominance::numeric
      when 'change_24h' then p_change_24h::numeric
      when 'change_7d' then p_change_7d::numeric
      when 'pairs' then p_pairs::numeric
      when 'assets' then p_assets::numeric
    end * case when left(p_field, 1) = '-' then -1 else 1 end
$$;
comment on function market.exchange_sort_key(text, numeric, int, double precision, double precision, double precision, int, int) is 'The sort value of one venue for one sort field of /exchanges (volume, rank, volume_dominance, change_24h, change_7d, pairs, assets; a leading - negates it). Null for no field or a null value.';

-- why: the venue list's filters, row shape and order in one place for the endpoint and analysts
create or replace function api.exchange_rows(
  p_type text default null,
  p_search text default null,
  p_min_pairs int default null,
  p_max_pairs int default null,
  p_min_assets int default null,
  p_max_assets int default null,
  p_min_volume numeric default null,
  p_max_volume numeric default null,
  p_ids int[] default null,
  p_slugs text[] default null,
  p_sort text[] default null
) returns table (
  id int, slug text, name text, type text, rank int, volume_24h double precision, volume_dominance double precision,
  change_24h double precision, change_7d double precision, change_rank_24h int, change_rank_7d int,
  pairs int, assets int, logo text, last_updated text
)
language plpgsql stable
as $$
#variable_conflict use_column
declare
  v_field text;
begin
  if p_type is not null and p_type not in ('cex', 'dex') then
    raise exception 'type must be cex or dex.' using errcode = 'MD422', column = 'type';
  end if;
  if coalesce(cardinality(p_sort), 0) > 7 then
    raise exception 'sort takes at most 7 fields.' using errcode = 'MD422', column = 'sort';
  end if;
  foreach v_field in array coalesce(p_sort, '{}') loop
    if v_field is null or v_field !~ '^-?(volume|rank|volume_dominance|change_24h|change_7d|pairs|assets)$' then
      raise exception 'Unknown sort field "%". Sortable: volume, rank, volume_dominance, change_24h, change_7d, pairs, assets.', v_field
        using errcode = 'MD422';
    end if;
  end loop;

  return query
  select e.id, e.slug, e.name, e.type, s.rank, coalesce(s.volume_24h, 0)::double precision, s.volume_dominance,
    s.change_24h, s.change_7d, s.change_rank_24h, s.change_rank_7d, coalesce(s.pairs, 0), coalesce(s.assets, 0),
    market.logo_url('exchanges', e.slug, e.logo), market.iso_time(s.last_updated)
  from market.exchanges e
  left join market.exchange_state s on s.exchange_id = e.id
  where (p_type is null or e.type = p_type)
    and (p_search is null or strpos(lower(e.name), lower(p_search)) > 0 or strpos(e.slug, lower(p_search)) > 0)
    and (p_min_pairs is null or coalesce(s.pairs, 0) >= p_min_pairs)
    and (p_max_pairs is null or coalesce(s.pairs, 0) <= p_max_pairs)
    and (p_min_assets is null or coalesce(s.assets, 0) >= p_min_assets)
    and (p_max_assets is null or coalesce(s.assets, 0) <= p_max_assets)
    and (p_min_volume is null or coalesce(s.volume_24h, 0) >= p_min_volume)
    and (p_max_volume is null or coalesce(s.volume_24h, 0) <= p_max_volume)
    and ((p_ids is null and p_slugs is null) or e.id = any (p_ids) or e.id in (select i from market.exchange_ids(p_slugs) i))
  order by
    -- an unused field's key is null in every row
    market.exchange_sort_key(p_sort[1], s.volume_24h, s.rank, s.volume_dominance, s.change_24h, s.change_7d, s.pairs, s.assets) nulls last,
    market.exchange_sort_key(p_sort[2], s.volume_24h, s.rank, s.volume_dominance, s.change_24h, s.change_7d, s.pairs, s.assets) nulls last,
    market.exchange_sort_key(p_sort[3], s.volume_24h, s.rank, s.volume_dominance, s.change_24h, s.change_7d, s.pairs, s.assets) nulls last,
    market.exchange_sort_key(p_sort[4], s.volume_24h, s.rank, s.volume_dominance, s.change_24h, s.change_7d, s.pairs, s.assets) nulls last,
    market.exchange_sort_key(p_sort[5], s.volume_24h, s.rank, s.volume_dominance, s.change_24h, s.change_7d, s.pairs, s.assets) nulls last,
    market.exchange_sort_key(p_sort[6], s.volume_24h, s.rank, s.volume_dominance, s.change_24h, s.change_7d, s.pairs, s.assets) nulls last,
    market.exchange_sort_key(p_sort[7], s.volume_24h, s.rank, s.volume_dominance, s.change_24h, s.change_7d, s.pairs, s.assets) nulls last,
    s.rank nulls last, s.volume_24h desc nulls last, e.id;
end;
$$;
comment on function api.exchange_rows(text, text, int, int, int, int, numeric, numeric, int[], text[], text[]) is
'Every venue matching a /exchanges request, in its order, typed as the API returns it. Filters: p_type cex|dex (from the taxonomy; a venue of unknown type matches neither); p_search a case-insensitive substring of name or slug; inclusive bounds on pairs, assets and 24h USD volume; selectors p_ids and p_slugs. '
'p_sort: fields volume, rank, volume_dominance, change_24h, change_7d, pairs, assets, a leading - for descending, nulls last either way; then rank (unranked venues last), volume, id. Paginated: api.exchange_list.';

-- why: the paginated envelope's data and total from one scan
create or replace function api.exchange_list(
  p_type text default null,
  p_search text default null,
  p_min_pairs int default null,
  p_max_pairs int default null,
  p_min_assets int default null,
  p_max_assets int default null,
  p_min_volume numeric default null,
  p_max_volume numeric default null,
  p_ids int[] default null,
  p_slugs text[] default null,
  p_sort text[] default null,
  p_page int default 1,
  p_per_page int default 100
) returns json
language sql stable
as $$
  with matched as materialized (
    select r, row_number() over () as n
    from api.exchange_rows(p_type, p_search, p_min_pairs, p_max_pairs, p_min_assets, p_max_assets, p_min_volume,
      p_max_volume, p_ids, p_slugs, p_sort) r
  )
  select json_build_object(
    'total', (select count(*) from matched),
    'data', coalesce((
      select json_agg(m.r order by m.n) from matched m
      where market.on_page(m.n, p_page, p_per_page)
    ), '[]'::json))
$$;
comment on function api.exchange_list(text, text, int, int, int, int, numeric, numeric, int[], text[], text[], int, int) is
'One page of the venue list as JSON {"total": n, "data": [rows of api.exchange_rows]}: the same arguments plus p_page (1-based) and p_per_page. Endpoint: GET /api/v1/exchanges.';

-- why: the venue detail in one JSON object: the list fields plus type, founding, location, website
create or replace function api.exchange_detail(p_slug text) returns json
language sql stable
as $$
  select json_build_object(
    'id', e.id, 'slug', e.slug, 'name', e.name, 'type', e.type, 'status', e.status, 'rank', s.rank,
    'volume_24h', coalesce(s.volume_24h, 0)::double precision, 'volume_dominance', s.volume_dominance,
    'change_24h', s.change_24h, 'change_7d', s.change_7d,
    'change_rank_24h', s.change_rank_24h, 'change_rank_7d', s.change_rank_7d,
    'pairs', coalesce(s.pairs, 0), 'assets', coalesce(s.assets, 0), 'tickers', coalesce(s.tickers, 0),
    'established', market.iso_date(e.established), 'location', e.location, 'website', e.website, 'logo', market.logo_url('exchanges', e.slug, e.logo),
    'taxonomy', to_json(e.taxonomy), 'verified', e.verified, 'last_updated', market.iso_time(s.last_updated))
  from market.exchanges e
  left join market.exchange_state s on s.exchange_id = e.id
  where e.id = market.exchange_id(p_slug)
$$;
comment on function api.exchange_detail(text) is
'The venue with this slug as JSON: id, slug, name, type (cex, dex or null: derived from taxonomy), status, rank (null: unranked), volume_24h (USD), volume_dominance (percent), change_24h / change_7d (percent change of the 24h volume), change_rank_24h / change_rank_7d (places gained), pairs, assets, tickers, established, location, website, logo, taxonomy, verified (false: read through a ccxt id beyond the supported venues, market.exchanges.verified), last_updated. Unknown slug: MD404. Endpoint: GET /api/v1/exchanges/{slug}.';

-- why: the stored trust score with its components, null for an unranked venue
create or replace function api.exchange_trust_score(p_slug text) returns json
language sql stable
as $$
  select json_build_object('exchange', e.slug, 'score', s.trust_score, 'breakdown', s.trust_breakdown)
  from market.exchanges e
  left join market.exchange_state s on s.exchange_id = e.id
  where e.id = market.exchange_id(p_slug)
$$;
comment on function api.exchange_trust_score(text) is
'{"exchange": slug, "score": 0-10 (one decimal), "breakdown": {rank, volume, age, volume_trend, stability, rank_stability, ticker_health, pairs, community, assets, dominance, market_breadth, transparency}, each 0-10} for the venue, as computed by market.exchange_trust_score() at the last refresh; score and breakdown are null for an unranked venue (inactive, or no volume in 24 hours). Unknown slug: MD404. Endpoint: GET /api/v1/exchanges/{slug}/trust-score.';

-- why: the history intervals and their retention, stated once for the endpoint's meta and analysts
create or replace view api.exchange_history_intervals (name, source, retention) as
values ('minutely', 'market.exchange_volumes', '8 days'),
  ('hourly', 'market.exchange_volumes_1h', '6 months'),
  ('daily', 'market.exchange_volumes_1d', 'forever');
comment on view api.exchange_history_intervals is 'The intervals of /exchanges/{slug}/history: the table or aggregate each reads and how long it is kept.';

-- why: one venue's snapshot series at an interval, the newest p_limit rows of the window, oldest first
create or replace function api.exchange_history(
  p_slug text,
  p_interval text default 'daily',
  p_start timestamptz default null,
  p_end timestamptz default null,
  p_limit int default 1000
) returns table (
  "time" text, volume_24h double precision, volume_dominance double precision, rank int, pairs int, assets int
)
language plpgsql stable
as $$
#variable_conflict use_column
declare
  v_id int := market.exchange_id(p_slug);
begin
  if p_interval is null or p_interval not in ('minutely', 'hourly', 'daily') then
    raise exception 'interval must be minutely, hourly or daily.' using errcode = 'MD422', column = 'interval';
  end if;
  if p_limit is null or p_limit < 1 or p_limit > 2000 then
    raise exception 'limit must be from 1 to 2000.' using errcode = 'MD422', column = 'limit';
  end if;
  return query
  select market.iso_time(h.time), h.volume_24h::double precision, h.volume_dominance, h.rank, h.pairs, h.assets
  from (
    select x.* from (
      select m.time, m.volume_24h, m.volume_dominance, m.rank, m.pairs, m.assets
      from market.exchange_volumes m where p_interval = 'minutely' and m.exchange_id = v_id
        and (p_start is null or m.time >= p_start) and (p_end is null or m.time <= p_end)
      union all
      select m.time, m.volume_24h, m.volume_dominance, m.rank, m.pairs, m.assets
      from market.exchange_volumes_1h m where p_interval = 'hourly' and m.exchange_id = v_id
        and (p_start is null or m.time >= p_start) and (p_end is null or m.time <= p_end)
      union all
      select m.time, m.volume_24h, m.volume_dominance, m.rank, m.pairs, m.assets
      from market.exchange_volumes_1d m where p_interval = 'daily' and m.exchange_id = v_id
        and (p_start is null or m.time >= p_start) and (p_end is null or m.time <= p_end)
    ) x
    order by x.time desc
    limit p_limit
  ) h
  order by h.time;
end;
$$;
comment on function api.exchange_history(text, text, timestamptz, timestamptz, int) is
'The venue''s snapshots at p_interval (minutely: market.exchange_volumes, kept 8 days; hourly: 6 months; daily: forever; an aggregate bucket holds its last snapshot) in [p_start, p_end]: the newest p_limit (1-2000) rows, oldest first. '
'Rows (time, volume_24h USD, volume_dominance percent, rank, pairs, assets). Unknown slug: MD404. Endpoint: GET /api/v1/exchanges/{slug}/history.';

-- why: a light volume series for a chart row: at most 480 points plus the true extremes of the period
create or replace function api.exchange_sparkline(p_slug text, p_period text default '7d') returns json
language plpgsql stable
as $$
declare
  v_id int := market.exchange_id(p_slug);
  v_span interval;
  v_result json;
begin
  v_span := case p_period when '24h' then interval '24 hours' when '7d' then interval '7 days' when '30d' then interval '30 days'
    when '60d' then interval '60 days' when '90d' then interval '90 days' when '180d' then interval '180 days'
    when '365d' then interval '365 days' end;
  if v_span is null then
    raise exception 'period must be one of 24h, 7d, 30d, 60d, 90d, 180d, 365d.' using errcode = 'MD422', column = 'period';
  end if;
  with series as materialized (
    select m.time, m.volume_24h from market.exchange_volumes m
    where p_period = '24h' and m.exchange_id = v_id and m.time > now() - v_span
    union all
    select m.time, m.volume_24h from market.exchange_volumes_1h m
    where p_period in ('7d', '30d', '60d', '90d', '180d') and m.exchange_id = v_id and m.time > now() - v_span
    union all
    select m.time, m.volume_24h from market.exchange_volumes_1d m
    where p_period = '365d' and m.exchange_id = v_id and m.time > now() - v_span
  ),
  numbered as (
    select s.*, row_number() over (order by s.time desc) - 1 as back, count(*) over () as n from series s
  ),
  -- every k-th reading counted back from the newest, so the latest one is always shown
  sampled as (
    select * from numbered where back % ceil(n / 480.0)::int = 0
  )
  select json_build_object(
    'points', coalesce((select json_agg(json_build_object('time', market.iso_time(p.time), 'volume', p.volume_24h::double precision) order by p.time) from sampled p), '[]'::json),
    'low', (select min(volume_24h)::double precision from series),
    'high', (select max(volume_24h)::double precision from series),
    'change', (select round(((last(s.volume_24h, s.time) / nullif(first(s.volume_24h, s.time), 0) - 1) * 100)::numeric, 2)::double precision from series s))
  into v_result;
  return v_result;
end;
$$;
comment on function api.exchange_sparkline(text, text) is
'The venue''s 24h-volume series over p_period (24h from the minute snapshots, 7d-180d hourly, 365d daily) as {"points": [{time, volume}] (at most 480, oldest first, always including the newest), "low", "high" (extremes of the whole period), "change" (percent from the first to the last reading)}. Unknown slug: MD404. Endpoint: GET /api/v1/exchanges/{slug}/sparkline.';

-- why: /exchanges/{slug}/assets is the coin list restricted to the venue's coins (api.coin_list p_within)
create or replace function market.exchange_coin_ids(p_slug text) returns int[]
language plpgsql stable
as $$
declare
  v_id int := market.exchange_id(p_slug);
begin
  return (
    select coalesce(array_agg(distinct c.coin_id), '{}')
    from market.tickers t
    cross join lateral (values (t.base_coin_id), (t.quote_coin_id)) as c (coin_id)
    where t.exchange_id = v_id and c.coin_id is not null);
end;
$$;
comment on function market.exchange_coin_ids(text) is 'Ids of the coins the venue lists as base or quote of any of its markets (an empty array when none). Unknown slug: MD404.';
