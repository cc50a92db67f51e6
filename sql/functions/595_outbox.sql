-- The outbox cycle of every channel (webhook deliveries 600-610, e-mails 630, browser pushes 640):
-- a message and its graphile-worker job are written in the transaction that raised it; the job
-- (src/outbox.ts) claims an attempt here (committed) before it sends and records it here after,
-- so every attempt is on record even when the worker dies in between. Claiming, counting,
-- closing a dead worker's attempt, the retry time, giving up after the 4th failure and the
-- retention are written once below; a channel supplies its tables (app.outbox_channel), what one
-- send needs (its message hook) and what settling means beyond the message row (its settled hook).

-- why: one place that queues an outbox send (new, test and retried sends of every outbox)
create or replace function app.queue_outbox_job(p_task text, p_payload json, p_run_at timestamptz default null) returns void
language sql
as $$
  -- max_attempts only covers a task that throws (database unreachable): a failed send is retried
  -- by its outbox with app.outbox_retry_at, not by graphile-worker.
  select null from graphile_worker.add_job(p_task, p_payload, run_at => p_run_at, max_attempts => 5)
$$;
comment on function app.queue_outbox_job(text, json, timestamptz) is
'Queues the graphile-worker job of an outbox send (deliver_webhook, send_email, deliver_push) in the caller''s transaction, at p_run_at (null: now).';

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
'How long the outboxes keep a send on record (app.finish_outbox_attempt prunes): webhook deliveries from their creation (and events left without one; meta.retention of the delivery log), '
'e-mails and pushes from their settling.';

-- why: the one list of what differs between the outboxes' tables, so the cycle below is written once
create or replace function app.outbox_channel(p_channel text)
returns table (
  messages text, attempts text, message_column text, id_type text, queue_job text,
  -- the outcome that delivered; the one that is retried (and fails the message after the 4th);
  -- the message status each outcome settles as
  delivered text, retried text, statuses jsonb,
  -- the attempt's (and message's) reply code and text columns; the attempt's excerpt of the answer
  code_column text, detail_column text, excerpt_column text,
  -- retries are counted from this column of the message (a redelivery starts afresh); null: from the first
  retries_from text, settled_column text,
  -- retention: the messages sharing this column with the one recorded are pruned by this age column
  retention_scope text, retention_age text,
  message_hook text, settled_hook text
)
language plpgsql immutable
as $$
begin
  return query select c.messages, c.attempts, c.message_column, c.id_type, c.queue_job, c.delivered, c.retried, c.statuses, c.code_column, c.detail_column,
    c.excerpt_column, c.retries_from, c.settled_column, c.retention_scope, c.retention_age, c.message_hook, c.settled_hook
  from (values
    ('webhook', 'app.webhook_deliveries', 'app.webhook_attempts', 'delivery_id', 'bigint', 'app.queue_webhook_job',
      'succeeded', 'failed', '{"succeeded": "succeeded", "failed": "failed"}'::jsonb,
      'response_status', 'error', 'response_excerpt', 'redelivered_at', null, 'endpoint_id', 'created_at',
      'app.webhook_outbox_message', 'app.webhook_outbox_settled'),
    ('email', 'app.email_messages', 'app.email_attempts', 'message_id', 'uuid', 'app.queue_email_job',
      'delivered', 'deferred', '{"delivered": "delivered", "bounced": "bounced", "deferred": "failed"}',
      'smtp_code', 'response', null, null, 'settled_at', 'owner', 'settled_at',
      'app.email_outbox_message', null),
    ('push', 'app.push_messages', 'app.push_attempts', 'message_id', 'uuid', 'app.queue_push_job',
      'delivered', 'failed', '{"delivered": "delivered", "gone": "gone", "refused": "failed", "failed": "failed"}',
      'response_status', 'error', null, null, 'settled_at', 'owner', 'settled_at',
      'app.push_outbox_message', 'app.push_outbox_settled')
  ) as c (channel, messages, attempts, message_column, id_type, queue_job, delivered, retried, statuses, code_column, detail_column,
    excerpt_column, retries_from, settled_column, retention_scope, retention_age, message_hook, settled_hook)
  where c.channel = p_channel;
  if not found then
    raise exception 'Unknown outbox channel %.', p_channel;
  end if;
end;
$$;
comment on function app.outbox_channel(text) is
'The tables, columns, outcomes and hooks of one outbox channel (webhook | email | push) that app.begin_outbox_attempt and app.finish_outbox_attempt work through; an unknown channel raises.';

create or replace function app.begin_outbox_attempt(p_channel text, p_message_id text)
returns table (attempt_id bigint, attempt int, message jsonb)
language plpgsql
as $$
declare
  c record;
  v_status text;
  v_settle_as text;
  v_error text;
begin
  select * into c from app.outbox_channel(p_channel);
  execute format('select status from %s where id = $1::%s for update', c.messages, c.id_type) into v_status using p_message_id;
  -- already settled (a duplicate job) or gone: nothing to send
  if v_status is distinct from 'pending' then
    return;
  end if;
  -- what the channel sends, or why it can no longer be sent (webhook endpoint disabled, browser unsubscribed)
  execute format('select * from %s($1::%s)', c.message_hook, c.id_type) into message, v_settle_as, v_error using p_message_id;
  if v_settle_as is not null then
    execute format('update %s set error = $2 where id = $1::%s', c.messages, c.id_type) using p_message_id, v_error;
    perform app.settle_outbox_message(p_channel, p_message_id, v_settle_as);
    return;
  end if;
  -- An attempt still open here belongs to a worker that died mid-send (its job lock was released
  -- and the job came back): the receiver may or may not have it; send it again, with the same id.
  execute format('update %s set finished_at = now(), outcome = ''interrupted'', %I = $2 where %I = $1::%s and finished_at is null',
    c.attempts, c.detail_column, c.message_column, c.id_type)
  using p_message_id, 'the worker stopped before recording the outcome; sent again';
  execute format('update %s set attempts = attempts + 1 where id = $1::%s returning attempts', c.messages, c.id_type)
  into attempt using p_message_id;
  execute format('insert into %s (%I) values ($1::%s) returning id', c.attempts, c.message_column, c.id_type)
  into attempt_id using p_message_id;
  return next;
