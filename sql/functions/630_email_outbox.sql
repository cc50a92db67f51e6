-- The e-mail outbox (sql/migrations/000100_email_outbox.sql) and the bookkeeping around each SMTP
-- send of jobs/send_email.ts, mirroring the webhook outbox (600, 610): a message and its send_email
-- job are written in the transaction that raised it; an attempt is opened (committed) before the
-- send and closed after it, so every attempt is on record even when the worker dies in between.
-- Rules: 250 accepted -> delivered; a permanent rejection (5xx) -> bounced, never retried; a
-- temporary failure (connection refused, time-out, 4xx) -> deferred and retried after base,
-- 5 x base and 25 x base (base 60 s), the 4th deferred attempt fails the message.

-- why: one place that turns messages into send_email jobs (new messages and retries)
create or replace function app.queue_email_job(p_message_id uuid, p_run_at timestamptz default null) returns void
language sql
as $$ select app.queue_outbox_job('send_email', json_build_object('message_id', p_message_id), p_run_at) $$;

create or replace function app.queue_email(p_owner text, p_kind text, p_data jsonb) returns uuid
language plpgsql
as $$
declare
  v_recipient text := (select o.email from app.owners o where o.owner = p_owner);
  v_id uuid;
begin
  -- An owner without an address (removed since the alarm was created) is on record as skipped.
  insert into app.email_messages (owner, kind, recipient, data, status, error, settled_at)
  values (p_owner, p_kind, v_recipient, coalesce(p_data, '{}'),
    case when v_recipient is null then 'skipped' else 'pending' end,
    case when v_recipient is null then 'no e-mail address on record for the owner' end,
    case when v_recipient is null then now() end)
  returning id into v_id;
  if v_recipient is not null then
    perform app.queue_email_job(v_id);
  end if;
  return v_id;
end;
$$;
comment on function app.queue_email(text, text, jsonb) is
'Records one e-mail of kind p_kind (alarm.triggered | deprecation.notice) to p_owner''s address (app.owners) and queues its send_email job, in the caller''s transaction. '
'Returns the message id (the Message-ID''s local part). An owner without an address: recorded as skipped, nothing queued.';

-- why: the alarm.triggered e-mail carries what the webhook event does (app.alarm_triggered_event)
create or replace function app.queue_alarm_email(p_alarm app.alarms) returns int
language sql
as $$
  select 1 from app.queue_email(p_alarm.owner, 'alarm.triggered', app.alarm_triggered_event(p_alarm))
$$;
comment on function app.queue_alarm_email(app.alarms) is
'Queues the alarm.triggered e-mail of a triggered alarm (data: app.alarm_triggered_event) in the caller''s transaction; returns 1. Called by app.evaluate_alarms.';

create or replace function app.begin_email_attempt(p_message_id uuid)
returns table (attempt_id bigint, attempt int, recipient text, kind text, data jsonb, created_at timestamptz)
language plpgsql
as $$
#variable_conflict use_column
declare
  v_message app.email_messages;
begin
  select * into v_message from app.email_messages m where m.id = p_message_id for update;
  -- already settled (a duplicate job) or gone: nothing to send
  if not found or v_message.status <> 'pending' then
    return;
  end if;
  -- An attempt still open here belongs to a worker that died mid-send (its job lock expired and
  -- the job came back): the server may or may not have accepted it; send it again with the same
  -- Message-ID, by which mail stores de-duplicate.
  update app.email_attempts a set finished_at = now(), outcome = 'interrupted',
    response = 'the worker stopped before recording the outcome; sent again'
  where a.message_id = p_message_id and a.finished_at is null;
  update app.email_messages m set attempts = m.attempts + 1 where m.id = p_message_id
  returning m.attempts into attempt;
  insert into app.email_attempts (message_id) values (p_message_id) returning id into attempt_id;
  recipient := v_message.recipient;
  kind := v_message.kind;
  data := v_message.data;
  created_at := v_message.created_at;
  return next;
end;
$$;
comment on function app.begin_email_attempt(uuid) is
'Opens the next SMTP attempt of a pending e-mail and returns what to send (recipient, kind, data, created_at); no row when there is nothing to send. '
'Closes an attempt a dead worker left open as interrupted.';

create or replace function app.finish_email_attempt(
  p_attempt_id bigint, p_outcome text, p_smtp_code int, p_response text, p_duration_ms int, p_retry_base_ms int default 60000
) returns text
language plpgsql
as $$
declare
  v_attempt app.email_attempts;
  v_deferred int;
  v_owner text;
begin
  if p_outcome not in ('delivered', 'deferred', 'bounced') then
    raise exception 'Unknown e-mail outcome %.', p_outcome;
  end if;
  update app.email_attempts a set finished_at = now(), outcome = p_outcome, smtp_code = p_smtp_code,
    response = left(p_response, 1000), duration_ms = p_duration_ms
  where a.id = p_attempt_id and a.finished_at is null
  returning * into v_attempt;
  -- already closed as interrupted by a later run of the job: that run owns the message now
  if not found then
    return 'stale';
  end if;
  select m.owner into v_owner from app.email_messages m where m.id = v_attempt.message_id for update;
  -- pruned where e-mails are settled, per owner, rather than by a job of its own
  delete from app.email_messages m where m.owner = v_owner and m.settled_at < now() - app.outbox_retention();
  if p_outcome in ('delivered', 'bounced') then
    update app.email_messages m set status = p_outcome, smtp_code = p_smtp_code,
      error = case when p_outcome = 'bounced' then v_attempt.response end, settled_at = now()
    where m.id = v_attempt.message_id;
    return p_outcome;
  end if;

  -- Interrupted attempts do not use up a retry: only deferred ones count.
  select count(*) into v_deferred from app.email_attempts a where a.message_id = v_attempt.message_id and a.outcome = 'deferred';
  update app.email_messages m set smtp_code = p_smtp_code, error = v_attempt.response where m.id = v_attempt.message_id;
  if app.outbox_retry_at(v_deferred, p_retry_base_ms) is not null then
    perform app.queue_email_job(v_attempt.message_id, app.outbox_retry_at(v_deferred, p_retry_base_ms));
    return 'retry';
  end if;
  update app.email_messages m set status = 'failed', settled_at = now() where m.id = v_attempt.message_id;
  return 'failed';
end;
$$;
comment on function app.finish_email_attempt(bigint, text, int, text, int, int) is
'Closes an SMTP attempt: delivered (250) or bounced (permanent 5xx) settle the message; deferred (temporary) queues a retry after p_retry_base_ms x 5^(n-1) '
'for deferred attempt n < 4 (app.outbox_retry_at), and the 4th fails the message; drops the owner''s e-mails settled longer ago than app.outbox_retention(). '
'Returns delivered | bounced | retry | failed | stale.';
