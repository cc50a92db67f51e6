-- The Markets group: tickers (per-venue markets: /tickers, /exchanges/{slug}/tickers,
-- /coins/{slug}/markets), pairs (venue-aggregated: /pairs, /pairs/{id}) and a coin's raw
-- per-venue trading symbols (/coins/{slug}/symbols). All snapshot data from market.tickers and
-- market.pairs; prices are decimal strings (text), USD volumes, spreads and changes numbers.

create or replace view api.ticker_rows as
select t.id, e.id as exchange_id, e.slug as exchange, e.name as exchange_name, t.pair_id,
  b.symbol || '/' || t.quote_symbol as symbol, t.exchange_symbol,
  b.symbol as base, b.slug as base_slug, t.quote_symbol as quote, q.slug as quote_slug,
  t.instrument, t.price::text as price, t.price_usd::text as price_usd, t.bid::text as bid, t.ask::text as ask,
  t.spread, t.volume_base::text as volume, t.volume_usd::double precision as volume_usd, t.change_24h,
  market.iso_time(t.last_trade_at) as last_trade_at, market.iso_time(t.updated_at) as updated,
  -- for filtering and sorting, not shown
  t.base_coin_id, t.quote_coin_id, t.volume_usd as volume_usd_exact, t.price_usd as price_usd_exact, t.updated_at
from market.tickers t
join market.exchanges e on e.id = t.exchange_id
join market.coins b on b.id = t.base_coin_id
left join market.coins q on q.id = t.quote_coin_id;
comment on view api.ticker_rows is 'Every ticker as the API shows it: venue (id, slug, name), pair id, symbol (BASE/QUOTE), exchange_symbol (raw, as the venue spells it), base and quote (symbols and coin slugs; quote_slug null for fiat), instrument, price / bid / ask in quote units and price_usd (decimal strings), spread (percent), volume (24h, base units, decimal string), volume_usd (number), change_24h (percent), last_trade_at, updated. The trailing columns serve filters and sorts.';