end;
$$;
comment on function app.begin_outbox_attempt(text, text) is
'Claims the next attempt of a pending outbox message of p_channel (webhook: a delivery id; email, push: a message id): opens it (the worker commits before sending) and returns '
'its id, its number and what to send (the channel''s message hook; for a webhook it holds the endpoint secret). No row when there is nothing to send: settled or gone, '
'or settled here because it can no longer be sent (webhook endpoint disabled: skipped; browser unsubscribed: gone). Closes an attempt a dead worker left open as interrupted.';

-- why: the one way a message leaves pending, before sending (app.begin_outbox_attempt) or after (app.finish_outbox_attempt)
create or replace function app.settle_outbox_message(p_channel text, p_message_id text, p_status text) returns text
language plpgsql
as $$
declare
  c record;
  v_result text;
begin
  select * into c from app.outbox_channel(p_channel);
  execute format('update %s set status = $2%s where id = $1::%s',
    c.messages, case when c.settled_column is not null then format(', %I = now()', c.settled_column) else '' end, c.id_type)
  using p_message_id, p_status;
  if c.settled_hook is not null then
    execute format('select %s($1::%s, $2)', c.settled_hook, c.id_type) into v_result using p_message_id, p_status;
  end if;
  return coalesce(v_result, p_status);
end;
$$;
comment on function app.settle_outbox_message(text, text, text) is
'Settles a message of p_channel as p_status and runs what settling means to the channel (its settled hook); returns p_status, or the hook''s word (webhook: disabled).';

create or replace function app.finish_outbox_attempt(
  p_channel text, p_attempt_id bigint, p_outcome text, p_code int, p_detail text, p_duration_ms int,
  p_retry_base_ms int default 60000, p_response_excerpt text default null
) returns text
language plpgsql
as $$
declare
  c record;
  v_message_id text;
  v_retries_from timestamptz;
  v_failed int;
begin
  select * into c from app.outbox_channel(p_channel);
  if p_outcome is null or not c.statuses ? p_outcome then
    raise exception 'Unknown % outcome %.', p_channel, p_outcome;
  end if;
  execute format('update %s set finished_at = now(), outcome = $2, %I = $3, %I = left($4, 1000), duration_ms = $5%s
      where id = $1 and finished_at is null returning %I::text',
    c.attempts, c.code_column, c.detail_column,
    case when c.excerpt_column is not null then format(', %I = left($6, 1000)', c.excerpt_column) else '' end, c.message_column)
  into v_message_id using p_attempt_id, p_outcome, p_code, p_detail, p_duration_ms, p_response_excerpt;
  -- already closed as interrupted by a later run of the job: that run owns the message now
  if v_message_id is null then
    return 'stale';
  end if;
  execute format('select %s from %s where id = $1::%s for update',
    coalesce(quote_ident(c.retries_from), 'null::timestamptz'), c.messages, c.id_type)
  into v_retries_from using v_message_id;
  -- pruned where messages are recorded, per endpoint or owner, rather than by a job of its own
  execute format('delete from %1$s where %2$I = (select %2$I from %1$s where id = $1::%4$s) and id <> $1::%4$s and %3$I < now() - app.outbox_retention()',
    c.messages, c.retention_scope, c.retention_age, c.id_type)
  using v_message_id;
  execute format('update %s set %I = $2, error = $3 where id = $1::%s', c.messages, c.code_column, c.id_type)
  using v_message_id, p_code, case when p_outcome <> c.delivered then left(p_detail, 1000) end;

  if p_outcome = c.retried then
    -- Interrupted attempts do not use up a retry: only failed ones count (since a redelivery, if any).
    execute format('select count(*) from %s where %I = $1::%s and outcome = $2 and started_at >= coalesce($3, ''-infinity'')',
      c.attempts, c.message_column, c.id_type)
    into v_failed using v_message_id, c.retried, v_retries_from;
    if app.outbox_retry_at(v_failed, p_retry_base_ms) is not null then
      execute format('select %s($1::%s, $2)', c.queue_job, c.id_type) using v_message_id, app.outbox_retry_at(v_failed, p_retry_base_ms);
      return 'retry';
    end if;
  end if;
  return app.settle_outbox_message(p_channel, v_message_id, c.statuses ->> p_outcome);
end;
$$;
comment on function app.finish_outbox_attempt(text, bigint, text, int, text, int, int, text) is
'Records how an attempt of p_channel ended (p_outcome as the channel''s sender sorted it; the reply code, the error or reply text and, for webhooks, the start of the answer, '
'each kept to 1 000 characters) and moves its message on: the channel''s retried outcome (webhook, push: failed; email: deferred) queues a retry after '
'p_retry_base_ms x 5^(n-1) for failed attempt n < 4 (app.outbox_retry_at) and the 4th fails the message; any other outcome settles it (app.outbox_channel: statuses). '
'Drops the endpoint''s or owner''s messages older than app.outbox_retention(). Returns the status settled, retry, disabled (a webhook endpoint''s 10th failed delivery) or stale.';
