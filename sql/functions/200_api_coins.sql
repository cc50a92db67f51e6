-- The Coins group: the four paginated coin lists (/coins, /coins/recently-added, /coins/gainers,
-- /coins/losers), trending coins and the coin detail. Every function returns what its endpoint
-- returns, typed as the API types it: prices and supplies as decimal strings (text), marketcap,
-- volumes, changes and dominance as numbers (double precision), ranks and counts as integers,
-- instants as ISO 8601 strings in UTC. The figures come from market.coin_state, rewritten after
-- every ingest, so a list is a filter and a sort over one indexed row per coin.

-- why: the listing statuses a coin list shows when the request names none
create or replace function market.public_coin_statuses() returns text[]
language sql immutable parallel safe
as $$ select array['active', 'delisted', 'untracked'] $$;
comment on function market.public_coin_statuses() is 'Listing statuses shown by default (no status filter): every status of a coin that has been listed, i.e. active, delisted and untracked. Coins still on their way to a listing (progressing, awaiting, preparing) are not public; a list shows them only when asked for by status.';

-- why: a multi-field sort becomes one sort key per field: a `-` field is negated (numeric negation
-- is exact), and sorted nulls last, so nulls come last in both directions without building ORDER BY text
create or replace function market.coin_sort_key(
  p_field text, p_marketcap numeric, p_rank int, p_price numeric, p_volume_24h numeric,
  p_change_24h double precision, p_change_7d double precision
) returns numeric
language sql immutable parallel safe
as $$
  select case ltrim(p_field, '-')
      when 'marketcap' then p_marketcap
      when 'rank' then p_rank::numeric
      when 'price' then p_price
      when 'volume_24h' then p_volume_24h
      when 'change_24h' then p_change_24h::numeric
      when 'change_7d' then p_change_7d::numeric
    end * case when left(p_field, 1) = '-' then -1 else 1 end
$$;
comment on function market.coin_sort_key(text, numeric, int, numeric, numeric, double precision, double precision) is 'The sort value of one coin for one sort field of the coin lists (marketcap, rank, price, volume_24h, change_24h, change_7d; a leading - negates it for a descending sort). Null for no field or a null value.';

-- why: the sortable fields of the coin lists, checked in one place for the API and for analysts
create or replace function market.check_coin_sort(p_sort text[]) returns void
language plpgsql immutable
as $$
declare
  v_field text;
begin
  if coalesce(cardinality(p_sort), 0) > 6 then
    raise exception 'sort takes at most 6 fields.' using errcode = 'MD422', column = 'sort';
  end if;
  foreach v_field in array coalesce(p_sort, '{}') loop
    if v_field is null or v_field !~ '^-?(marketcap|rank|price|volume_24h|change_24h|change_7d)$' then
      raise exception 'Unknown sort field "%". Sortable: marketcap, rank, price, volume_24h, change_24h, change_7d.', v_field
        using errcode = 'MD422';
    end if;
  end loop;
end;
$$;
comment on function market.check_coin_sort(text[]) is 'Raises MD422 (HTTP 422) unless every element is a sortable coin-list field, optionally prefixed with - (at most 6).';

-- why: one rule for what a typed search matches and how closely, for the coin lists' search and the
-- console's coin fields: at thousands of coins "eth" must put Ethereum before the coins merely named so
create or replace function market.coin_search_tier(p_search text, p_slug text, p_symbol text, p_name text) returns int
language sql immutable parallel safe
as $$
  -- the substring test first: most coins fail it, and it is all they cost
  select case
    when not (strpos(lower(p_name), lower(p_search)) > 0 or strpos(lower(p_symbol), lower(p_search)) > 0 or strpos(p_slug, lower(p_search)) > 0) then null
    when lower(p_symbol) = lower(p_search) or p_slug = lower(p_search) or lower(p_name) = lower(p_search) then 0
    when starts_with(lower(p_name), lower(p_search)) or starts_with(lower(p_symbol), lower(p_search)) or starts_with(p_slug, lower(p_search)) then 1
    else 2
  end