-- why: the sort key of one ticker for one field of the ticker lists (nulls last either way)
create or replace function market.ticker_sort_key(p_field text, p_volume numeric, p_change double precision, p_price numeric, p_updated timestamptz)
returns numeric
-- stable, as extract(epoch from timestamptz) is: an immutable SQL function around a stable call is
-- never inlined, and then runs as a function call per ticker (most of a ticker list's time)
language sql stable parallel safe
as $$
  select case ltrim(p_field, '-')
      when 'volume_usd' then p_volume
      when 'change_24h' then p_change::numeric
      when 'price_usd' then p_price
      when 'updated' then extract(epoch from p_updated)
    end * case when left(p_field, 1) = '-' then -1 else 1 end
$$;
comment on function market.ticker_sort_key(text, numeric, double precision, numeric, timestamptz) is 'The sort value of a ticker for volume_usd, change_24h, price_usd or updated (a leading - negates it).';

-- why: the three ticker lists share filters, row shape and order; one page as columns, its rows'
-- JSON text compact (a row's JSON, not json_build_object's spacing), so the API sends it as it is
create or replace function api.ticker_list_page(
  p_scope_exchange text default null,
  p_scope_coin text default null,
  p_exchange text default null,
  p_pair int default null,
  p_instrument text default null,
  p_search text default null,
  p_min_volume numeric default null,
  p_max_volume numeric default null,
  p_min_change double precision default null,
  p_max_change double precision default null,
  p_sort text[] default null,
  p_page int default 1,
  p_per_page int default 100
) returns table (total bigint, returned int, data json)
language plpgsql stable
as $$
#variable_conflict use_column
declare
  v_exchange int := case when p_scope_exchange is not null then market.exchange_id(p_scope_exchange) end;
  v_coin int := case when p_scope_coin is not null then market.coin_id(p_scope_coin) end;
  -- a filter, not a scope: an unknown venue matches no ticker (null equals nothing) instead of a 404
  v_filter_exchange int := (select i from market.exchange_ids(array[p_exchange]) i);
  v_sort text[] := coalesce(p_sort, array['-volume_usd']);
  v_field text;
begin
  if p_instrument is not null and p_instrument not in ('spot', 'margin', 'swap', 'future', 'option') then
    raise exception 'instrument must be one of future, option, swap, spot, margin.' using errcode = 'MD422';
  end if;
  if cardinality(v_sort) > 4 then
    raise exception 'sort takes at most 4 fields.' using errcode = 'MD422', column = 'sort';
  end if;
  foreach v_field in array v_sort loop
    if v_field is null or v_field !~ '^-?(volume_usd|change_24h|price_usd|updated)$' then
      raise exception 'Unknown sort field "%". Sortable: volume_usd, change_24h, price_usd, updated.', v_field using errcode = 'MD422';
    end if;
  end loop;
  -- Ranked on the few columns the filters and the sort read: the page's rows alone are then built
  -- (text prices, ISO times, names), where building every matched row first cost most of the call.
  return query
  with matched as materialized (
    select t.id, row_number() over (order by
        -- up to 4 sort fields, nulls last: the missing ones are null in every row, so they never decide
        market.ticker_sort_key(v_sort[1], t.volume_usd_exact, t.change_24h, t.price_usd_exact, t.updated_at) nulls last,
        market.ticker_sort_key(v_sort[2], t.volume_usd_exact, t.change_24h, t.price_usd_exact, t.updated_at) nulls last,
        market.ticker_sort_key(v_sort[3], t.volume_usd_exact, t.change_24h, t.price_usd_exact, t.updated_at) nulls last,
        market.ticker_sort_key(v_sort[4], t.volume_usd_exact, t.change_24h, t.price_usd_exact, t.updated_at) nulls last,
        t.volume_usd_exact desc, t.id) as n
    from api.ticker_rows t
    where (v_exchange is null or t.exchange_id = v_exchange)
      and (v_coin is null or t.base_coin_id = v_coin or t.quote_coin_id = v_coin)
      and (p_exchange is null or t.exchange_id = v_filter_exchange)
      and (p_pair is null or t.pair_id = p_pair)
      and (p_instrument is null or t.instrument = p_instrument)
      and (p_search is null or strpos(upper(t.symbol), upper(p_search)) > 0 or strpos(upper(t.exchange_symbol), upper(p_search)) > 0)
      and (p_min_volume is null or t.volume_usd_exact >= p_min_volume)
      and (p_max_volume is null or t.volume_usd_exact <= p_max_volume)
      and (p_min_change is null or t.change_24h >= p_min_change)
      and (p_max_change is null or t.change_24h <= p_max_change)
  )
  select a.n_total, p.n_page, p.page_rows
  from (select count(*) as n_total from matched) a,
    (select count(*)::int as n_page, coalesce(json_agg(r order by m.n), '[]'::json) as page_rows
     from matched m
     cross join lateral (
       select t.id, t.exchange_id, t.exchange, t.exchange_name, t.pair_id, t.symbol, t.exchange_symbol,
         t.base, t.base_slug, t.quote, t.quote_slug, t.instrument, t.price, t.price_usd, t.bid, t.ask,
         t.spread, t.volume, t.volume_usd, t.change_24h, t.last_trade_at, t.updated
       from api.ticker_rows t where t.id = m.id) r
     where market.on_page(m.n, p_page, p_per_page)) p;
end;
$$;
comment on function api.ticker_list_page(text, text, text, int, text, text, numeric, numeric, double precision, double precision, text[], int, int) is
'One page of tickers: total (matching rows), returned (rows on this page) and data (a JSON array of the shown columns of api.ticker_rows). As one JSON object: api.ticker_list. Scope: p_scope_exchange (GET /exchanges/{slug}/tickers) or p_scope_coin (GET /coins/{slug}/markets: the coin as base or quote), each MD404 when unknown; neither: GET /tickers. '
'Filters: p_exchange (venue slug), p_pair (pair id), p_instrument (spot, margin, swap, future, option), p_search (substring of the symbol or the raw symbol, case-insensitive), inclusive bounds on 24h USD volume and 24h change. '
'p_sort: volume_usd, change_24h, price_usd, updated, a leading - for descending (default -volume_usd), nulls last; ties by volume, id.';

-- why: the page as the endpoints' JSON answers it, for analysts
create or replace function api.ticker_list(
  p_scope_exchange text default null,
  p_scope_coin text default null,
  p_exchange text default null,
  p_pair int default null,
  p_instrument text default null,
  p_search text default null,
  p_min_volume numeric default null,
  p_max_volume numeric default null,
  p_min_change double precision default null,
  p_max_change double precision default null,
  p_sort text[] default null,
  p_page int default 1,
  p_per_page int default 100
) returns json
language sql stable
as $$
  select json_build_object('total', p.total, 'data', p.data)
  from api.ticker_list_page(p_scope_exchange, p_scope_coin, p_exchange, p_pair, p_instrument, p_search,
    p_min_volume, p_max_volume, p_min_change, p_max_change, p_sort, p_page, p_per_page) p
$$;
comment on function api.ticker_list(text, text, text, int, text, text, numeric, numeric, double precision, double precision, text[], int, int) is
'One page of tickers as JSON {"total", "data"}: api.ticker_list_page as one object, the same arguments. Endpoints: GET /api/v1/tickers, /exchanges/{slug}/tickers, /coins/{slug}/markets.';

create or replace view api.pair_rows as
select p.id, p.symbol, p.base_symbol as base, p.base_slug, p.quote_symbol as quote, p.quote_slug,
  p.exchanges, p.tickers,
  -- a volume-weighted mean carries twenty decimals: about eight significant digits are shown
  round(p.price, greatest(2, least(16, 7 - market.decimal_exponent(nullif(p.price, 0)))))::text as price,
  round(p.price_usd, greatest(2, least(16, 7 - market.decimal_exponent(nullif(p.price_usd, 0)))))::text as price_usd,
  p.volume_usd::double precision as volume_usd, round(p.spread::numeric, 4)::double precision as spread,
  market.iso_time(p.updated_at) as updated,
  p.base_coin_id, p.quote_coin_id, p.volume_usd as volume_usd_exact, p.updated_at
from market.pairs p;
comment on view api.pair_rows is 'Every pair as the API shows it: id, symbol (BASE/QUOTE), base and quote (symbols and slugs; quote_slug null for fiat), exchanges and tickers listing it, volume-weighted price (quote units) and price_usd (decimal strings, about eight significant digits), volume_usd (24h, number), volume-weighted spread (percent), updated. The trailing columns serve filters and sorts.';

-- why: the pair list: filter, order and one page as JSON {total, data}
create or replace function api.pair_list(
  p_search text default null,
  p_coin text default null,
  p_min_volume numeric default null,
  p_max_volume numeric default null,
  p_sort text default '-volume_usd',
  p_page int default 1,
  p_per_page int default 100
) returns json
language plpgsql stable
as $$
declare
  v_sort text := coalesce(p_sort, '-volume_usd');
  -- a filter: an unknown coin matches no pair (null equals nothing) instead of a 404
  v_coin int := (select i from market.coin_ids(array[p_coin]) i);
  v_result json;
begin
  if v_sort not in ('volume_usd', '-volume_usd', 'updated', '-updated') then
    raise exception 'sort must be one of volume_usd, -volume_usd, updated, -updated.' using errcode = 'MD422', column = 'sort';
  end if;
  -- ranked on ids, the page's rows alone built, as in api.ticker_list
  with matched as materialized (
    select p.id, row_number() over (order by
        case v_sort when 'volume_usd' then p.volume_usd_exact when '-volume_usd' then -p.volume_usd_exact end,
        case v_sort when 'updated' then p.updated_at end,
        case v_sort when '-updated' then p.updated_at end desc,
        p.volume_usd_exact desc, p.id) as n
    from api.pair_rows p
    where (p_search is null or strpos(upper(p.symbol), upper(p_search)) > 0)
      and (p_coin is null or p.base_coin_id = v_coin or p.quote_coin_id = v_coin)
      and (p_min_volume is null or p.volume_usd_exact >= p_min_volume)
      and (p_max_volume is null or p.volume_usd_exact <= p_max_volume)
  )
  select json_build_object(
    'total', (select count(*) from matched),
    'data', coalesce((
      select json_agg(json_build_object(
          'id', r.id, 'symbol', r.symbol, 'base', r.base, 'base_slug', r.base_slug,
          'quote', r.quote, 'quote_slug', r.quote_slug, 'exchanges', r.exchanges, 'tickers', r.tickers,
          'price', r.price, 'price_usd', r.price_usd, 'volume_usd', r.volume_usd, 'spread', r.spread,
          'updated', r.updated) order by m.n)
      from matched m
      -- lateral, and offset 0 keeps it from being flattened into a join: the id reaches the view's
      -- grouping, so only the page's pairs are aggregated a second time, not every pair
      cross join lateral (select * from api.pair_rows p where p.id = m.id offset 0) r
      where market.on_page(m.n, p_page, p_per_page)
    ), '[]'::json))
  into v_result;
  return v_result;
end;
$$;
comment on function api.pair_list(text, text, numeric, numeric, text, int, int) is
'One page of venue-aggregated pairs (rows of api.pair_rows) as JSON {"total", "data"}. Filters: p_search (substring of BASE/QUOTE, case-insensitive), p_coin (a coin slug as base or quote), inclusive bounds on 24h USD volume. '
'p_sort: volume_usd, -volume_usd (default), updated, -updated; ties by volume, id. Endpoint: GET /api/v1/pairs.';

-- why: one pair with every venue listing it, for /pairs/{id}
create or replace function api.pair_detail(p_id int) returns json
language plpgsql stable
as $$
declare
  v_result json;
begin
  select json_build_object(
    'id', p.id, 'symbol', p.symbol, 'base', p.base, 'base_slug', p.base_slug, 'quote', p.quote, 'quote_slug', p.quote_slug,
    'exchanges', p.exchanges, 'tickers', p.tickers, 'price', p.price, 'price_usd', p.price_usd, 'volume_usd', p.volume_usd,
    'spread', p.spread, 'updated', p.updated,
    'markets', (api.ticker_list(p_pair => p.id, p_per_page => 10000) -> 'data'))
  into v_result
  from api.pair_rows p where p.id = p_id;
  if v_result is null then
    raise exception 'Pair not found.' using errcode = 'MD404';
  end if;
  return v_result;
end;
$$;
comment on function api.pair_detail(int) is 'The pair with this id (a row of api.pair_rows) plus "markets": every ticker listing it (rows of api.ticker_list), largest 24h USD volume first. Unknown id, or a pair no venue lists: MD404 "Pair not found.". Endpoint: GET /api/v1/pairs/{id}.';

-- why: a coin's raw per-venue symbols, the reference data a client needs to reach a venue's API
create or replace function api.coin_symbols(p_slug text)
returns table (exchange text, exchange_name text, exchange_symbol text, symbol text, quote text, instrument text)
language plpgsql stable
as $$
#variable_conflict use_column
declare
  v_coin int := market.coin_id(p_slug);
begin
  return query
  select t.exchange, t.exchange_name, t.exchange_symbol, t.symbol, t.quote, t.instrument
  from api.ticker_rows t
  where t.base_coin_id = v_coin
  order by t.exchange, t.instrument, t.exchange_symbol;
end;
$$;
comment on function api.coin_symbols(text) is 'The coin''s raw trading symbols per venue (the coin as base): venue slug and name, the symbol as the venue spells it (e.g. XBT/USD, BTC-USDT-SWAP), the pair (BASE/QUOTE), quote and instrument; by venue. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/symbols.';
