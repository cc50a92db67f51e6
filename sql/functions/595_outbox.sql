-- What the two outboxes share (webhook deliveries, 600-610; e-mails, 630): how a send becomes a
-- graphile-worker job, when a failed send is tried again and how long the record of a send is kept.

-- why: one place that queues an outbox send (new, test and retried sends of both outboxes)
create or replace function app.queue_outbox_job(p_task text, p_payload json, p_run_at timestamptz default null) returns void
language sql
as $$
  -- max_attempts only covers a task that throws (database unreachable): a failed send is retried
  -- by its outbox with app.outbox_retry_at, not by graphile-worker.
  select null from graphile_worker.add_job(p_task, p_payload, run_at => p_run_at, max_attempts => 5)
$$;
comment on function app.queue_outbox_job(text, json, timestamptz) is
'Queues the graphile-worker job of an outbox send (deliver_webhook, send_email) in the caller''s transaction, at p_run_at (null: now).';

-- why: one retry rule for every outbox: 1, 5 and 25 bases after the 1st, 2nd and 3rd failure
create or replace function app.outbox_retry_at(p_failures int, p_retry_base_ms int) returns timestamptz
language sql stable
as $$
  select case when p_failures between 1 and 3 then now() + p_retry_base_ms * power(5, p_failures - 1) * interval '1 millisecond' end
$$;
comment on function app.outbox_retry_at(int, int) is
'When to try a send again after its p_failures-th failed attempt: p_retry_base_ms x 5^(n-1) from now for n = 1..3; null after the 4th (the send has failed).';

create or replace function app.outbox_retention() returns interval
language sql immutable
as $$ select interval '30 days' $$;
comment on function app.outbox_retention() is
'How long the outboxes keep a send on record: webhook deliveries and their events (app.prune_webhook_deliveries; meta.retention of the delivery log) and settled e-mails (app.finish_email_attempt).';
