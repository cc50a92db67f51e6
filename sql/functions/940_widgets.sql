-- Embeddable widgets (src/widgets/): the market data a widget draws, in one call per widget, and
-- the widget keys (app.widget_keys beside their app.api_keys row): the lookup a request makes, the
-- console's list, create, origins and revoke, and the announcement that drops a key's cached
-- origins in every API process within a second.

-- why: the three widgets (ticker, coin card, mini chart) read the same rows; one function gives
-- them prices converted to the widget's currency as decimal strings, and a series when asked
create or replace function api.widget_coins(p_slugs text[], p_currency text, p_period text default null)
returns json
language plpgsql stable
as $$
declare
  v_rate numeric;
  v_ids int[];
  v_sparkline text := case p_period when '1d' then '24h' when '7d' then '7d' when '30d' then '30d' end;
begin
  if upper(p_currency) = 'USD' then
    v_rate := 1;
  else
    select f.rate into v_rate from market.fx_latest f left join market.fiat_currencies fc on fc.code = f.currency
    where f.currency = upper(p_currency) and coalesce(fc.active, true);
  end if;
  if v_rate is null then
    raise exception 'Unknown currency "%": use one of the fiat currencies of /api/v1/fiats.', p_currency using errcode = 'MD422', column = 'currency';
  end if;
  if p_period is not null and v_sparkline is null then
    raise exception 'range must be 1d, 7d or 30d.' using errcode = 'MD422', column = 'range';
  end if;
  -- every slug must name a coin (MD404 otherwise), in the order given
  select array_agg(market.coin_id(s.slug) order by s.n) into v_ids from unnest(p_slugs) with ordinality s (slug, n);
  return (
    select coalesce(json_agg(json_build_object(
      'slug', c.slug, 'symbol', c.symbol, 'name', c.name,
      'price', case when v_rate = 1 then s.price else trim_scale(s.price * v_rate) end::text,
      'marketcap', case when v_rate = 1 then s.marketcap else round(s.marketcap * v_rate, 2) end::text,
      'change_24h', s.change_24h,
      'last_updated', market.iso_time(s.last_updated),
      'series', case when v_sparkline is not null then (
        select json_build_object(
          'points', coalesce((select json_agg(trim_scale((p ->> 'price')::numeric * v_rate)::text) from json_array_elements(l -> 'points') p), '[]'::json),
          'low', trim_scale((l ->> 'low')::numeric * v_rate)::text,
          'high', trim_scale((l ->> 'high')::numeric * v_rate)::text,
          'change', (l ->> 'change')::double precision)
        from api.coin_sparkline(c.slug, v_sparkline) l) end
    ) order by i.n), '[]'::json)
    from unnest(v_ids) with ordinality i (id, n)
    join market.coins c on c.id = i.id
    left join market.coin_state s on s.coin_id = c.id
  );
end;
$$;
comment on function api.widget_coins(text[], text, text) is
'What the embeddable widgets draw: for each coin slug (in order; an unknown one raises MD404) slug, symbol, name, price and marketcap in p_currency (an active fiat with a rate; MD422 field currency otherwise) as decimal strings, change_24h (percent), last_updated, '
'and with p_period (1d, 7d or 30d; MD422 field range otherwise) series {points: closes as decimal strings oldest first (api.coin_sparkline), low, high, change}. Served at /widgets/*, not an /api/v1 endpoint.';

-- why: a widget request is admitted by its key's hash like any key; its allowed origins are what
-- only widget keys have, read once per key and process until announced changed
create or replace function app.widget_key(p_key_hash bytea)
returns table (key_id bigint, allowed_origins text[])
language sql stable security definer
set search_path = app, pg_temp
as $$
  select k.id, w.allowed_origins
  from app.api_keys k
  join app.widget_keys w on w.key_id = k.id
  where k.key_hash = p_key_hash and k.scope = 'widget' and app.key_live(k.revoked_at) and app.owner_enabled(k.owner)
