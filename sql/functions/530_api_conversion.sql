-- The Conversion group: convert an amount between any two active assets, crypto or fiat, through
-- USD (coin prices from market.coin_state, fiat rates from market.fx_latest), and the lists of
-- currencies usable as legs. A leg's USD value is kept as a fraction (a coin: price / 1; a fiat:
-- 1 / rate per USD) so that a conversion divides once, at the end, in numeric.

-- why: one place decides what a conversion leg is and what it is worth in USD
create or replace function market.conversion_legs()
returns table (slug text, symbol text, name text, type text, usd_num numeric, usd_den numeric, rank int, updated_at timestamptz, source text)
language sql stable
as $$
  select lower(f.currency), f.currency, coalesce(fc.name, f.currency), 'fiat', 1::numeric, f.rate, null::int, f.time, f.source
  from market.fx_latest f
  left join market.fiat_currencies fc on fc.code = f.currency
  where coalesce(fc.active, true)
  union all
  select c.slug, c.symbol, c.name, c.type, s.price, 1::numeric, s.rank, s.last_updated, c.source
  from market.coins c
  join market.coin_state s on s.coin_id = c.id
  where c.status = 'active' and s.price > 0
$$;
comment on function market.conversion_legs() is
'Every asset usable as a conversion leg: active fiat currencies with a rate (slug = lowercase ISO code, type fiat) and active coins with a price (slug, type coin or token). '
'The USD value of one unit is usd_num / usd_den: a coin''s price / 1, a fiat''s 1 / rate per USD.';

-- why: a leg named by the API: a fiat code first (usd, EUR), else a coin slug
create or replace function market.conversion_leg(p_name text)
returns table (slug text, symbol text, name text, type text, usd_num numeric, usd_den numeric)
language plpgsql stable
as $$
#variable_conflict use_column
begin
  return query
  select l.slug, l.symbol, l.name, l.type, l.usd_num, l.usd_den
  from market.conversion_legs() l
  where l.slug = lower(btrim(p_name))
  order by l.type = 'fiat' desc
  limit 1;
  if not found then
    raise exception 'Unknown currency: %.', p_name using errcode = 'MD404';
  end if;
end;
$$;
comment on function market.conversion_leg(text) is 'The conversion leg named p_name: a fiat ISO code (case-insensitive) first, else an active coin slug. Unknown or inactive: MD404 "Unknown currency: <name>." (HTTP 404).';

-- why: the /convert endpoint: an amount of one asset in up to ten others, through USD, in numeric
create or replace function api.convert(p_from text, p_to text[], p_amount numeric default 1)
returns json
language plpgsql stable
as $$
declare
  v_from record;
  v_result json;
begin
  if p_amount is null or p_amount < 0 then
    raise exception 'amount must be a non-negative number.' using errcode = 'MD422';
  end if;
  if coalesce(cardinality(p_to), 0) not between 1 and 10 then
    raise exception 'to must name 1 to 10 currencies.' using errcode = 'MD422', column = 'to';
  end if;
  select * into v_from from market.conversion_leg(p_from);
  select json_build_object(
    'from', json_build_object('slug', v_from.slug, 'symbol', v_from.symbol, 'name', v_from.name, 'type', v_from.type),
    -- a JSON number, as the reference types it; the exact digits of numeric are kept in the JSON text
    'amount', trim_scale(p_amount),
    'results', json_agg(json_build_object('slug', t.slug, 'symbol', t.symbol, 'name', t.name, 'type', t.type,
        'value', market.round_significant(p_amount * v_from.usd_num * t.usd_den / (v_from.usd_den * t.usd_num), 15)::text)
      order by n))
  into v_result
  from unnest(p_to) with ordinality as target (name, n)
  cross join lateral market.conversion_leg(target.name) t;
  return v_result;
end;
$$;
comment on function api.convert(text, text[], numeric) is
'Converts p_amount (default 1) of the asset p_from into each asset of p_to (1-10), through USD: value = amount x USD value of from / USD value of to, in numeric, rounded to 15 significant digits. '
'An asset is an active fiat (ISO code, case-insensitive: usd, eur) or an active coin with a price (slug). JSON {from {slug, symbol, name, type}, amount, results [{slug, symbol, name, type, value}]}, '
'amount a JSON number (the exact digits), value a decimal string. Unknown asset: MD404 "Unknown currency: x.". Endpoint: GET /api/v1/convert.';

-- why: the /fiats endpoint: the fiat legs with their USD rate both ways
create or replace function api.fiats()
returns table (slug text, symbol text, name text, sign text, rate_per_usd text, usd_value text, updated_at text, source text, demo boolean)
language sql stable
as $$
  select l.slug, l.symbol, l.name, fc.sign, l.usd_den::text, market.round_significant(1 / l.usd_den, 15)::text,
    market.iso_time(l.updated_at), l.source, coalesce(ds.demo, false)
  from market.conversion_legs() l
  left join market.fiat_currencies fc on fc.code = l.symbol
  left join market.data_sources ds on ds.name = l.source
  where l.type = 'fiat'
  order by l.symbol <> 'USD', l.symbol
$$;
comment on function api.fiats() is
'The active fiat currencies with a rate, USD first then by code: slug (lowercase code), symbol (ISO code), name, sign, rate_per_usd (units per 1 USD) and usd_value (USD per unit, its inverse to 15 significant digits) as decimal strings, '
'updated_at and source of the rate, demo (true for placeholder rates). Endpoint: GET /api/v1/fiats.';

-- why: the /rates endpoint: every leg a client may convert with, normalised to USD per unit
create or replace function api.conversion_rates(p_coins int default 100)
returns table (slug text, symbol text, name text, type text, usd_value text, updated_at text)
language sql stable
as $$
  select l.slug, l.symbol, l.name, l.type, market.round_significant(l.usd_num / l.usd_den, 15)::text, market.iso_time(l.updated_at)
  from market.conversion_legs() l
  where l.type = 'fiat' or l.rank <= p_coins
  order by l.type <> 'fiat', l.rank, l.symbol <> 'USD', l.symbol
$$;
comment on function api.conversion_rates(int) is
'The vs-currencies usable as conversion legs: every active fiat with a rate (USD first, then by code), then the top p_coins (default 100) ranked coins and tokens by rank, '
'each with usd_value (USD per one unit, decimal string) and updated_at. Endpoint: GET /api/v1/rates.';
