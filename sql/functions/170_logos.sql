-- Logos of coins, exchanges and wallets. Every API row that carries `logo` takes it from
-- market.logo_url(): the catalogue's image when one is configured, else the path of the monogram
-- the service draws itself (GET /logos/{kind}/{slug}.svg, src/pages/monogram.ts). The path is
-- root-relative because only the request knows the service's public base; the response envelope
-- prefixes it (src/http/logos.ts, absoluteLogos), as it does for pagination links.

-- why: the one place a logo URL is decided, so every endpoint and MCP tool agrees
create or replace function market.logo_url(p_kind text, p_slug text, p_image text) returns text
language sql immutable parallel safe
as $$
  select coalesce(p_image, '/logos/' || p_kind || '/' || p_slug || '.svg')
$$;
comment on function market.logo_url(text, text, text) is 'The logo of a coin, exchange or wallet (p_kind coins, exchanges or wallets): the configured image URL (p_image, the logo column) when there is one, else the root-relative path /logos/{kind}/{slug}.svg of the generated SVG monogram, which the API answers as an absolute URL on the service''s public base. Slugs are URL-safe by their check constraint.';

-- why: "Crypto.com" -> "CC", "Binance" -> "B": the initials read better than a name's first two letters
create or replace function market.name_initials(p_name text) returns text
language sql immutable parallel safe
as $$
  select coalesce(
    (select upper(string_agg(left(w.word, 1), '' order by w.n))
     from (select t.word, t.n from regexp_split_to_table(p_name, '[^[:alnum:]]+') with ordinality as t(word, n)
           where t.word <> '' order by t.n limit 2) w),
    upper(left(p_name, 1)))
$$;
comment on function market.name_initials(text) is 'The initials (upper case) of the first two alphanumeric words of a name; the first character when it has none.';

-- why: the monogram route reads what it draws in one query; the colour is derived, not stored
create or replace function api.logo_monogram(p_kind text, p_slug text)
returns table (letters text, title text, hue int)
language sql stable
as $$
  with subject as (
    select c.slug, upper(left(c.symbol, 2)) as letters, c.name as title
    from market.coins c where p_kind = 'coins' and c.id in (select i from market.coin_ids(array[p_slug]) i)
    union all
    select e.slug, market.name_initials(e.name), e.name
    from market.exchanges e where p_kind = 'exchanges' and e.id in (select i from market.exchange_ids(array[p_slug]) i)
    union all
    select w.slug, market.name_initials(w.name), w.name
    from market.wallets w where p_kind = 'wallets' and w.id in (select i from market.wallet_ids(array[p_slug]) i)
  )
  -- 24 bits of the stored slug's md5 as a hue: stable across restarts, versions and machines
  select s.letters, s.title, (('x' || left(md5(s.slug), 6))::bit(24)::int % 360)
  from subject s
$$;
comment on function api.logo_monogram(text, text) is 'What the generated logo of a coin, exchange or published wallet shows (p_kind coins, exchanges or wallets; no row for an unknown slug): letters (a coin: the first two characters of its symbol, upper case; an exchange or wallet: the initials of the first two words of its name), title (the name) and hue (0-359, from the md5 of the slug: the catalogue has no colour). Endpoint: GET /logos/{kind}/{slug}.svg.';