$$;
comment on function app.widget_key(bytea) is 'The live widget key with this hash and its allowed origins; no row for an unknown, revoked or disabled one.';
revoke execute on function app.widget_key(bytea) from public;

-- A widget key's origins changed: every API process drops what it cached of the key (channel
-- api_keys, the key's hash in hex, as app.announce_key_change does for the key row itself).
create or replace function app.announce_widget_key_change() returns trigger
language plpgsql
set search_path = app, pg_temp
as $$
begin
  perform pg_notify('api_keys', encode(k.key_hash, 'hex')) from app.api_keys k where k.id = old.key_id;
  return null;
end;
$$;
comment on function app.announce_widget_key_change() is 'Trigger: NOTIFY api_keys with the hash of a widget key whose allowed origins changed.';
create or replace trigger widget_keys_announce_change
  after update of allowed_origins on app.widget_keys
  for each row when (old.allowed_origins is distinct from new.allowed_origins) execute function app.announce_widget_key_change();
comment on trigger widget_keys_announce_change on app.widget_keys is 'NOTIFY api_keys with the key''s hash when its allowed origins change.';

create or replace function app.console_widget_keys(p_owner text)
returns table (id bigint, name text, prefix text, publishable_key text, plan text, allowed_origins text[], created_at timestamptz, last_used_at timestamptz, views_this_month bigint, monthly_quota bigint)
language sql stable
as $$
  select k.id, k.name, k.prefix, w.publishable_key, k.plan, w.allowed_origins, k.created_at, k.last_used_at,
    coalesce((select u.used from app.usage_monthly u where u.key_id = k.id and u.month = date_trunc('month', now() at time zone 'utc')::date), 0),
    p.monthly_quota
  from app.api_keys k
  join app.widget_keys w on w.key_id = k.id
  join app.plans p on p.name = k.plan
  where k.owner = p_owner and k.scope = 'widget' and app.key_live(k.revoked_at)
  order by k.id
$$;
comment on function app.console_widget_keys(text) is 'The working widget keys of an owner: name, prefix, the publishable key, plan, allowed origins, created, last used, page views this month (UTC) and the plan''s monthly page views.';

create or replace function app.console_create_widget_key(p_owner text, p_key_hash bytea, p_key text, p_plan text, p_name text, p_origins text[])
returns bigint
language sql
as $$
  with created as (
    insert into app.api_keys (key_hash, prefix, owner, plan, scope, name)
    values (p_key_hash, left(p_key, 12), p_owner, p_plan, 'widget', p_name)
    returning id
  )
  insert into app.widget_keys (key_id, publishable_key, allowed_origins)
  select id, p_key, p_origins from created
  returning key_id
$$;
comment on function app.console_create_widget_key(text, bytea, text, text, text, text[]) is 'Creates a widget key of the owner (its app.api_keys row of scope widget and its app.widget_keys row) in one statement; returns its id.';

create or replace function app.console_set_widget_origins(p_owner text, p_key_id bigint, p_origins text[]) returns boolean
language sql
as $$
  with changed as (
    update app.widget_keys w set allowed_origins = p_origins
    from app.api_keys k
    where k.id = w.key_id and k.id = p_key_id and k.owner = p_owner and k.scope = 'widget' and app.key_live(k.revoked_at)
    returning 1
  )
  select exists (select from changed)
$$;
comment on function app.console_set_widget_origins(text, bigint, text[]) is 'Replaces the allowed origins of a working widget key of the owner; false when it has no such key.';

create or replace function app.console_revoke_widget_key(p_owner text, p_key_id bigint) returns boolean
language sql
as $$
  with revoked as (
    update app.api_keys set revoked_at = now()
    where id = p_key_id and owner = p_owner and scope = 'widget' and app.key_live(revoked_at)
    returning 1
  )
  select exists (select from revoked)
$$;
comment on function app.console_revoke_widget_key(text, bigint) is 'Revokes a working widget key of the owner (every widget refuses it within a second: NOTIFY api_keys); false when it has no such key.';
