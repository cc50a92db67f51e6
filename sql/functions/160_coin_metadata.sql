-- Coin supplies from an outside metadata source (src/sources/coinpaprika.ts): rows matched to coins
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
