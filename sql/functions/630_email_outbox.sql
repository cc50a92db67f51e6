-- The e-mail outbox (sql/migrations/000100_email_outbox.sql): what queues an e-mail and what the
-- e-mail channel adds to the outbox cycle (sql/functions/595_outbox.sql) around each SMTP send of
-- jobs/send_email.ts. Rules (the sender, src/mail/smtp.ts, sorts the reply): 250 accepted ->
-- delivered; a permanent rejection (5xx) -> bounced, never retried; a temporary failure
-- (connection refused, time-out, 4xx) -> deferred and retried after base, 5 x base and 25 x base
-- (base 60 s), the 4th deferred attempt fails the message.

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

-- why: the e-mail channel's message hook (app.outbox_channel); an e-mail is always sendable once queued
create or replace function app.email_outbox_message(p_message_id uuid)
returns table (message jsonb, settle_as text, error text)
language sql stable
as $$
  select jsonb_build_object('id', m.id, 'recipient', m.recipient, 'kind', m.kind, 'data', m.data, 'created_at', m.created_at), null::text, null::text
  from app.email_messages m where m.id = p_message_id
$$;
comment on function app.email_outbox_message(uuid) is
'What one SMTP attempt of an e-mail sends (id: the Message-ID''s local part, recipient, kind, data, created_at: the Date header, the same on every attempt). Called by app.begin_outbox_attempt.';
