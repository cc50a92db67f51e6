-- The Webhooks group's endpoint registry, scoped by owner: another owner's endpoint is not found
-- (MD404), never forbidden. The secret leaves the database once, in the create response.

-- why: the one shape of an endpoint in every response (never the secret)
create or replace function app.webhook_endpoint_json(p_endpoint app.webhook_endpoints) returns jsonb
language sql stable
as $$
  select jsonb_build_object(
    'id', p_endpoint.id, 'url', p_endpoint.url, 'events', to_jsonb(p_endpoint.events), 'status', p_endpoint.status,
    'consecutive_failures', p_endpoint.consecutive_failures,
    'disabled_at', market.iso_time(p_endpoint.disabled_at), 'created_at', market.iso_time(p_endpoint.created_at))
$$;

-- why: every by-id call resolves the endpoint the same way, locked for the change that follows
create or replace function app.owned_webhook_endpoint(p_owner text, p_id bigint) returns app.webhook_endpoints
language plpgsql
as $$
declare
  v_endpoint app.webhook_endpoints;
begin
  select * into v_endpoint from app.webhook_endpoints where id = p_id and owner = p_owner for update;
  if not found then
    raise exception 'Webhook endpoint % does not exist.', p_id using errcode = 'MD404';
  end if;
  return v_endpoint;
end;
$$;

-- why: one recipe for a signing secret, at registration and at rotation
create or replace function app.new_webhook_secret() returns text
language sql volatile
as $$
  -- two v4 uuids: 244 random bits from the server's strong random source
  select 'whsec_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')
$$;
comment on function app.new_webhook_secret() is 'A new endpoint signing secret: whsec_ and 64 hex digits (244 random bits).';

create or replace function app.create_webhook_endpoint(p_owner text, p_url text, p_events text[], p_max_endpoints int) returns jsonb
language plpgsql
as $$
declare
  v_endpoint app.webhook_endpoints;
  v_count int;
begin
  if p_url is null or p_url !~ '^https?://' or length(p_url) > 2048 then
    raise exception 'url must be an http(s) URL of at most 2048 characters.' using errcode = 'MD422', column = 'url';
  end if;
  if p_events is null or cardinality(p_events) = 0 or not p_events <@ array['alarm.triggered'] then
    raise exception 'events must list one or more of: alarm.triggered.' using errcode = 'MD422';
  end if;
  -- Serialises concurrent creates of one owner, so the limit cannot be overshot.
  perform pg_advisory_xact_lock(hashtext('app.webhook_endpoints:' || p_owner));
  select count(*) into v_count from app.webhook_endpoints where owner = p_owner;
  if v_count >= p_max_endpoints then
    raise exception 'At most % webhook endpoints per owner; delete one first.', p_max_endpoints using errcode = 'MD409';
  end if;
  insert into app.webhook_endpoints (owner, url, events, secret)
  values (p_owner, p_url, array(select distinct unnest(p_events) order by 1),
    app.new_webhook_secret())
  returning * into v_endpoint;
  return app.webhook_endpoint_json(v_endpoint) || jsonb_build_object('secret', v_endpoint.secret);
end;
$$;
comment on function app.create_webhook_endpoint(text, text, text[], int) is
'Registers an endpoint for p_owner (at most p_max_endpoints, else MD409) and returns it with its secret, the only time the secret is returned.';

create or replace function app.list_webhook_endpoints(p_owner text) returns jsonb
language sql stable
as $$
  select coalesce(jsonb_agg(app.webhook_endpoint_json(e) order by e.id), '[]')
  from app.webhook_endpoints e where e.owner = p_owner
$$;

create or replace function app.get_webhook_endpoint(p_owner text, p_id bigint) returns jsonb
language sql stable
as $$
  select app.webhook_endpoint_json(e) from app.webhook_endpoints e where e.id = p_id and e.owner = p_owner
$$;

create or replace function app.delete_webhook_endpoint(p_owner text, p_id bigint) returns jsonb
language plpgsql
as $$
begin
  -- Its deliveries go with it; a job still queued for one of them finds nothing and ends.
  delete from app.webhook_endpoints where id = (app.owned_webhook_endpoint(p_owner, p_id)).id;
  return jsonb_build_object('deleted', true);
end;
$$;

