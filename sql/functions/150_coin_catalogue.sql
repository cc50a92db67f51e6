-- The curated coin catalogue (src/sources/catalogue/coins.json, `mdapi import-coins FILE`) becomes
-- coins, links, contracts, descriptions, outside ids and venue overrides: set-based, in one
-- statement's transaction (all or nothing), writing only what differs (a re-import writes nothing).

-- why: one import, validated by zod beforehand (src/sources/catalogue/index.ts); the checks here stand behind it
create or replace function market.import_coin_catalogue(p_catalogue jsonb) returns jsonb
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_bad record;
  v_inserted int := 0;
  v_updated int := 0;
  v_rows int;
  v_written bigint := 0;
  v_overrides int := 0;
begin
  -- concurrent imports (two services starting on an empty database) take turns
  perform pg_advisory_xact_lock(hashtext('market.import_coin_catalogue'));
  if jsonb_typeof(p_catalogue -> 'coins') is distinct from 'array' then
    raise exception 'coins: must be an array' using errcode = 'MD422';
  end if;

  create temporary table coin_catalogue on commit drop as
  select (e.ordinality - 1)::int as position, e.value as raw, x.*
  from jsonb_array_elements(p_catalogue -> 'coins') with ordinality e
  cross join lateral jsonb_to_record(e.value) as x (
    rank int, slug text, symbol text, name text, type text, circulating_supply numeric, total_supply numeric,
    max_supply numeric, decimals smallint, genesis_date date, logo text, stablecoin text,
    links jsonb, contracts jsonb, descriptions jsonb, ids jsonb);

  select k.position, k.slug, min(o.position) as first into v_bad
  from coin_catalogue k join coin_catalogue o on o.slug = k.slug and o.position < k.position
  group by k.position, k.slug order by k.position limit 1;
  if found then
    raise exception 'coins[%].slug: "%" repeats coins[%]', v_bad.position, v_bad.slug, v_bad.first using errcode = 'MD422';
  end if;

  -- New coins belong to the catalogue and are untracked (no market data) until a market source
  -- lists them. Existing coins (the demo market's, an import's) keep their source and status.
  -- Supplies only fill gaps: once known, they are the metadata source's (market.apply_coin_supplies).
  with upserted as (
    insert into market.coins as c (slug, symbol, name, type, status, circulating_supply, total_supply, max_supply,
      decimals, genesis_date, logo, catalogue_rank, peg, source)
    select k.slug, k.symbol, k.name, k.type, 'untracked', k.circulating_supply, k.total_supply, k.max_supply,
      k.decimals, k.genesis_date, k.logo, k.rank, k.stablecoin, 'catalogue'
    from coin_catalogue k
    on conflict (slug) do update set
      symbol = excluded.symbol, name = excluded.name, type = excluded.type,
      circulating_supply = coalesce(c.circulating_supply, excluded.circulating_supply),
      total_supply = coalesce(c.total_supply, excluded.total_supply),
      max_supply = coalesce(c.max_supply, excluded.max_supply),
      decimals = excluded.decimals, genesis_date = excluded.genesis_date, logo = coalesce(excluded.logo, c.logo),
      catalogue_rank = excluded.catalogue_rank, peg = excluded.peg
    where (c.symbol, c.name, c.type, c.circulating_supply, c.total_supply, c.max_supply, c.decimals, c.genesis_date,
           c.logo, c.catalogue_rank, c.peg)
      is distinct from (excluded.symbol, excluded.name, excluded.type,
           coalesce(c.circulating_supply, excluded.circulating_supply), coalesce(c.total_supply, excluded.total_supply),
           coalesce(c.max_supply, excluded.max_supply), excluded.decimals, excluded.genesis_date,
           coalesce(excluded.logo, c.logo), excluded.catalogue_rank, excluded.peg)
    returning (xmax = 0) as inserted
  )
  select count(*) filter (where inserted), count(*) filter (where not inserted) into v_inserted, v_updated from upserted;
  v_written := v_inserted + v_updated;

  create temporary table catalogue_owned on commit drop as
  select c.id, k.* from coin_catalogue k join market.coins c using (slug);

  -- Links and contracts: a coin that lists them gets exactly those (an empty list removes them);
  -- one that leaves the field out keeps its own.
  create temporary table wanted_links on commit drop as
  select distinct on (o.id, l.value ->> 'type', l.value ->> 'url')
    o.id as coin_id, l.value ->> 'type' as type, l.value ->> 'url' as url, (l.ordinality - 1)::smallint as position
  from catalogue_owned o cross join lateral jsonb_array_elements(o.links) with ordinality l
  where jsonb_typeof(o.links) = 'array'
  order by o.id, l.value ->> 'type', l.value ->> 'url', l.ordinality;
  delete from market.coin_links l
  using catalogue_owned o
  where l.coin_id = o.id and jsonb_typeof(o.links) = 'array'
    and not exists (select 1 from wanted_links w where w.coin_id = l.coin_id and w.type = l.type and w.url = l.url);
  get diagnostics v_rows = row_count;
  v_written := v_written + v_rows;
  insert into market.coin_links as l (coin_id, type, url, position)
  select coin_id, type, url, position from wanted_links
  on conflict (coin_id, type, url) do update set position = excluded.position where l.position <> excluded.position;
  get diagnostics v_rows = row_count;
  v_written := v_written + v_rows;

  create temporary table wanted_contracts on commit drop as
  select o.id as coin_id, x.value ->> 'chain' as chain, x.value ->> 'address' as address,
    (x.value ->> 'decimals')::smallint as decimals
  from catalogue_owned o cross join lateral jsonb_array_elements(o.contracts) x
  where jsonb_typeof(o.contracts) = 'array';
  -- a contract the file gives another coin (or another address) is removed first, then written
  delete from market.coin_contracts k
  where (k.coin_id in (select id from catalogue_owned where jsonb_typeof(contracts) = 'array')
         or (k.chain, k.address) in (select chain, address from wanted_contracts))
    and not exists (select 1 from wanted_contracts w where w.coin_id = k.coin_id and w.chain = k.chain and w.address = k.address);
  get diagnostics v_rows = row_count;
  v_written := v_written + v_rows;
  insert into market.coin_contracts as k (coin_id, chain, address, decimals)
  select coin_id, chain, address, decimals from wanted_contracts
  on conflict (coin_id, chain) do update set address = excluded.address, decimals = excluded.decimals
  where (k.address, k.decimals) is distinct from (excluded.address, excluded.decimals);
  get diagnostics v_rows = row_count;
  v_written := v_written + v_rows;

  -- descriptions: the locales given are written; other locales (the demo's translations) stay
  insert into market.coin_descriptions as d (coin_id, locale, html)
  select o.id, x.key, x.value from catalogue_owned o cross join lateral jsonb_each_text(o.descriptions) x
  where jsonb_typeof(o.descriptions) = 'object'
  on conflict (coin_id, locale) do update set html = excluded.html where d.html <> excluded.html;
  get diagnostics v_rows = row_count;
  v_written := v_written + v_rows;

  -- outside ids: one per source; an id the file gives another coin moves to it
  create temporary table wanted_ids on commit drop as
  select o.id as coin_id, x.key as source, x.value as external_id
  from catalogue_owned o cross join lateral jsonb_each_text(o.ids) x
  where jsonb_typeof(o.ids) = 'object';
  delete from market.coin_source_ids s
  using wanted_ids w
  where ((s.coin_id = w.coin_id and s.source = w.source) or (s.source = w.source and s.external_id = w.external_id))
    and not exists (select 1 from wanted_ids v where v.coin_id = s.coin_id and v.source = s.source and v.external_id = s.external_id);
  get diagnostics v_rows = row_count;
  v_written := v_written + v_rows;
  insert into market.coin_source_ids (coin_id, source, external_id)
  select coin_id, source, external_id from wanted_ids
  on conflict do nothing;
  get diagnostics v_rows = row_count;
  v_written := v_written + v_rows;

  -- venue overrides: when the file has venue_symbols, they are the whole list
  if jsonb_typeof(p_catalogue -> 'venue_symbols') = 'array' then
    create temporary table wanted_overrides on commit drop as
    select (e.ordinality - 1)::int as position, e.value ->> 'exchange' as exchange, upper(e.value ->> 'symbol') as symbol,
      e.value ->> 'coin' as slug, c.id as coin_id
    from jsonb_array_elements(p_catalogue -> 'venue_symbols') with ordinality e
    left join market.coins c on c.slug = e.value ->> 'coin';
    select w.position, w.slug into v_bad from wanted_overrides w where w.slug is not null and w.coin_id is null order by w.position limit 1;
    if found then
      raise exception 'venue_symbols[%].coin: unknown coin "%"', v_bad.position, v_bad.slug using errcode = 'MD422';
    end if;
    select w.position, w.exchange, w.symbol into v_bad from wanted_overrides w
    where exists (select 1 from wanted_overrides o where o.exchange = w.exchange and o.symbol = w.symbol and o.position < w.position)
    order by w.position limit 1;
    if found then
      raise exception 'venue_symbols[%]: % % is listed twice', v_bad.position, v_bad.exchange, v_bad.symbol using errcode = 'MD422';
    end if;
    delete from market.venue_symbol_overrides v
    where not exists (select 1 from wanted_overrides w
                      where w.exchange = v.exchange and w.symbol = v.symbol and w.coin_id is not distinct from v.coin_id);
    get diagnostics v_rows = row_count;
    v_written := v_written + v_rows;
    insert into market.venue_symbol_overrides (exchange, symbol, coin_id)
    select exchange, symbol, coin_id from wanted_overrides
    on conflict do nothing;
    get diagnostics v_rows = row_count;
    v_written := v_written + v_rows;
    select count(*) into v_overrides from wanted_overrides;
    drop table wanted_overrides;
  end if;

  update market.data_sources set updated_at = now() where name = 'catalogue' and v_written > 0;
  if v_written > 0 then perform app.bump_data_version('market'); end if;
  drop table coin_catalogue, catalogue_owned, wanted_links, wanted_contracts, wanted_ids;
  return jsonb_build_object('coins', jsonb_array_length(p_catalogue -> 'coins'), 'inserted', v_inserted,
    'updated', v_updated, 'venue_symbols', v_overrides, 'rows_written', v_written);
end;
$$;
comment on function market.import_coin_catalogue(jsonb) is 'Imports a coin catalogue ({version, coins: [...], venue_symbols?: [...]}, see src/sources/catalogue/coins.json): upserts coins by slug (new ones with source catalogue and status untracked; existing ones keep source, status and known supplies), their links and contracts (replaced when given), descriptions (per locale), outside ids and, when given, the whole list of venue overrides. All or nothing; raises MD422 naming the JSON path. Returns {coins, inserted, updated, venue_symbols, rows_written}; rows_written is 0 when the same catalogue is imported again.';
revoke execute on function market.import_coin_catalogue(jsonb) from public;

-- why: which coin each base currency code of a venue means, for every market source in one place;
-- once a code maps to a coin it keeps mapping to it (the coin stays the best-ranked of its symbol)
create or replace function market.venue_coins(p_exchange text, p_symbols text[])
returns table (symbol text, coin_id int)
language sql stable
as $$
  select s.symbol,
    case when o.symbol is not null then o.coin_id
    else (select c.id from market.coins c
          where upper(c.symbol) = upper(s.symbol)
          -- a lookup per coin of the symbol (a join would read every coin's CoinPaprika id per code)
          order by c.catalogue_rank nulls last,
            (select nullif(l.rank, 0) from market.coin_source_ids i
             join market.coin_metadata_list l on l.source = i.source and l.external_id = i.external_id
             where i.coin_id = c.id and i.source = 'coinpaprika') nulls last,
            c.id
          limit 1) end
  from unnest(p_symbols) as s (symbol)
  left join market.venue_symbol_overrides o on o.exchange = p_exchange and o.symbol = upper(s.symbol)
$$;
comment on function market.venue_coins(text, text[]) is 'The coin each of a venue''s base currency codes (as ccxt unifies them) means: the venue''s override in market.venue_symbol_overrides when there is one (null: no catalogue coin), else the best-ranked coin with that symbol (lowest catalogue_rank, then the best rank in the metadata list, then the oldest coin), else null. One row per code given.';

-- why: a venue's base code that maps to no coin becomes one (issue 45), by the documented rules
-- (docs/market-data.md "How coins are discovered, named, merged and ranked"); set-based, one
-- statement per step, whatever the number of codes
create or replace function market.discover_venue_coins(p_exchange text, p_codes text[], p_at timestamptz default now())
returns table (code text, coin_id int)
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_made int;
begin
  -- two loads (a worker's and the stream holder's) must not make one coin twice
  perform pg_advisory_xact_lock(hashtext('market.discover_venue_coins'));
  create temporary table discovery on commit drop as
  select d.code, e.external_id, e.symbol as entry_symbol, e.name as entry_name, e.type as entry_type, e.rank,
    (select s.coin_id from market.coin_source_ids s where s.source = 'coinpaprika' and s.external_id = e.external_id) as coin_id,
    null::text as slug, null::text as way
  from (select distinct upper(c) as code from unnest(p_codes) c) d
  -- (b) the metadata list's best-ranked active entry of that symbol: ranked ones by rank, then the rest
  left join lateral (
    select l.* from market.coin_metadata_list l
    where l.source = 'coinpaprika' and upper(l.symbol) = d.code and l.active
    order by l.rank = 0, l.rank, l.external_id limit 1
  ) e on true
  where d.code ~ '^\S{1,20}$'
    -- (a) the catalogue's override for the venue decides, a null one too
    and not exists (select from market.venue_symbol_overrides o where o.exchange = p_exchange and o.symbol = d.code)
    and not exists (select from market.fiat_currencies f where f.code = d.code)
    -- made by another load meanwhile
    and not exists (select from market.coins c where upper(c.symbol) = d.code);

  -- new coins named after the entry: its id without the leading "<symbol>-", else the whole id;
  -- a slug that already names a coin (its own or an alias, market.coin_ids), or wanted twice, goes to the next choice
  update discovery d set slug = x.slug, way = 'metadata'
  from (
    select y.code, y.slug, row_number() over (partition by y.slug order by y.rank = 0, y.rank, y.code) as n
    from (
      select d.code, d.rank, market.entry_slug(d.external_id, d.entry_symbol) as slug
      from discovery d where d.external_id is not null and d.coin_id is null
    ) y
    where y.slug is not null
      and not exists (select from market.coin_ids(array[y.slug]))
  ) x
  where x.code = d.code and x.n = 1;
  update discovery d set slug = x.slug, way = 'metadata'
  from (
    select d.code, market.slug_of(d.external_id) as slug,
      row_number() over (partition by market.slug_of(d.external_id) order by d.rank = 0, d.rank, d.code) as n
    from discovery d where d.external_id is not null and d.coin_id is null and d.slug is null
  ) x
  where x.code = d.code and x.n = 1 and x.slug is not null
    and not exists (select from market.coin_ids(array[x.slug]))
    and not exists (select from discovery o where o.slug = x.slug);
  -- (c) no entry: a coin of its own, its slug naming the venue that listed it
  update discovery d set slug = x.slug, way = 'venue', external_id = null, entry_symbol = null, entry_name = null, entry_type = null
  from (
    select d.code, market.slug_of(d.code) || '-' || market.slug_of(p_exchange) as slug,
      row_number() over (partition by market.slug_of(d.code) order by d.code) as n
    from discovery d where d.coin_id is null and d.slug is null and market.slug_of(d.code) is not null
  ) x
  where x.code = d.code and x.n = 1
    and not exists (select from market.coin_ids(array[x.slug]))
    and not exists (select from discovery o where o.slug = x.slug);

  with made as (
    insert into market.coins (slug, symbol, name, type, status, status_updated_at, source, discovered_by)
    select d.slug,
      case when d.entry_symbol ~ '^\S{1,20}$' then d.entry_symbol else d.code end,
      coalesce(nullif(left(btrim(d.entry_name), 200), ''), d.code),
      case when d.entry_type in ('coin', 'token') then d.entry_type else 'token' end,
      'active', p_at, 'exchanges', d.way
    from discovery d where d.slug is not null
    on conflict (slug) do nothing
    returning id, slug
  )
  update discovery d set coin_id = m.id from made m where m.slug = d.slug;
  get diagnostics v_made = row_count;

  -- its id at the metadata source: supplies (market.apply_coin_supplies) and renames follow it
  insert into market.coin_source_ids (coin_id, source, external_id)
  select d.coin_id, 'coinpaprika', d.external_id from discovery d
  where d.way = 'metadata' and d.coin_id is not null
  on conflict do nothing;

  if v_made > 0 then perform app.bump_data_version('market'); end if;
  return query select d.code, d.coin_id from discovery d where d.coin_id is not null;
  drop table discovery;
end;
$$;
comment on function market.discover_venue_coins(text, text[], timestamptz) is 'Makes coins of a venue''s base codes that map to no coin (called by market.ingest_venue_markets for codes traded spot against USD, EUR, a USD stablecoin, bitcoin or ethereum): a code the venue''s override names (even as null), a fiat code or a symbol some coin has is left alone; else (b) the best-ranked active entry of that symbol in market.coin_metadata_list (rank > 0 by rank, then the rest): the coin holding that id in market.coin_source_ids, or a new coin named after it (slug = the id without its leading "<symbol>-", or the whole id when that is taken), linked to the id; else (c) a new coin of its own, slug "<code>-<venue>", name = the code, type token. New coins are active, source exchanges, with discovered_by metadata or venue. Returns each code given a coin, with the coin.';
revoke execute on function market.discover_venue_coins(text, text[], timestamptz) from public;
