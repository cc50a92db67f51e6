-- The console's alarm and webhook pages (src/console/alarms.ts, webhooks.ts). They call the API's
-- own functions (620_alarms.sql, 605_webhook_endpoints.sql): what is here is only what the API has
-- no operation for: the alarm list with each coin's current value, rotating an endpoint's secret
-- and sending a delivery again.

-- why: which channels the alarm forms offer depends on what the account can be reached by
create or replace function app.console_alarm_reach(p_owner text, out endpoints int, out browsers int)
language sql stable
as $$
  select jsonb_array_length(app.list_webhook_endpoints(p_owner)),
    (select count(*)::int from app.push_subscriptions b where b.owner = p_owner)
$$;
comment on function app.console_alarm_reach(text) is
'How many webhook endpoints and browsers subscribed to push p_owner has: the console offers the webhook and push channels only then.';

-- why: the alarms page shows how far each alarm is from triggering, in the query that lists them
create or replace function app.console_alarms(p_owner text, p_page int, p_per_page int) returns jsonb
language sql stable
as $$
  select l.page || jsonb_build_object(
    'webhook_endpoints', (app.console_alarm_reach(p_owner)).endpoints,
    'push_browsers', (app.console_alarm_reach(p_owner)).browsers,
    'data', coalesce((
      select jsonb_agg(j.alarm || jsonb_build_object(
          'current_value', v.value::text,
          'distance', (a.target - v.value)::text,
          'distance_percent', round((a.target - v.value) / nullif(v.value, 0) * 100, 2)::text)
        order by j.n)
      from jsonb_array_elements(l.page -> 'data') with ordinality j(alarm, n)
      join app.alarms a on a.id = (j.alarm ->> 'id')::bigint
      left join market.coin_state s on s.coin_id = a.coin_id
      cross join lateral (select app.alarm_metric_value(s, a.metric) as value) v), '[]'))
  from (select app.list_alarms(p_owner, null, null, null, p_page, p_per_page) as page) l
$$;
comment on function app.console_alarms(text, int, int) is
'app.list_alarms (one page of p_owner''s alarms, newest first: {total, balance, data}) with, on each alarm, the coin''s current value of its metric '
'(app.alarm_metric_value, decimal text), distance = target - current value and distance_percent = that as a percent of the current value (2 places); '
'null without a current value. Also webhook_endpoints and push_browsers: how many endpoints and subscribed browsers the owner has (the webhook and push channels are offered only then).';

create or replace function app.rotate_webhook_secret(p_owner text, p_id bigint) returns jsonb
language plpgsql
as $$
declare
  v_endpoint app.webhook_endpoints := app.owned_webhook_endpoint(p_owner, p_id);
begin
  update app.webhook_endpoints set secret = app.new_webhook_secret() where id = v_endpoint.id
  returning * into v_endpoint;
  return app.webhook_endpoint_json(v_endpoint) || jsonb_build_object('secret', v_endpoint.secret);
end;
$$;
comment on function app.rotate_webhook_secret(text, bigint) is
'Gives an endpoint of p_owner a new signing secret, at once: every attempt from now on, retries of earlier events included, is signed with it. '
'Returns the endpoint with the new secret, the only time it is returned. Not p_owner''s: MD404.';

create or replace function app.redeliver_webhook(p_owner text, p_endpoint_id bigint, p_delivery_id bigint) returns jsonb
language plpgsql
as $$
declare
  v_endpoint app.webhook_endpoints := app.owned_webhook_endpoint(p_owner, p_endpoint_id);
  v_delivery app.webhook_deliveries;
begin
  select * into v_delivery from app.webhook_deliveries d where d.id = p_delivery_id and d.endpoint_id = v_endpoint.id for update;
  if not found then
    raise exception 'Delivery % does not exist.', p_delivery_id using errcode = 'MD404';
  end if;
  if v_endpoint.status = 'disabled' then
    raise exception 'Webhook endpoint % is disabled; re-enable it first.', p_endpoint_id using errcode = 'MD409', hint = 'endpoint_disabled';
  end if;
  if v_delivery.status = 'pending' then
    raise exception 'Delivery % is queued already.', p_delivery_id using errcode = 'MD409', hint = 'delivery_pending';
  end if;
  -- the same event (same id, same body) to the same endpoint, by the worker's own job
  update app.webhook_deliveries d set status = 'pending', response_status = null, error = null, delivered_at = null, redelivered_at = now()
  where d.id = v_delivery.id;
  perform app.queue_webhook_job(v_delivery.id);
  return jsonb_build_object('queued', true, 'event_id', v_delivery.event_id, 'delivery_id', v_delivery.id);
end;
$$;
comment on function app.redeliver_webhook(text, bigint, bigint) is
'Sends a settled delivery (succeeded, failed or skipped) of an endpoint of p_owner again: pending, a deliver_webhook job queued, the same event id and body, '
'with retries of its own (counted from redelivered_at). MD404: not p_owner''s endpoint or not its delivery; MD409 endpoint_disabled, delivery_pending.';