$$;
comment on function market.coin_search_tier(text, text, text, text) is 'How a coin (slug, symbol, name) matches a search, case-insensitively: 0 the whole symbol, slug or name; 1 a prefix of one of them; 2 a substring; null no match. The coin lists show the matches by tier, then by rank (market.coin_list_order).';

-- why: the four coin lists share one filter, one selection and one ordering; only the list kind
-- differs. Ranked on ids and the figures the filters and the sort read, so that a page formats only
-- its own rows (at 20 000 coins, formatting every matched row took most of a list's time).
create or replace function market.coin_list_order(
  p_list text default 'all',
  p_type text default null,
  p_status text default null,
  p_search text default null,
  p_min_price numeric default null,
  p_max_price numeric default null,
  p_min_marketcap numeric default null,
  p_max_marketcap numeric default null,
  p_min_volume numeric default null,
  p_max_volume numeric default null,
  p_ids int[] default null,
  p_slugs text[] default null,
  p_symbols text[] default null,
  p_sort text[] default null,
  p_interval text default '24h',
  p_within int[] default null
) returns table (id int, n bigint)
language plpgsql stable
-- Planned for each call's arguments: a generic plan keeps every "p_x is null or" filter and all six
-- sort keys, per row; planned with the values, the unused ones drop out. At 20 000 coins on the
-- server 90 → 32 ms a call; at 66 coins the planning costs about 1 ms more than it saves.
set plan_cache_mode = force_custom_plan
as $$
#variable_conflict use_column
begin
  if p_list is null or p_list not in ('all', 'recent', 'gainers', 'losers') then
    raise exception 'list must be all, recent, gainers or losers.' using errcode = 'MD422';
  end if;
  if p_interval is null or p_interval not in ('24h', '7d') then
    raise exception 'interval must be 24h or 7d.' using errcode = 'MD422', column = 'interval';
  end if;
  if p_status is not null and p_status not in ('active', 'delisted', 'untracked', 'progressing', 'awaiting', 'preparing') then
    raise exception 'status must be one of active, delisted, untracked, progressing, awaiting, preparing.' using errcode = 'MD422', column = 'status';
  end if;
  perform market.check_coin_sort(p_sort);

  return query
  with filtered as (
    select c.id, c.slug, c.symbol, c.status, c.status_updated_at,
      s.price, s.marketcap, s.volume_24h, s.change_24h, s.change_7d, s.rank,
      case p_interval when '7d' then s.change_7d else s.change_24h end as change,
      market.coin_search_tier(p_search, c.slug, c.symbol, c.name) as tier
    from market.coins c
    left join market.coin_state s on s.coin_id = c.id
    where c.status = any (case when p_status is null then market.public_coin_statuses() else array[p_status] end)
      and (p_type is null or c.type = p_type)
      and (p_search is null or market.coin_search_tier(p_search, c.slug, c.symbol, c.name) is not null)
      and (p_min_price is null or s.price >= p_min_price)
      and (p_max_price is null or s.price <= p_max_price)
      and (p_min_marketcap is null or s.marketcap >= p_min_marketcap)
      and (p_max_marketcap is null or s.marketcap <= p_max_marketcap)
      and (p_min_volume is null or s.volume_24h >= p_min_volume)
      and (p_max_volume is null or s.volume_24h <= p_max_volume)
  ),
  -- not materialized: read twice (the selection and a symbol's pick), inlined into each, so that
  -- the pick costs nothing when no symbol is asked for
  movers as not materialized (
    -- a move that shows as 0.00 % is no move: such coins are neither gainers nor losers
    select f.* from filtered f
    where p_list not in ('gainers', 'losers')
       or (p_list = 'gainers' and round(f.change::numeric, 2) > 0)
       or (p_list = 'losers' and round(f.change::numeric, 2) < 0)
  ),
  picked as (
    -- a symbol selects, among the coins that pass every other filter, the best-ranked one (active
    -- first), since two coins may share a symbol; only the coins of the symbols asked for are ranked
    select distinct on (upper(m.symbol)) m.id
    from movers m
    where upper(m.symbol) = any (select upper(x) from unnest(p_symbols) x)
    order by upper(m.symbol), m.status = 'active' desc, m.rank nulls last, m.marketcap desc nulls last, m.id
  ),
  selected as (
    -- ids and slugs select exactly
    select m.* from movers m
    where (p_ids is null and p_slugs is null and p_symbols is null)
       or m.id = any (p_ids) or m.id in (select i from market.coin_ids(p_slugs) i)
       or m.id in (select p.id from picked p)
  )
  select s.id, row_number() over (order by
    -- movers are ordered by the change itself: largest gain, or largest loss, first
    case p_list when 'gainers' then -s.change when 'losers' then s.change end,
    -- a search in the ranked list, no sort asked: the closest matches first (exact, prefix, substring)
    case when p_list = 'all' and p_sort is null then s.tier end,
    -- one sort key per requested field, nulls last: an unused one is null in every row, and planned
    -- with the request's values (force_custom_plan) it is no sort key at all
    market.coin_sort_key(p_sort[1], s.marketcap, s.rank, s.price, s.volume_24h, s.change_24h, s.change_7d) nulls last,
    market.coin_sort_key(p_sort[2], s.marketcap, s.rank, s.price, s.volume_24h, s.change_24h, s.change_7d) nulls last,
    market.coin_sort_key(p_sort[3], s.marketcap, s.rank, s.price, s.volume_24h, s.change_24h, s.change_7d) nulls last,
    market.coin_sort_key(p_sort[4], s.marketcap, s.rank, s.price, s.volume_24h, s.change_24h, s.change_7d) nulls last,
    market.coin_sort_key(p_sort[5], s.marketcap, s.rank, s.price, s.volume_24h, s.change_24h, s.change_7d) nulls last,
    market.coin_sort_key(p_sort[6], s.marketcap, s.rank, s.price, s.volume_24h, s.change_24h, s.change_7d) nulls last,
    -- recently added: newest listing first, unless a sort was given. status_updated_at is the
    -- listing time of an active coin only (a delisted coin's is its delisting): active coins come
    -- first, the others (only there by a status filter or the public default) by their last change
    case when p_list = 'recent' and p_sort is null then s.status = 'active' end desc nulls last,
    case when p_list = 'recent' and p_sort is null then s.status_updated_at end desc nulls last,
    s.rank nulls last, s.marketcap desc nulls last, s.id)
  from selected s
  -- after the symbol's pick, as the lists of an exchange's or a wallet's assets number their rows
  where p_within is null or s.id = any (p_within);
end;
$$;
comment on function market.coin_list_order(text, text, text, text, numeric, numeric, numeric, numeric, numeric, numeric, int[], text[], text[], text[], text, int[]) is
'The coins a coin-list request matches, as (id, n): n their 1-based place in the list''s order. The arguments, filters, selectors and order of api.coin_rows, which formats these rows, and p_within of api.coin_list_page (only these ids, kept after a symbol''s pick).';

-- why: one row shape for every coin list, formatted only for the rows a page shows
create or replace view api.coin_list_rows as
select c.id, c.slug, c.name, c.symbol, c.type, c.status, s.rank,
  -- 0 without a coin_state row, as in the detail: the spec types volume_24h as a number
  s.price::text as price, s.marketcap::double precision as marketcap, coalesce(s.volume_24h, 0)::double precision as volume_24h,
  s.change_24h, s.change_7d, s.change_rank_24h, s.change_rank_7d,
  s.dominance, c.circulating_supply::text as circulating_supply, market.logo_url('coins', c.slug, c.logo) as logo,
  case when c.status = 'active' then market.iso_time(c.status_updated_at) end as listed_at,
  market.iso_time(s.last_updated) as last_updated
from market.coins c
left join market.coin_state s on s.coin_id = c.id;
comment on view api.coin_list_rows is 'Every coin as the coin lists show it: id, slug, name, symbol, type, status, rank, price and circulating_supply (decimal strings), marketcap (number or null), volume_24h (number, 0 without a coin_state row), change_24h, change_7d and their ranks, dominance, logo (URL), listed_at (status_updated_at for active coins, else null), last_updated (ISO 8601 UTC). Every status, public or not: the lists choose.';

create or replace function api.coin_rows(
  p_list text default 'all',
  p_type text default null,
  p_status text default null,
  p_search text default null,
  p_min_price numeric default null,
  p_max_price numeric default null,
  p_min_marketcap numeric default null,
  p_max_marketcap numeric default null,
  p_min_volume numeric default null,
  p_max_volume numeric default null,
  p_ids int[] default null,
  p_slugs text[] default null,
  p_symbols text[] default null,
  p_sort text[] default null,
  p_interval text default '24h'
) returns table (
  id int, slug text, name text, symbol text, type text, status text, rank int,
  price text, marketcap double precision, volume_24h double precision,
  change_24h double precision, change_7d double precision, change_rank_24h int, change_rank_7d int,
  dominance double precision, circulating_supply text, logo text, listed_at text, last_updated text
)
language sql stable
as $$
  select v.*
  from market.coin_list_order(p_list, p_type, p_status, p_search, p_min_price, p_max_price, p_min_marketcap,
    p_max_marketcap, p_min_volume, p_max_volume, p_ids, p_slugs, p_symbols, p_sort, p_interval) o
  join api.coin_list_rows v on v.id = o.id
  order by o.n
$$;
comment on function api.coin_rows(text, text, text, text, numeric, numeric, numeric, numeric, numeric, numeric, int[], text[], text[], text[], text) is
'Every coin matching a coin-list request, in the list''s order, typed as the API returns it (price and circulating_supply decimal strings, marketcap a number or null, volume_24h a number, 0 without a coin_state row; listed_at is status_updated_at for active coins, null for others). '
'p_list: all (GET /coins: by rank), recent (GET /coins/recently-added: active coins by status_updated_at, their listing time, newest first, then other statuses by their last status change; p_sort replaces that order), gainers / losers (change over p_interval 24h or 7d above / below 0 when rounded to 2 decimals, so a 0.00 % move is in neither; ordered by that change; p_sort only breaks ties). '
'Filters: p_type coin|token; p_status one listing status (null: the public statuses of market.public_coin_statuses()); p_search a case-insensitive substring of name, symbol or slug (market.coin_search_tier; in the all list without p_sort, exact matches of symbol, slug or name first, then prefixes, then substrings, each by rank); inclusive USD bounds on price, marketcap and 24h volume (a null figure never passes a bound); '
'selectors p_ids, p_slugs, p_symbols (case-insensitive; an ambiguous symbol picks the best-ranked active coin among the matches). '
'p_sort: fields marketcap, rank, price, volume_24h, change_24h, change_7d, a leading - for descending; nulls last either way. Ties: rank, marketcap, id. '
'Paginated as the endpoints return it: api.coin_list.';

-- why: the paginated envelope's data and total from one ranking of the matching coins, as columns: the
-- API sends the rows' JSON text as it is and needs the total and the page's count beside it unparsed
create or replace function api.coin_list_page(
  p_list text default 'all',
  p_type text default null,
  p_status text default null,
  p_search text default null,
  p_min_price numeric default null,
  p_max_price numeric default null,
  p_min_marketcap numeric default null,
  p_max_marketcap numeric default null,
  p_min_volume numeric default null,
  p_max_volume numeric default null,
  p_ids int[] default null,
  p_slugs text[] default null,
  p_symbols text[] default null,
  p_sort text[] default null,
  p_interval text default '24h',
  p_page int default 1,
  p_per_page int default 100,
  p_within int[] default null
) returns table (total bigint, returned int, data json)
language plpgsql stable
as $$
begin
  if p_page is null or p_page < 1 or p_per_page is null or p_per_page < 1 then
    raise exception 'page and per_page must be at least 1.' using errcode = 'MD422', column = 'page';
  end if;
  return query
  with matched as materialized (
    select o.id, o.n
    from market.coin_list_order(p_list, p_type, p_status, p_search, p_min_price, p_max_price, p_min_marketcap,
      p_max_marketcap, p_min_volume, p_max_volume, p_ids, p_slugs, p_symbols, p_sort, p_interval, p_within) o
  )
  select a.n_total, p.n_page, p.page_rows
  from (select count(*) as n_total from matched) a,
    (select count(*)::int as n_page, coalesce(json_agg(v order by m.n), '[]'::json) as page_rows
     from matched m
     join api.coin_list_rows v on v.id = m.id
     where market.on_page(m.n, p_page, p_per_page)) p;
end;
$$;
comment on function api.coin_list_page(text, text, text, text, numeric, numeric, numeric, numeric, numeric, numeric, int[], text[], text[], text[], text, int, int, int[]) is
'One page of a coin list: total (matching rows), returned (rows on this page) and data (a JSON array of rows of api.coin_rows). '
'The same arguments as api.coin_rows plus p_page (1-based), p_per_page and p_within (only these coin ids, e.g. market.exchange_coin_ids(slug); null: all). '
'Endpoints: GET /api/v1/coins (p_list all), /coins/recently-added (recent), /coins/gainers (gainers), /coins/losers (losers), /exchanges/{slug}/assets and /wallets/{slug}/assets (p_within). '
'As one JSON object: api.coin_list.';

-- why: a typed coin field asks at every key stroke for a few suggestions: the closest matches
-- (exact and prefix) are read through the search indexes, and every coin only when they fall short
create or replace function market.coin_search(p_search text, p_limit int default 10) returns table (id int, n bigint)
language plpgsql stable
-- planned with the typed text, so that its LIKE prefixes use the indexes of migration 000157
set plan_cache_mode = force_custom_plan
as $$
#variable_conflict use_column
declare
  v_prefix text := market.like_escape(lower(p_search)) || '%';
  v_found bigint;
begin
  if p_search is null or p_limit is null or p_limit < 1 or p_limit > 100 then
    raise exception 'A search and a limit from 1 to 100 are required.' using errcode = 'MD422';
  end if;
  -- the tiers 0 and 1 of market.coin_search_tier (exact and prefix), in the coin list's order
  -- (market.coin_list_order: tier, rank, marketcap, id), which puts them before every other match
  return query
  select x.id, row_number() over (order by x.tier, x.rank nulls last, x.marketcap desc nulls last, x.id)
  from (
    select c.id, market.coin_search_tier(p_search, c.slug, c.symbol, c.name) as tier, s.rank, s.marketcap
    from market.coins c
    left join market.coin_state s on s.coin_id = c.id
    where c.status = any (market.public_coin_statuses())
      and (lower(c.name) like v_prefix or lower(c.symbol) like v_prefix or c.slug like v_prefix)
  ) x
  order by 2
  limit p_limit;
  get diagnostics v_found = row_count;
  if v_found < p_limit then
    -- all the close matches are out: the rest are the list's next rows, substrings, found by reading every coin
    return query select o.id, o.n from market.coin_list_order(p_search => p_search) o where o.n > v_found and o.n <= p_limit;
  end if;
end;
$$;
comment on function market.coin_search(text, int) is
'The first p_limit (1-100) coins of GET /coins?search=p_search, as (id, n): the same coins in the same order as market.coin_list_order (p_search only). The exact and prefix matches are found through the name, symbol and slug indexes; every coin is read only when they number fewer than p_limit. For typed coin fields (the console''s suggestions).';

-- why: the page as the endpoints' JSON answers it, for analysts
create or replace function api.coin_list(
  p_list text default 'all',
  p_type text default null,
  p_status text default null,
  p_search text default null,
  p_min_price numeric default null,
  p_max_price numeric default null,
  p_min_marketcap numeric default null,
  p_max_marketcap numeric default null,
  p_min_volume numeric default null,
  p_max_volume numeric default null,
  p_ids int[] default null,
  p_slugs text[] default null,
  p_symbols text[] default null,
  p_sort text[] default null,
  p_interval text default '24h',
  p_page int default 1,
  p_per_page int default 100,
  p_within int[] default null
) returns json
language sql stable
as $$
  select json_build_object('total', p.total, 'data', p.data)
  from api.coin_list_page(p_list, p_type, p_status, p_search, p_min_price, p_max_price, p_min_marketcap,
    p_max_marketcap, p_min_volume, p_max_volume, p_ids, p_slugs, p_symbols, p_sort, p_interval, p_page, p_per_page, p_within) p;
$$;
comment on function api.coin_list(text, text, text, text, numeric, numeric, numeric, numeric, numeric, numeric, int[], text[], text[], text[], text, int, int, int[]) is
'One page of a coin list as JSON {"total": n, "data": [rows of api.coin_rows]}: api.coin_list_page as one object, the same arguments.';

-- why: trending needs a score computed from our own data (we record no page views): a coin trends
-- when its volume surges above its usual level and its price moves
create or replace function api.trending_coins(p_limit int default 10)
returns table (
  id int, slug text, name text, symbol text, rank int, price text, marketcap double precision,
  logo text, score int
)
language plpgsql stable
as $$
#variable_conflict use_column
declare
  v_today timestamptz := date_trunc('day', now(), 'UTC');
begin
  if p_limit is null or p_limit < 1 or p_limit > 20 then
    raise exception 'limit must be from 1 to 20.' using errcode = 'MD422', column = 'limit';
  end if;
  return query
  with usual as (
    -- the average daily volume of the 7 complete UTC days before today
    select b.coin_id, avg(b.volume) as daily_volume
    from market.coin_bars_1d b
    where b.time >= v_today - interval '7 days' and b.time < v_today
    group by b.coin_id
  ),
  scored as (
    select c.id, c.slug, c.name, c.symbol, s.rank, s.price, s.marketcap, market.logo_url('coins', c.slug, c.logo) as logo,
      round(
        50 * least(greatest(coalesce(s.volume_24h / nullif(u.daily_volume, 0), 1) - 1, 0), 3) / 3
        + 50 * least(abs(coalesce(s.change_24h, 0))::numeric, 20) / 20
      )::int as score
    from market.coins c
    join market.coin_state s on s.coin_id = c.id
    left join usual u on u.coin_id = c.id
    where c.status = 'active' and s.rank is not null
  )
  select x.id, x.slug, x.name, x.symbol, x.rank, x.price::text, x.marketcap::double precision, x.logo, x.score
  from scored x
  order by x.score desc, x.rank
  limit p_limit;
end;
$$;
comment on function api.trending_coins(int) is
'The p_limit (1-20) trending coins: active ranked coins by score desc, then rank. score (0-100, integer) = 50 * min(max(volume surge - 1, 0), 3) / 3 + 50 * min(|change_24h|, 20) / 20, '
'where volume surge = 24h volume / average daily volume of the 7 complete UTC days before today (1 without history): a coin trading four times its usual volume and moving 20 % scores 100. '
'Rows (id, slug, name, symbol, rank, price decimal string, marketcap number, logo, score). Endpoint: GET /api/v1/coins/trending.';

-- why: the coin detail page in one JSON object: list fields plus supply, today, extremes, links, contracts, description
create or replace function api.coin_detail(p_slug text, p_locale text default 'en') returns json
language plpgsql stable
as $$
declare
  v_coin market.coins;
  v_state market.coin_state;
  v_description record;
begin
  select * into v_coin from market.coins where id = market.coin_id(p_slug);
  select * into v_state from market.coin_state where coin_id = v_coin.id;
  select d.locale, d.html into v_description from market.coin_description(v_coin.id, coalesce(p_locale, 'en')) d;

  return json_build_object(
    'id', v_coin.id,
    'slug', v_coin.slug,
    'name', v_coin.name,
    'symbol', v_coin.symbol,
    'type', v_coin.type,
    'status', v_coin.status,
    'rank', v_state.rank,
    'price', v_state.price::text,
    'marketcap', v_state.marketcap::double precision,
    'fully_diluted_valuation', v_state.fully_diluted_valuation::double precision,
    'volume_24h', coalesce(v_state.volume_24h, 0)::double precision,
    'change_24h', v_state.change_24h,
    'change_7d', v_state.change_7d,
    'change_rank_24h', v_state.change_rank_24h,
    'change_rank_7d', v_state.change_rank_7d,
    'dominance', v_state.dominance,
    'circulating_supply', v_coin.circulating_supply::text,
    'supply', json_build_object(
      'circulating', v_coin.circulating_supply::text,
      'total', v_coin.total_supply::text,
      'max', v_coin.max_supply::text),
    'today', json_build_object(
      'open', v_state.today_open::text,
      'high', v_state.today_high::text,
      'low', v_state.today_low::text,
      'close', v_state.today_close::text),
    'all_time_high', json_build_object(
      'price', v_state.ath::text,
      'date', market.iso_date((v_state.ath_at at time zone 'UTC')::date),
      'percent_from', round((v_state.price / nullif(v_state.ath, 0) - 1) * 100, 2)::double precision),
    'all_time_low', json_build_object(
      'price', v_state.atl::text,
      'date', market.iso_date((v_state.atl_at at time zone 'UTC')::date),
      'percent_from', round((v_state.price / nullif(v_state.atl, 0) - 1) * 100, 2)::double precision),
    -- markets of the coin as base or quote (market.tickers); published wallets supporting it (api.wallets)
    'counts', (
      select json_build_object('exchanges', count(distinct t.exchange_id)::int, 'pairs', count(distinct t.pair_id)::int,
        'tickers', count(*)::int,
        'wallets', (select count(*)::int from market.wallet_assets a join api.wallets w on w.id = a.wallet_id where a.coin_slug = v_coin.slug))
      from market.tickers t where t.base_coin_id = v_coin.id or t.quote_coin_id = v_coin.id),
    'decimals', v_coin.decimals,
    'genesis_date', market.iso_date(v_coin.genesis_date),
    'description', v_description.html,
    'description_locale', v_description.locale,
    'links', coalesce((
      select json_agg(json_build_object('type', l.type, 'url', l.url) order by l.position, l.type, l.url)
      from market.coin_links l where l.coin_id = v_coin.id), '[]'::json),
    'contracts', coalesce((
      select json_agg(json_build_object('chain', k.chain, 'address', k.address, 'decimals', coalesce(k.decimals, v_coin.decimals))
                      order by k.chain)
      from market.coin_contracts k where k.coin_id = v_coin.id), '[]'::json),
    'logo', market.logo_url('coins', v_coin.slug, v_coin.logo),
    'listed_at', case when v_coin.status = 'active' then market.iso_time(v_coin.status_updated_at) end,
    'last_updated', market.iso_time(v_state.last_updated)
  );
end;
$$;
comment on function api.coin_detail(text, text) is
'The coin with this slug as JSON: the list-row fields plus type, status, fully_diluted_valuation (price times max supply, else total supply; null when neither is known), '
'supply {circulating, total, max}, today {open, high, low, close}, all_time_high / all_time_low {price, date, percent_from (percent distance of the current price)}, '
'counts {exchanges, pairs, tickers: venues, pairs and markets listing the coin as base or quote; wallets}, decimals, genesis_date, links [{type, url}], contracts [{chain, address, decimals}] and the HTML description in p_locale, else its language, else English '
'(description_locale says which won; null without any). Prices and supplies are decimal strings. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}.';
