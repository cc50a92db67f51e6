-- Delivery bookkeeping around the HTTP POST of jobs/deliver_webhook.ts: an attempt is opened
-- (committed) before the POST and closed after it, so every attempt is on record even when the
-- worker dies in between. Rules: a delivery is the first attempt plus at most 3 retries, after
-- base, 5 x base and 25 x base (base 60 s: 1, 5 and 25 minutes); a delivery whose last attempt
-- fails counts one consecutive failure of its endpoint, a success resets the count, and the
-- 10th consecutive failure disables the endpoint.

create or replace function app.begin_webhook_attempt(p_delivery_id bigint)
returns table (attempt_id bigint, attempt int, url text, secret text, event text, event_id uuid, body text)
language plpgsql
as $$
declare
  v_delivery app.webhook_deliveries;
  v_endpoint app.webhook_endpoints;
begin
  select * into v_delivery from app.webhook_deliveries d where d.id = p_delivery_id for update;
  -- deleted with its endpoint, or already settled (a duplicate job): nothing to do
  if not found or v_delivery.status <> 'pending' then
    return;
  end if;
  select * into v_endpoint from app.webhook_endpoints e where e.id = v_delivery.endpoint_id;
  if v_endpoint.status = 'disabled' then
    update app.webhook_deliveries d set status = 'skipped', error = 'endpoint disabled before delivery'
    where d.id = p_delivery_id;
    return;
  end if;
  -- An attempt still open here belongs to a worker that died mid-POST (its job lock expired and
  -- the job came back): the receiver may or may not have the event; send it again.
  update app.webhook_attempts a set finished_at = now(), outcome = 'interrupted',
    error = 'the worker stopped before recording the outcome; redelivered'
  where a.delivery_id = p_delivery_id and a.finished_at is null;
  update app.webhook_deliveries d set attempts = d.attempts + 1 where d.id = p_delivery_id
  returning d.attempts into attempt;
  insert into app.webhook_attempts (delivery_id) values (p_delivery_id) returning id into attempt_id;
  select v_endpoint.url, v_endpoint.secret, v.event, v.id,
    -- the raw body, the same bytes on every attempt; the signature covers it
    jsonb_build_object('id', v.id, 'type', v.event, 'created_at', market.iso_time(v.created_at), 'test', v.test, 'data', v.data)::text
  into url, secret, event, event_id, body
  from app.webhook_events v where v.id = v_delivery.event_id;
  return next;
end;
$$;
comment on function app.begin_webhook_attempt(bigint) is
'Opens the next HTTP attempt of a pending delivery and returns what to POST (url, secret, event, event id, raw body); no row when there is nothing to send '
'(delivery settled or gone; endpoint disabled: the delivery is skipped). Closes an attempt a dead worker left open as interrupted.';

create or replace function app.finish_webhook_attempt(
  p_attempt_id bigint, p_response_status int, p_duration_ms int, p_error text, p_retry_base_ms int default 60000,
  p_response_excerpt text default null
) returns text
language plpgsql
as $$
declare
  v_ok boolean := p_error is null and p_response_status between 200 and 299;
  v_attempt app.webhook_attempts;
  v_delivery app.webhook_deliveries;
  v_failed int;
  v_failures int;
begin
  update app.webhook_attempts a set finished_at = now(), outcome = case when v_ok then 'succeeded' else 'failed' end,
    response_status = p_response_status, duration_ms = p_duration_ms, response_excerpt = left(p_response_excerpt, 1000),
    error = coalesce(p_error, case when not v_ok then 'HTTP ' || p_response_status end)
  where a.id = p_attempt_id and a.finished_at is null
  returning * into v_attempt;
  -- already closed as interrupted by a later run of the job: that run owns the delivery now
  if not found then
    return 'stale';
  end if;
  select * into v_delivery from app.webhook_deliveries d where d.id = v_attempt.delivery_id for update;
  if v_ok then
    update app.webhook_deliveries d set status = 'succeeded', response_status = p_response_status, error = null, delivered_at = now()
    where d.id = v_delivery.id;
    update app.webhook_endpoints e set consecutive_failures = 0 where e.id = v_delivery.endpoint_id and e.consecutive_failures <> 0;
    perform app.prune_webhook_deliveries(v_delivery.endpoint_id);
    return 'succeeded';
  end if;

  -- Interrupted attempts do not use up a retry: only attempts with an outcome count, and only since
  -- the delivery was last redelivered (a redelivery gets retries of its own).
  select count(*) into v_failed from app.webhook_attempts a
  where a.delivery_id = v_delivery.id and a.outcome = 'failed' and a.started_at >= coalesce(v_delivery.redelivered_at, '-infinity');
  update app.webhook_deliveries d set response_status = p_response_status, error = v_attempt.error where d.id = v_delivery.id;
  if app.outbox_retry_at(v_failed, p_retry_base_ms) is not null then
    perform app.queue_webhook_job(v_delivery.id, app.outbox_retry_at(v_failed, p_retry_base_ms));
    return 'retry';
  end if;

  update app.webhook_deliveries d set status = 'failed' where d.id = v_delivery.id;
  update app.webhook_endpoints e set consecutive_failures = e.consecutive_failures + 1,
    status = case when e.consecutive_failures + 1 >= 10 then 'disabled' else e.status end,
    disabled_at = case when e.consecutive_failures + 1 >= 10 then coalesce(e.disabled_at, now()) else e.disabled_at end
  where e.id = v_delivery.endpoint_id
  returning e.consecutive_failures into v_failures;
  perform app.prune_webhook_deliveries(v_delivery.endpoint_id);
  return case when v_failures >= 10 then 'disabled' else 'failed' end;
end;
$$;
comment on function app.finish_webhook_attempt(bigint, int, int, text, int, text) is
'Closes an attempt (keeping at most 1 000 characters of p_response_excerpt, the start of the receiver''s answer): 2xx and no error is a success (delivery succeeded, endpoint count reset); otherwise a retry is queued after p_retry_base_ms x 5^(n-1) '
'for failed attempt n < 4 (counted since the last redelivery), and the 4th failure fails the delivery, counting one consecutive failure (10 disable the endpoint). '
'Returns succeeded | retry | failed | disabled | stale.';

-- why: pruned where deliveries are written, per endpoint, rather than by a job of its own
create or replace function app.prune_webhook_deliveries(p_endpoint_id bigint) returns void
language sql
as $$
  delete from app.webhook_deliveries where endpoint_id = p_endpoint_id and created_at < now() - app.outbox_retention();
  delete from app.webhook_events v
  where v.created_at < now() - app.outbox_retention()
    and not exists (select from app.webhook_deliveries d where d.event_id = v.id);
$$;
