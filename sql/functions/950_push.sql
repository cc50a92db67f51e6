-- Browser push subscriptions (sql/migrations/000130): the VAPID key pair and the browsers an
-- account subscribed in the console (src/console/push.ts). What is pushed to them is the push
-- outbox, sql/functions/640_push_outbox.sql. Everything is in app: the analyst role reads none of it.

-- why: concurrent first starts (API and worker processes) must agree on one pair
create or replace function app.push_vapid_keys(p_public_key text, p_private_key text)
returns table (public_key text, private_key text)
language plpgsql
as $$
#variable_conflict use_column
begin
  insert into app.vapid_keys (public_key, private_key) values (p_public_key, p_private_key) on conflict (singleton) do nothing;
  return query select k.public_key, k.private_key from app.vapid_keys k;
end;
$$;
comment on function app.push_vapid_keys(text, text) is
'The stored VAPID key pair (base64url); stores the given candidate pair first when none is stored yet, so the first caller''s pair is everyone''s.';

-- the most browsers one account may subscribe: each trigger sends one push per browser
create or replace function app.push_max_subscriptions() returns int
language sql immutable
as $$ select 20 $$;
comment on function app.push_max_subscriptions() is 'The most browsers one account may subscribe to its alarm notifications.';

create or replace function app.push_subscribe(p_owner text, p_endpoint text, p_p256dh text, p_auth text, p_user_agent text)
returns bigint
language plpgsql
as $$
declare
  v_id bigint;
begin
  -- the service validated these (src/push/subscription.ts: a P-256 point, the endpoint's host); the shapes are checked again here
  if p_endpoint is null or p_endpoint !~ '^https?://[^\s]+$' or length(p_endpoint) > 2000 then
    raise exception 'The endpoint must be an http(s) URL of at most 2000 characters.' using errcode = 'MD422', column = 'endpoint';
  end if;
  if p_p256dh is null or p_p256dh !~ '^[A-Za-z0-9_-]{87}$' then
    raise exception 'The p256dh key must be a P-256 public key (65 bytes, base64url).' using errcode = 'MD422', column = 'p256dh';
  end if;
  if p_auth is null or p_auth !~ '^[A-Za-z0-9_-]{22}$' then
    raise exception 'The auth secret must be 16 bytes (base64url).' using errcode = 'MD422', column = 'auth';
  end if;
  -- one subscription at a time per account, so two tabs cannot pass the limit together
  perform 1 from app.owners o where o.owner = p_owner for update;
  if (select count(*) from app.push_subscriptions s where s.owner = p_owner and s.endpoint <> p_endpoint) >= app.push_max_subscriptions() then
    raise exception 'This account has % browsers subscribed, the most allowed: remove one first.', app.push_max_subscriptions()
      using errcode = 'MD422', column = 'endpoint';
  end if;
  -- the same browser subscribing again (new keys after the VAPID keys changed, say) replaces its row
  insert into app.push_subscriptions as s (owner, endpoint, p256dh, auth, user_agent)
  values (p_owner, p_endpoint, p_p256dh, p_auth, left(coalesce(p_user_agent, ''), 200))
  on conflict (owner, endpoint) do update set p256dh = excluded.p256dh, auth = excluded.auth, user_agent = excluded.user_agent
  returning s.id into v_id;
  return v_id;
end;
$$;
comment on function app.push_subscribe(text, text, text, text, text) is
'Stores a browser''s push subscription for p_owner (endpoint URL, p256dh and auth as base64url, a user-agent label) or renews the keys of the same endpoint; returns its id. '
'A malformed value MD422 (COLUMN names it); more than app.push_max_subscriptions() browsers MD422 on endpoint.';

create or replace function app.push_subscriptions_of(p_owner text)
returns table (id bigint, user_agent text, push_service text, created_at timestamptz, last_success_at timestamptz)
language sql stable
as $$
  select s.id, s.user_agent, substring(s.endpoint from '^https?://([^/:?#]+)'), s.created_at, s.last_success_at
  from app.push_subscriptions s where s.owner = p_owner order by s.id
$$;
comment on function app.push_subscriptions_of(text) is
'The browsers subscribed to p_owner''s alarm notifications, oldest first: user-agent label, the push service''s host (never the endpoint or keys), created, last accepted push.';

create or replace function app.push_unsubscribe(p_owner text, p_id bigint) returns boolean
language sql
as $$
  with removed as (delete from app.push_subscriptions where owner = p_owner and id = p_id returning 1)
  select exists (select from removed)
$$;
comment on function app.push_unsubscribe(text, bigint) is 'Removes a subscribed browser of p_owner (its pending pushes settle as gone); false when p_owner has no such subscription.';
