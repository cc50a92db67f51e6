-- The Prices group: current prices of a requested set of coins (optionally converted into a fiat
-- currency with the latest rate of market.fx_rates), one coin's price, and a coin's price on a
-- past date from the daily history.

-- why: /prices takes ids, slugs and symbols; a symbol two coins share must still name one coin
create or replace function market.resolve_coin_selectors(p_ids int[], p_slugs text[], p_symbols text[])
returns table (coin_id int)
language sql stable
as $$
  select c.id from market.coins c where c.id = any (p_ids)
  union
  select i from market.coin_ids(p_slugs) i
  union
  (select distinct on (upper(c.symbol)) c.id
   from market.coins c
   left join market.coin_state s on s.coin_id = c.id
   where upper(c.symbol) = any (select upper(x) from unnest(p_symbols) x)
   order by upper(c.symbol), c.status = 'active' desc, s.rank nulls last, s.marketcap desc nulls last, c.id)
$$;
comment on function market.resolve_coin_selectors(int[], text[], text[]) is 'The coins named by ids, slugs and symbols (case-insensitive), each once. A symbol shared by several coins resolves to the best-ranked active coin (else the best-ranked, then largest marketcap, then oldest id). Unknown selectors name nothing.';

-- why: every price of the Prices group is quoted in USD or converted with the currency's latest rate
create or replace function market.fx_rate(p_currency text) returns numeric
language plpgsql stable
as $$
declare
  v_rate numeric;
begin
  if upper(p_currency) = 'USD' then
    return 1;
  end if;
  select f.rate into v_rate from market.fx_latest f where f.currency = upper(p_currency);
  if v_rate is null then
    -- named after the parameter every API function takes its currency in: a 422 of that field
    raise exception 'No exchange rate for the currency "%".', p_currency using errcode = 'MD422', column = 'convert';
  end if;
  return v_rate;
end;
$$;
comment on function market.fx_rate(text) is 'Units of the currency per 1 USD from the latest row of market.fx_rates (USD: 1); raises MD422 (HTTP 422, field convert) for a currency without a rate.';

create or replace function api.prices(
  p_ids int[] default null,
  p_slugs text[] default null,
  p_symbols text[] default null,
  p_convert text default 'USD'
) returns table (
  id int, slug text, symbol text, name text, rank int, price text, marketcap text,
  volume_24h double precision, change_24h double precision, change_7d double precision,
  change_rank_24h int, change_rank_7d int, last_updated text
)
language plpgsql stable
as $$
#variable_conflict use_column
declare
  v_rate numeric := market.fx_rate(coalesce(p_convert, 'USD'));
begin
  if coalesce(cardinality(p_ids), 0) + coalesce(cardinality(p_slugs), 0) + coalesce(cardinality(p_symbols), 0) = 0 then
    raise exception 'Pass at least one selector: ids, slugs or symbols.' using errcode = 'MD422';
  end if;
  return query
  select c.id, c.slug, c.symbol, c.name, s.rank,
    -- USD prices leave exactly as stored; converted ones drop the trailing zeros of the product
    case when v_rate = 1 then s.price else trim_scale(s.price * v_rate) end::text,
    case when v_rate = 1 then s.marketcap else round(s.marketcap * v_rate, 2) end::text,
    (coalesce(s.volume_24h, 0) * v_rate)::double precision,
    s.change_24h, s.change_7d, s.change_rank_24h, s.change_rank_7d,
    market.iso_time(s.last_updated)
  from market.resolve_coin_selectors(p_ids, p_slugs, p_symbols) r
  join market.coins c on c.id = r.coin_id
  left join market.coin_state s on s.coin_id = c.id
  order by s.rank nulls last, c.id;
end;
$$;
comment on function api.prices(int[], text[], text[], text) is
'Current price rows of the coins named by p_ids, p_slugs and p_symbols (at least one; an ambiguous symbol resolves to the best-ranked active coin; unknown selectors are skipped), by rank. '
'price and marketcap are decimal strings, volume_24h (0 without a coin_state row), changes and change ranks numbers, all money in p_convert (a fiat code with a rate in market.fx_rates; default USD; MD422 when it has none). '
'Endpoint: GET /api/v1/prices.';

create or replace function api.coin_price(p_slug text, p_convert text default 'USD')
returns table (
  id int, slug text, symbol text, name text, rank int, price text, marketcap text,
  volume_24h double precision, change_24h double precision, change_7d double precision,
  change_rank_24h int, change_rank_7d int, last_updated text
)
language plpgsql stable
as $$
begin
  return query select * from api.prices(array[market.coin_id(p_slug)], null, null, p_convert);
end;
$$;
comment on function api.coin_price(text, text) is 'The api.prices row of the coin with this slug, in p_convert (default USD). Unknown slug: MD404. Endpoint: GET /api/v1/prices/{slug}.';

-- why: a price on a past date for portfolios and calculators: the day's close, or the nearest day's within three days
create or replace function api.historical_price(p_slug text, p_date date)
returns table (slug text, symbol text, date text, price text, currency text, price_date text)
language plpgsql stable
as $$
#variable_conflict use_column
declare
  v_coin market.coins;
begin
  if p_date is null or p_date <= date '2008-12-31' or p_date > (now() at time zone 'UTC')::date then
    raise exception 'date must be after 2008-12-31 and not in the future.' using errcode = 'MD422';
  end if;
  select * into v_coin from market.coins c where c.id = market.coin_id(p_slug);
  return query
  select v_coin.slug, v_coin.symbol, market.iso_date(p_date), b.close::text, 'USD'::text,
    market.iso_date((b.time at time zone 'UTC')::date)
  from market.coin_bars(v_coin.id, 'daily',
    (p_date - 3)::timestamp at time zone 'UTC', (p_date + 3)::timestamp at time zone 'UTC') b
  order by abs((b.time at time zone 'UTC')::date - p_date), b.time
  limit 1;
  if not found then
    raise exception 'No price for this coin within 3 days of %.', p_date using errcode = 'MD404';
  end if;
end;
$$;
comment on function api.historical_price(text, date) is
'The USD price of the coin with this slug on p_date (after 2008-12-31, not in the future; MD422 otherwise): the close of that UTC day from the daily history, '
'else of the nearest day within 3 days (the earlier on a tie); price_date says which day it is. Unknown slug, or no price within 3 days: MD404. Endpoint: GET /api/v1/historical-price.';
