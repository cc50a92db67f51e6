-- Fiat rates from the European Central Bank. The ECB quotes units per euro; market.fx_rates holds
-- units per US dollar, so each rate is divided by the EUR/USD rate of the same day (in numeric:
-- the rates never pass through a float). src/sources/ecb.ts fetches and parses; this stores.

-- why: a rate keeps ten significant digits, whatever its magnitude (ECB publishes four to six)
create or replace function market.round_significant(p_value numeric, p_digits int) returns numeric
language sql immutable parallel safe
as $$
  select case when p_value is null or p_value = 0 then p_value
    else trim_scale(round(p_value, greatest(0, least(40, p_digits - 1 - market.decimal_exponent(p_value))))) end
$$;
comment on function market.round_significant(numeric, int) is 'p_value rounded to p_digits significant digits (at most 40 decimals), trailing zeros dropped; 0 and null unchanged.';

-- why: one day of ECB reference rates (units per EUR) becomes a row per currency in units per USD
create or replace function market.store_ecb_rates(p_date date, p_rates_per_eur jsonb)
returns int
language plpgsql volatile
as $$
declare
  v_usd numeric;
  v_time timestamptz := (p_date + time '16:00') at time zone 'Europe/Berlin';
  v_count int;
begin
  if p_date is null or jsonb_typeof(p_rates_per_eur) is distinct from 'object' then
    raise exception 'ECB rates need a date and an object of currency -> rate per EUR.' using errcode = 'MD422';
  end if;
  if exists (select from jsonb_each_text(p_rates_per_eur) r
             where r.key !~ '^[A-Z]{3}$' or r.value !~ '^\d+(\.\d+)?$' or r.value::numeric <= 0) then
    raise exception 'ECB rates must be three-letter codes with positive decimal rates.' using errcode = 'MD422';
  end if;
  v_usd := (p_rates_per_eur ->> 'USD')::numeric;
  if v_usd is null then
    raise exception 'ECB rates of % have no USD rate: they cannot be converted to units per USD.', p_date using errcode = 'MD422';
  end if;
  insert into market.fx_rates (time, currency, rate, source)
  select v_time, r.currency, r.rate, 'ecb'
  from (
    select r.key as currency, market.round_significant(r.value::numeric / v_usd, 10) as rate
    from jsonb_each_text(p_rates_per_eur) r
    where r.key not in ('USD', 'EUR')
    union all select 'EUR', market.round_significant(1 / v_usd, 10)
    union all select 'USD', 1
  ) r
  on conflict (currency, time) do update set rate = excluded.rate, source = excluded.source;
  get diagnostics v_count = row_count;
  update market.data_sources set covered_until = greatest(covered_until, v_time), updated_at = now() where name = 'ecb';
  perform app.bump_data_version('fx');
  return v_count;
end;
$$;
comment on function market.store_ecb_rates(date, jsonb) is
'Stores one ECB reference-rate day: p_rates_per_eur {"USD": "1.0824", "JPY": "161.5", ...} (units per EUR, decimal strings) become market.fx_rates rows at 16:00 Europe/Berlin of p_date, '
'in units per USD (rate / USD rate, 10 significant digits; EUR = 1 / USD rate; USD = 1), source ecb. Idempotent per day. MD422 without a USD rate or with a malformed entry (nothing is written). Returns the rows written.';
