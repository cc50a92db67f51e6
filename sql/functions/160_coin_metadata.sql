-- Coin supplies and the coin list of an outside metadata source (src/sources/coinpaprika.ts): supplies matched to coins
-- through market.coin_source_ids, nonsense skipped, only changed figures written.

-- why: sources write supplies as JSON numbers or decimal strings, and 0 where they do not know one
create or replace function market.supply_figure(p_value jsonb) returns numeric
language sql immutable parallel safe
as $$
  select case
    when p_value is null or jsonb_typeof(p_value) = 'null' then null
    when jsonb_typeof(p_value) = 'number' then nullif(p_value::text::numeric, 0)
    when jsonb_typeof(p_value) = 'string' and p_value #>> '{}' ~ '^-?\d+(\.\d+)?([eE][+-]?\d+)?$'
      then nullif((p_value #>> '{}')::numeric, 0)
    -- not a number at all: as bad as a negative figure, so the row is skipped
    else -1
  end
$$;
comment on function market.supply_figure(jsonb) is 'A supply figure of an outside source: the number (JSON number or decimal string); null when absent, null or 0 (sources write 0 for unknown); -1 when it is no number, so that the row is skipped like any negative figure.';

create or replace function market.apply_coin_supplies(p_source text, p_rows jsonb) returns int
language sql volatile
as $$
  with given as (
    -- a source listing one id twice: the first row counts
    select distinct on (r ->> 'id') r ->> 'id' as external_id,
      market.supply_figure(r -> 'circulating_supply') as circulating,
      market.supply_figure(r -> 'total_supply') as total,
      market.supply_figure(r -> 'max_supply') as maximum
    from jsonb_array_elements(case when jsonb_typeof(p_rows) = 'array' then p_rows else '[]' end) with ordinality e (r, n)
    where jsonb_typeof(r) = 'object' and jsonb_typeof(r -> 'id') = 'string'
    order by r ->> 'id', n
  ),
  merged as (
    -- an unknown figure keeps the coin's current one
    select c.id, coalesce(g.circulating, c.circulating_supply) as circulating,
      coalesce(g.total, c.total_supply) as total, coalesce(g.maximum, c.max_supply) as maximum
    from given g
    join market.coin_source_ids s on s.source = p_source and s.external_id = g.external_id
    join market.coins c on c.id = s.coin_id
    where coalesce(g.circulating, 0) >= 0 and coalesce(g.total, 0) >= 0 and coalesce(g.maximum, 0) >= 0
  ),
  updated as (
    update market.coins c set circulating_supply = m.circulating, total_supply = m.total, max_supply = m.maximum
    from merged m
    where c.id = m.id
      -- nonsense: more in circulation than exist, or more than the cap
      and (m.total is null or m.circulating is null or m.circulating <= m.total)
      and (m.maximum is null or (coalesce(m.circulating, 0) <= m.maximum and coalesce(m.total, 0) <= m.maximum))
      and (c.circulating_supply, c.total_supply, c.max_supply) is distinct from (m.circulating, m.total, m.maximum)
    returning 1
  )
  select count(*)::int from updated
$$;
comment on function market.apply_coin_supplies(text, jsonb) is 'Applies supplies from an outside source: p_rows is a JSON array of {id, circulating_supply, total_supply, max_supply} (extra fields ignored), id being the coin''s id at p_source (market.coin_source_ids). Unknown ids are ignored; a figure null or 0 keeps the current one; a row with a negative or non-numeric figure, circulating above total, or either above the maximum is skipped. Returns how many coins changed.';
revoke execute on function market.apply_coin_supplies(text, jsonb) from public;

-- why: the metadata list is taken whole or not at all: a list that is down, cut short or garbage
-- must leave every coin as it was (no coin renamed or dropped from a partial list)
create or replace function market.load_coin_metadata_list(p_source text, p_list jsonb, p_at timestamptz default now())
returns jsonb
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_given int;
  v_stored int;
  v_bad bigint;
  v_written int;
  v_removed int;
  v_renamed int;
  v_aliases int;
  v_adopted int;
begin
  -- a rename and a discovery (market.discover_venue_coins) take turns
  perform pg_advisory_xact_lock(hashtext('market.discover_venue_coins'));
  if jsonb_typeof(p_list) is distinct from 'array' then
    raise exception '% coin list: not a JSON array', p_source using errcode = '22P02';
  end if;
  v_given := jsonb_array_length(p_list);
  if v_given = 0 then
    raise exception '% coin list: empty', p_source using errcode = '22P02';
  end if;
  select e.n - 1 into v_bad from jsonb_array_elements(p_list) with ordinality e (r, n)
  where jsonb_typeof(e.r) is distinct from 'object'
    or jsonb_typeof(e.r -> 'id') is distinct from 'string' or jsonb_typeof(e.r -> 'symbol') is distinct from 'string'
    or jsonb_typeof(e.r -> 'name') is distinct from 'string'
    or length(e.r ->> 'id') not between 1 and 200 or length(e.r ->> 'symbol') not between 1 and 100
    or length(e.r ->> 'name') not between 1 and 400
  order by e.n limit 1;
  if v_bad is not null then
    raise exception '% coin list: entry [%] has no string id, symbol and name', p_source, v_bad using errcode = '22P02';
  end if;
  select count(*)::int into v_stored from market.coin_metadata_list where source = p_source;
  if v_given * 2 < v_stored then
    raise exception '% coin list cut short: % coins where % are stored', p_source, v_given, v_stored using errcode = '22P02';
  end if;

  create temporary table given_list on commit drop as
  select distinct on (e.r ->> 'id') e.r ->> 'id' as external_id, e.r ->> 'symbol' as symbol, e.r ->> 'name' as name,
    case when jsonb_typeof(e.r -> 'rank') = 'number' and (e.r ->> 'rank')::numeric between 0 and 2147483647
      then floor((e.r ->> 'rank')::numeric)::int else 0 end as rank,
    case when jsonb_typeof(e.r -> 'is_active') = 'boolean' then (e.r ->> 'is_active')::boolean else true end as active,
    case when jsonb_typeof(e.r -> 'type') = 'string' then left(e.r ->> 'type', 40) end as type
  from jsonb_array_elements(p_list) with ordinality e (r, n)
  order by e.r ->> 'id', e.n;

  delete from market.coin_metadata_list l
  where l.source = p_source and not exists (select from given_list g where g.external_id = l.external_id);
  get diagnostics v_removed = row_count;
  insert into market.coin_metadata_list as l (source, external_id, symbol, name, rank, active, type, loaded_at)
  select p_source, g.external_id, g.symbol, g.name, g.rank, g.active, g.type, p_at from given_list g
  on conflict (source, external_id) do update set
    symbol = excluded.symbol, name = excluded.name, rank = excluded.rank, active = excluded.active,
    type = excluded.type, loaded_at = excluded.loaded_at
  where (l.symbol, l.name, l.rank, l.active, l.type) is distinct from
    (excluded.symbol, excluded.name, excluded.rank, excluded.active, excluded.type);
  get diagnostics v_written = row_count;

  -- a coin the venue named while the list was missing (first start, an outage) takes the entry rule
  -- (b) would have chosen, unless a coin holds that entry already (never two assets in one coin): it is
  -- linked and named after the entry, keeps its slug, and the entry's slug becomes an alias
  create temporary table adopted on commit drop as
  select distinct on (e.external_id) c.id as coin_id, e.external_id, e.name, e.type,
    market.entry_slug(e.external_id, e.symbol) as alias
  from market.coins c
  cross join lateral (
    select l.* from market.coin_metadata_list l
    where l.source = p_source and upper(l.symbol) = upper(c.symbol) and l.active
    order by l.rank = 0, l.rank, l.external_id limit 1
  ) e
  where c.discovered_by = 'venue'
    and not exists (select from market.coin_source_ids s where s.coin_id = c.id and s.source = p_source)
    and not exists (select from market.coin_source_ids s where s.source = p_source and s.external_id = e.external_id)
  order by e.external_id, c.id;
  insert into market.coin_source_ids (coin_id, source, external_id)
  select a.coin_id, p_source, a.external_id from adopted a;
  get diagnostics v_adopted = row_count;
  update market.coins c set name = coalesce(nullif(left(btrim(a.name), 200), ''), c.name), discovered_by = 'metadata',
    type = case when a.type in ('coin', 'token') then a.type else c.type end
  from adopted a where a.coin_id = c.id;
  insert into market.coin_slug_aliases (slug, coin_id, created_at)
  select a.alias, a.coin_id, p_at from adopted a
  where a.alias is not null and not exists (select from market.coins c where c.slug = a.alias)
  on conflict (slug) do nothing;

  -- a discovered coin follows its entry's renames (catalogue coins keep the catalogue's names); its
  -- slug stays, and the slug the new name would get becomes an alias unless some coin has it
  with changed as (
    update market.coins c set name = left(btrim(g.name), 200)
    from market.coin_source_ids s join given_list g on g.external_id = s.external_id
    where s.source = p_source and s.coin_id = c.id and c.discovered_by is not null
      and btrim(g.name) <> '' and c.name <> left(btrim(g.name), 200)
    returning c.id, c.slug, market.slug_of(g.name) as alias
  ),
  aliased as (
    insert into market.coin_slug_aliases (slug, coin_id, created_at)
    select r.alias, r.id, p_at from changed r
    where r.alias is not null and not exists (select from market.coins c where c.slug = r.alias)
    on conflict (slug) do nothing
    returning 1
  )
  select (select count(*) from changed)::int, (select count(*) from aliased)::int into v_renamed, v_aliases;

  update market.data_sources set settings = settings || jsonb_build_object('coin_list_loaded_at', p_at), updated_at = p_at
  where name = p_source;
  if v_renamed + v_adopted > 0 then perform app.bump_data_version('market'); end if;
  drop table given_list, adopted;
  return jsonb_build_object('coins', v_given, 'written', v_written, 'removed', v_removed, 'adopted', v_adopted,
    'renamed', v_renamed, 'aliases', v_aliases);
end;
$$;
comment on function market.load_coin_metadata_list(text, jsonb, timestamptz) is 'Stores the whole coin list of a metadata source (coinpaprika''s GET /v1/coins: a JSON array of {id, symbol, name, rank (0 = unranked), is_active, type}) in market.coin_metadata_list, and notes when in the source''s settings (coin_list_loaded_at). Refuses the whole list (SQLSTATE 22P02, nothing written) when it is not an array, empty, has an entry without a string id, symbol and name, or is shorter than half the list stored (cut short). A coin the venue named (discovered_by venue, no id at the source) whose symbol has an active entry no coin holds is adopted by the best-ranked one: linked, named and typed after it (discovered_by metadata), its slug kept and the entry''s slug an alias. A discovered coin (market.coins.discovered_by) linked to an entry by market.coin_source_ids takes its new name; its slug stays and the new name''s slug becomes an alias (market.coin_slug_aliases) unless a coin has it. Returns {coins, written, removed, adopted, renamed, aliases}.';
revoke execute on function market.load_coin_metadata_list(text, jsonb, timestamptz) from public;
