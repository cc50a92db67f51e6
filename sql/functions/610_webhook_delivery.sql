-- What the webhook channel adds to the outbox cycle (sql/functions/595_outbox.sql) around the HTTP
-- POST of jobs/deliver_webhook.ts. Rules: a delivery is the first attempt plus at most 3 retries,
-- after base, 5 x base and 25 x base (base 60 s: 1, 5 and 25 minutes), counted since its last
-- redelivery; a delivery whose last attempt fails counts one consecutive failure of its endpoint,
-- a success resets the count, and the 10th consecutive failure disables the endpoint (the spec's
-- auto-disable). A delivery still queued when its endpoint is disabled is skipped, not sent.

-- why: the webhook channel's message hook (app.outbox_channel)
create or replace function app.webhook_outbox_message(p_delivery_id bigint)
returns table (message jsonb, settle_as text, error text)
language sql stable
as $$
  select
    case when e.status <> 'disabled' then jsonb_build_object(
      'url', e.url, 'secret', e.secret, 'event', v.event, 'event_id', v.id,
      -- the raw body, the same bytes on every attempt; the signature covers it
      'body', jsonb_build_object('id', v.id, 'type', v.event, 'created_at', market.iso_time(v.created_at), 'test', v.test, 'data', v.data)::text)
    end,
    case when e.status = 'disabled' then 'skipped' end,
    case when e.status = 'disabled' then 'endpoint disabled before delivery' end
  from app.webhook_deliveries d
  join app.webhook_endpoints e on e.id = d.endpoint_id
  join app.webhook_events v on v.id = d.event_id
  where d.id = p_delivery_id
$$;
comment on function app.webhook_outbox_message(bigint) is
'What one attempt of a delivery POSTs (url, secret, event, event id, raw body), or, when its endpoint was disabled meanwhile, that it settles as skipped. Called by app.begin_outbox_attempt.';

-- why: the webhook channel's settled hook: the endpoint's failure count and the spec's auto-disable
create or replace function app.webhook_outbox_settled(p_delivery_id bigint, p_status text) returns text
language plpgsql
as $$
declare
  v_endpoint_id bigint := (select d.endpoint_id from app.webhook_deliveries d where d.id = p_delivery_id);
  v_failures int;
begin
  -- events whose every delivery has been pruned (app.finish_outbox_attempt) go with them
  delete from app.webhook_events v
  where v.created_at < now() - app.outbox_retention()
    and not exists (select from app.webhook_deliveries d where d.event_id = v.id);
  if p_status = 'succeeded' then
    update app.webhook_deliveries d set delivered_at = now() where d.id = p_delivery_id;
    update app.webhook_endpoints e set consecutive_failures = 0 where e.id = v_endpoint_id and e.consecutive_failures <> 0;
  elsif p_status = 'failed' then
    update app.webhook_endpoints e set consecutive_failures = e.consecutive_failures + 1,
      status = case when e.consecutive_failures + 1 >= 10 then 'disabled' else e.status end,
      disabled_at = case when e.consecutive_failures + 1 >= 10 then coalesce(e.disabled_at, now()) else e.disabled_at end
    where e.id = v_endpoint_id
    returning e.consecutive_failures into v_failures;
    if v_failures >= 10 then
      return 'disabled';
    end if;
  end if;
  return null;
end;
$$;
comment on function app.webhook_outbox_settled(bigint, text) is
'What settling a delivery means to its endpoint: succeeded stamps delivered_at and resets the consecutive failures; failed counts one, and the 10th disables the endpoint '
'(returns disabled). Drops events older than app.outbox_retention() left without a delivery. Called by app.settle_outbox_message.';
