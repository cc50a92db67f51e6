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

-- why: which coin each base currency code of a venue means, for every market source in one place
create or replace function market.venue_coins(p_exchange text, p_symbols text[])
returns table (symbol text, coin_id int)
language sql stable
as $$
  select s.symbol,
    case when o.symbol is not null then o.coin_id
    else (select c.id from market.coins c where upper(c.symbol) = upper(s.symbol)
          order by c.catalogue_rank nulls last, c.id limit 1) end
  from unnest(p_symbols) as s (symbol)
  left join market.venue_symbol_overrides o on o.exchange = p_exchange and o.symbol = upper(s.symbol)
$$;
comment on function market.venue_coins(text, text[]) is 'The coin each of a venue''s base currency codes (as ccxt unifies them) means: the venue''s override in market.venue_symbol_overrides when there is one (null: no catalogue coin), else the best-ranked coin with that symbol (lowest catalogue_rank, then the oldest coin), else null. One row per code given.';