create or replace function app.enable_webhook_endpoint(p_owner text, p_id bigint) returns jsonb
language plpgsql
as $$
declare
  v_endpoint app.webhook_endpoints := app.owned_webhook_endpoint(p_owner, p_id);
begin
  update app.webhook_endpoints set status = 'delivering', consecutive_failures = 0, disabled_at = null
  where id = v_endpoint.id
  returning * into v_endpoint;
  return app.webhook_endpoint_json(v_endpoint);
end;
$$;
comment on function app.enable_webhook_endpoint(text, bigint) is
'Re-enables an endpoint (idempotent): status delivering, consecutive_failures 0. Events raised while it was disabled are not sent.';

create or replace function app.send_webhook_test(p_owner text, p_id bigint) returns jsonb
language plpgsql
as $$
declare
  v_endpoint app.webhook_endpoints := app.owned_webhook_endpoint(p_owner, p_id);
  v_event_id uuid;
  v_delivery_id bigint;
begin
  if v_endpoint.status = 'disabled' then
    raise exception 'Webhook endpoint % is disabled; re-enable it first (POST /api/v1/webhooks/%/enable).', p_id, p_id using errcode = 'MD409';
  end if;
  -- A sample alarm.triggered event marked "test": true, for this endpoint only: the data has the
  -- shape of app.alarm_triggered_event, with no alarm behind it.
  insert into app.webhook_events (owner, event, test, data)
  values (p_owner, 'alarm.triggered', true, jsonb_build_object(
    'alarm', null,
    'coin', (select jsonb_build_object('id', c.id, 'slug', c.slug, 'name', c.name, 'symbol', c.symbol) from market.coins c where c.slug = 'bitcoin'),
    'metric', 'rate', 'direction', 'above', 'target', '100000', 'value', '100000.01', 'triggered_at', market.iso_time(now()),
    'message', 'Test event sent from POST /api/v1/webhooks/' || p_id || '/test; no alarm triggered.'))
  returning id into v_event_id;
  insert into app.webhook_deliveries (endpoint_id, event_id) values (v_endpoint.id, v_event_id)
  returning id into v_delivery_id;
  perform app.queue_webhook_job(v_delivery_id);
  return jsonb_build_object('queued', true, 'event_id', v_event_id, 'delivery_id', v_delivery_id);
end;
$$;
comment on function app.send_webhook_test(text, bigint) is
'Queues a sample alarm.triggered event ("test": true, no alarm behind it) to one delivering endpoint of p_owner; MD409 when it is disabled.';

create or replace function app.list_webhook_deliveries(p_owner text, p_id bigint, p_page int, p_per_page int) returns jsonb
language plpgsql stable
as $$
begin
  if not exists (select from app.webhook_endpoints where id = p_id and owner = p_owner) then
    raise exception 'Webhook endpoint % does not exist.', p_id using errcode = 'MD404';
  end if;
  return jsonb_build_object(
    'retention', app.outbox_retention()::text,
    'total', (select count(*) from app.webhook_deliveries where endpoint_id = p_id),
    'data', coalesce((
      select jsonb_agg(row order by d.created_at desc, d.id desc)
      from (
        select d.id, d.created_at, jsonb_build_object(
          'id', d.id, 'event', v.event, 'event_id', v.id, 'test', v.test, 'status', d.status,
          'response_status', d.response_status, 'error', d.error, 'attempts', d.attempts,
          'delivered_at', market.iso_time(d.delivered_at), 'created_at', market.iso_time(d.created_at),
          'attempt_log', (
            select coalesce(jsonb_agg(jsonb_build_object(
              'started_at', market.iso_time(a.started_at), 'outcome', coalesce(a.outcome, 'in_flight'),
              'response_status', a.response_status, 'duration_ms', a.duration_ms, 'error', a.error,
              'response_excerpt', a.response_excerpt) order by a.id), '[]')
            from app.webhook_attempts a where a.delivery_id = d.id)) as row
        from app.webhook_deliveries d
        join app.webhook_events v on v.id = d.event_id
        where d.endpoint_id = p_id
        order by d.created_at desc, d.id desc
        limit p_per_page offset (p_page - 1) * p_per_page
      ) d
    ), '[]'));
end;
$$;
comment on function app.list_webhook_deliveries(text, bigint, int, int) is
'One page of an endpoint''s deliveries (kept app.outbox_retention()), newest first, each with every HTTP attempt (outcome, response status, duration, error, the start of the receiver''s answer), and the retention as text.';
