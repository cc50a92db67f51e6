-- The webhook outbox: an event and its deliveries are written, and their graphile-worker jobs
-- queued, in the transaction that raised the event, so a rollback loses all of them and a commit
-- keeps all of them. The HTTP POST itself is jobs/deliver_webhook.ts; its bookkeeping is the outbox
-- cycle (sql/functions/595_outbox.sql) with the webhook's rules in 610_webhook_delivery.sql.

-- why: one place that turns delivery rows into deliver_webhook jobs (new events, test events, retries)
create or replace function app.queue_webhook_job(p_delivery_id bigint, p_run_at timestamptz default null) returns void
language sql
as $$ select app.queue_outbox_job('deliver_webhook', json_build_object('delivery_id', p_delivery_id), p_run_at) $$;

create or replace function app.enqueue_webhook_event(p_owner text, p_event text, p_data jsonb) returns int
language plpgsql
as $$
declare
  v_event_id uuid;
  v_queued int;
begin
  if p_event is distinct from 'alarm.triggered' then
    raise exception 'Unknown webhook event %.', p_event using errcode = 'MD422';
  end if;
  -- Only endpoints subscribed now and not disabled: a disabled endpoint gets nothing until re-enabled.
  if not exists (
    select from app.webhook_endpoints
    where owner = p_owner and status = 'delivering' and p_event = any (events)
  ) then
    return 0;
  end if;
  insert into app.webhook_events (owner, event, data) values (p_owner, p_event, coalesce(p_data, '{}'))
  returning id into v_event_id;
  with queued as (
    insert into app.webhook_deliveries (endpoint_id, event_id)
    select e.id, v_event_id
    from app.webhook_endpoints e
    where e.owner = p_owner and e.status = 'delivering' and p_event = any (e.events)
    returning id
  )
  select count(*) into v_queued from queued q, lateral app.queue_webhook_job(q.id);
  return v_queued;
end;
$$;
comment on function app.enqueue_webhook_event(text, text, jsonb) is
'Records one event of p_owner (its uuid is the idempotency id receivers see) and, for each of the owner''s delivering endpoints subscribed to p_event, '
'a delivery and its deliver_webhook job, all in the caller''s transaction. Returns the number of deliveries queued (0: no such endpoint, nothing recorded).';
