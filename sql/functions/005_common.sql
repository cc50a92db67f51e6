-- Helpers every other file uses: how the API writes instants and dates, how a slug becomes an id
-- (with the 404 the endpoints document), per-field language fallback, a coin's description. First
-- of the function files, so that the files after it may call them from SQL-language bodies.

-- why: one spelling of an instant in every response, whatever the session's TimeZone
create or replace function market.iso_time(p_time timestamptz) returns text
language sql stable parallel safe
as $$ select to_char(p_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"') $$;
comment on function market.iso_time(timestamptz) is 'An instant as the API writes it: ISO 8601 in UTC to the second, e.g. 2026-06-27T10:34:17+00:00. Null stays null.';

-- why: a date as the API writes it, independent of DateStyle
create or replace function market.iso_date(p_date date) returns text
language sql stable parallel safe
as $$ select to_char(p_date, 'YYYY-MM-DD') $$;
comment on function market.iso_date(date) is 'A date as the API writes it: YYYY-MM-DD. Null stays null.';

-- why: numeric log() runs at arbitrary precision (about 30 µs a call); the digits a value is rounded
-- to need only its decimal exponent, which a float's log10 gives to within one, put right in numeric
create or replace function market.decimal_exponent(p_value numeric) returns int
language sql immutable parallel safe
as $$
  -- every call in it immutable (text || int would be anytextcat, stable), so that it is inlined
  select floor(log(abs(p_value)::double precision))::int
    + case when abs(p_value) >= ('1e' || (floor(log(abs(p_value)::double precision))::int + 1)::text)::numeric then 1
           when abs(p_value) < ('1e' || (floor(log(abs(p_value)::double precision))::int)::text)::numeric then -1
           else 0 end
$$;
comment on function market.decimal_exponent(numeric) is 'floor(log10(|p_value|)), exactly: 2 for 123.4, -3 for 0.00999, 0 for 1; null for null. 0 has none and is refused, as are values beyond a double precision''s range (about 1e308 and 1e-308).';

-- why: every paginated list cuts its numbered rows to one page the same way
create or replace function market.on_page(p_n bigint, p_page int, p_per_page int) returns boolean
language sql immutable parallel safe
as $$
  select p_n > (greatest(p_page, 1) - 1)::bigint * p_per_page and p_n <= greatest(p_page, 1)::bigint * p_per_page
$$;
comment on function market.on_page(bigint, int, int) is 'True when the row numbered p_n (1-based, in the list''s order) is on page p_page (1-based; below 1 counts as 1) of p_per_page rows.';

-- why: a LIKE pattern from typed text matches that text literally (its %, _ and \ are no wildcards)
create or replace function market.like_escape(p_text text) returns text
language sql immutable parallel safe
as $$ select replace(replace(replace(p_text, '\', '\\'), '%', '\%'), '_', '\_') $$;
comment on function market.like_escape(text) is 'p_text with the LIKE wildcards % and _ and the escape character \ escaped: like market.like_escape(x) || ''%'' is a prefix match of x as typed.';

-- The case rule of every slug lookup: slugs are stored lowercase (each table's check constraint) and
-- a given slug is lowercased, so a lookup is case-insensitive and still an equality on the unique
-- slug index. market.coin_ids, market.exchange_ids and market.wallet_ids are the only places a coin,
-- venue or wallet slug is looked up; one slug with a 404 (market.coin_id …) and the filters that must
-- not 404 go through them.

-- why: the one lookup of coin slugs, for a list filter (slugs=) as for one slug; a renamed coin's
-- alias (market.coin_slug_aliases) resolves here too, never in place of a coin's own slug
create or replace function market.coin_ids(p_slugs text[]) returns setof int
language sql stable parallel safe
as $$
  select c.id from market.coins c where c.slug = any (array(select lower(s) from unnest(p_slugs) s))
  union
  select a.coin_id from market.coin_slug_aliases a
  where a.slug = any (array(select lower(s) from unnest(p_slugs) s))
    and not exists (select from market.coins c where c.slug = a.slug)
$$;
comment on function market.coin_ids(text[]) is 'The ids of the coins with these slugs or aliases (market.coin_slug_aliases: a renamed coin''s other slug; a coin''s own slug wins over an alias), each once; unknown slugs name nothing, null names nothing. '
'Case rule of every coin and venue slug lookup: slugs are stored lowercase and the given slug is lowercased, so bitcoin, Bitcoin and BITCOIN name the same coin.';

-- why: names and codes from outside (a metadata list, a venue) become slugs by one rule
create or replace function market.slug_of(p_text text) returns text
language sql immutable parallel safe
as $$
  select nullif(trim(both '-' from left(trim(both '-' from regexp_replace(lower(p_text), '[^a-z0-9]+', '-', 'g')), 120)), '')
$$;
comment on function market.slug_of(text) is 'A slug made of any text: lowercased, every run of characters other than a-z and 0-9 one hyphen, no hyphen at either end, at most 120 characters; null when nothing is left ("Some Name" -> some-name, "1000SATS" -> 1000sats).';

-- why: a coin named after a metadata list's entry (discovered, or adopted) gets one slug by one rule
create or replace function market.entry_slug(p_external_id text, p_symbol text) returns text
language sql immutable parallel safe
as $$
  select market.slug_of(case when left(p_external_id, length(p_symbol) + 1) = lower(p_symbol) || '-'
    then substr(p_external_id, length(p_symbol) + 2) else p_external_id end)
$$;
comment on function market.entry_slug(text, text) is 'The slug of a coin named after a metadata list''s entry: its id without the leading "<symbol>-" (xyz-some-name of XYZ -> some-name), made a slug (market.slug_of).';

-- why: a coin slug resolves in one place, with the error the endpoints document
create or replace function market.coin_id(p_slug text) returns int
language plpgsql stable
as $$
declare
  v_id int;
begin
  select i into v_id from market.coin_ids(array[p_slug]) i;
  if v_id is null then
    raise exception 'Coin not found.' using errcode = 'MD404';
  end if;
  return v_id;
end;
$$;
comment on function market.coin_id(text) is 'The id of the coin with this slug (case-insensitive, as market.coin_ids); raises MD404 (HTTP 404) "Coin not found." for an unknown slug.';

-- why: the one lookup of venue slugs, for a list filter (slugs=) as for one slug
create or replace function market.exchange_ids(p_slugs text[]) returns setof int
language sql stable parallel safe
as $$ select e.id from market.exchanges e where e.slug = any (array(select lower(s) from unnest(p_slugs) s)) $$;
comment on function market.exchange_ids(text[]) is 'The ids of the venues (exchanges) with these slugs, each once; unknown slugs name nothing, null names nothing. '
'Case rule of every coin and venue slug lookup: slugs are stored lowercase and the given slug is lowercased, so binance and Binance name the same venue.';

-- why: a venue slug resolves in one place, with the error the endpoints document
create or replace function market.exchange_id(p_slug text) returns int
language plpgsql stable
as $$
declare
  v_id int;
begin
  select i into v_id from market.exchange_ids(array[p_slug]) i;
  if v_id is null then
    raise exception 'Exchange not found.' using errcode = 'MD404';
  end if;
  return v_id;
end;
$$;
comment on function market.exchange_id(text) is 'The id of the venue with this slug (case-insensitive, as market.exchange_ids); raises MD404 (HTTP 404) "Exchange not found." for an unknown slug.';

-- why: the one lookup of wallet slugs (a DRAFT is not there yet), for a list filter as for one slug
create or replace function market.wallet_ids(p_slugs text[]) returns setof int
language sql stable parallel safe
as $$
  select w.id from market.wallets w
  where w.slug = any (array(select lower(s) from unnest(p_slugs) s)) and w.status <> 'DRAFT'
$$;
comment on function market.wallet_ids(text[]) is 'The ids of the published (not DRAFT) wallets with these slugs, each once; unknown slugs name nothing. Case-insensitive, by the rule of market.coin_ids.';

-- why: a wallet slug resolves in one place, with the error the endpoints document
create or replace function market.wallet_id(p_slug text) returns int
language plpgsql stable
as $$
declare
  v_id int;
begin
  select i into v_id from market.wallet_ids(array[p_slug]) i;
  if v_id is null then
    raise exception 'Wallet not found.' using errcode = 'MD404';
  end if;
  return v_id;
end;
$$;
comment on function market.wallet_id(text) is 'The id of the published (not DRAFT) wallet with this slug (case-insensitive, as market.wallet_ids); raises MD404 (HTTP 404) "Wallet not found." otherwise.';

-- why: the one fallback order of every translated text (content fields, coin descriptions)
create or replace function market.locale_chain(p_locale text) returns text[]
language sql immutable parallel safe
as $$
  -- no FROM and no subquery, so the planner inlines it
  select array_remove(array[
    p_locale,
    nullif(split_part(p_locale, '-', 1), p_locale),
    case when 'en' in (p_locale, split_part(p_locale, '-', 1)) then null else 'en' end], null)
$$;
comment on function market.locale_chain(text) is 'The locales a text in p_locale falls back through, most specific first, each once: the locale, its language, English (pt-BR: {pt-BR,pt,en}; de: {de,en}; en-GB: {en-GB,en}; null: {en}).';

-- why: one rule for per-field language fallback, for every translated content kind
create or replace function market.localize(p_translations jsonb, p_locale text) returns jsonb
language sql immutable parallel safe
as $$
  with chain as (
    -- the locales of the chain that have a translation: the first of them wins
    select c.locale, c.n
    from unnest(market.locale_chain(p_locale)) with ordinality as c (locale, n)
    where p_translations ? c.locale
  ),
  winner as (select locale from chain order by n limit 1),
  fields as (
    select distinct f.field from chain, jsonb_object_keys(p_translations -> chain.locale) as f (field)
  ),
  picked as (
    select f.field, p.value, p.locale
    from fields f
    left join lateral (
      select p_translations -> c.locale -> f.field as value, c.locale
      from chain c
      where jsonb_typeof(p_translations -> c.locale -> f.field) is distinct from 'null'
        and p_translations -> c.locale ? f.field
      order by c.n limit 1
    ) p on true
  )
  select coalesce((select jsonb_object_agg(field, coalesce(value, 'null'::jsonb)) from picked), '{}'::jsonb)
    || jsonb_build_object(
      'locale', (select locale from winner),
      'fallback_fields', coalesce((
        select jsonb_agg(field order by field) from picked where locale is distinct from (select locale from winner) and value is not null
      ), '[]'::jsonb))
$$;
comment on function market.localize(jsonb, text) is
'Per-field language fallback. p_translations: {"<locale>": {"<field>": value, ...}, ...}. Returns every field in the first locale of market.locale_chain(p_locale) (the locale, its language e.g. pt for pt-BR, English) whose value is not null, '
'plus "locale": the most specific of those locales that has a translation at all (the one that won), and "fallback_fields": the fields that came from another locale (sorted). Locale null when there is no translation.';

-- why: the detail endpoint's description falls back to English when the locale has none
create or replace function market.coin_description(p_coin_id int, p_locale text default 'en')
returns table (locale text, html text)
language sql stable
as $$
  select d.locale, d.html
  from unnest(market.locale_chain(p_locale)) with ordinality as c (locale, n)
  join market.coin_descriptions d on d.coin_id = p_coin_id and d.locale = c.locale
  order by c.n
  limit 1;
$$;
comment on function market.coin_description(int, text) is 'The coin''s HTML description in the first locale of market.locale_chain(p_locale) that has one (the locale e.g. de or pt-BR, else its language pt, else English); with the locale that won. No row when the coin has none.';

-- why: admission refuses the keys of a disabled account (010, 012); one definition, inlinable
create or replace function app.owner_enabled(p_owner text) returns boolean
language sql stable
as $$ select not exists (select from app.owners o where o.owner = p_owner and o.disabled_at is not null) $$;
comment on function app.owner_enabled(text) is 'False when the key owner''s console account is disabled (app.owners.disabled_at): its keys are refused.';
revoke execute on function app.owner_enabled(text) from public;

-- why: a key works until its revoked_at: never set, or a time to come (the grace of a rotated key);
-- admission (010, 012), the console and revocation read it here, once
create or replace function app.key_live(p_revoked_at timestamptz) returns boolean
language sql stable
as $$ select p_revoked_at is null or p_revoked_at > now() $$;
comment on function app.key_live(timestamptz) is 'Whether an API key with this revoked_at still works: not revoked, or revoked at a time to come (a rotated key during its grace period).';
revoke execute on function app.key_live(timestamptz) from public;
