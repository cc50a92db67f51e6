-- The push outbox (sql/migrations/000131): what queues a browser push and what the push channel
-- adds to the outbox cycle (sql/functions/595_outbox.sql) around each request of
-- jobs/deliver_push.ts to the browser's push service. A message and its deliver_push job are
-- written in the transaction that raised it (app.evaluate_alarms for alarm.triggered). Rules (the
-- sender, src/push/send.ts, sorts the answer): 2xx -> delivered (the subscription's
-- last_success_at); 404/410 -> gone, the subscription removed; 5xx, 429, time-out or connection
-- error -> failed and retried after base, 5 x base and 25 x base, the 4th failure fails the
-- message; another 4xx -> refused, failed at once. The subscriptions themselves: 950_push.sql.

-- why: one place that turns messages into deliver_push jobs (new messages and retries)
create or replace function app.queue_push_job(p_message_id uuid, p_run_at timestamptz default null) returns void
language sql
as $$ select app.queue_outbox_job('deliver_push', json_build_object('message_id', p_message_id), p_run_at) $$;
comment on function app.queue_push_job(uuid, timestamptz) is 'Queues the deliver_push job of a push message in the caller''s transaction, at p_run_at (null: now).';

create or replace function app.queue_push(p_subscription_id bigint, p_kind text, p_data jsonb) returns uuid
language plpgsql
as $$
declare
  v_id uuid;
begin
  insert into app.push_messages (subscription_id, owner, kind, data)
  select s.id, s.owner, p_kind, coalesce(p_data, '{}') from app.push_subscriptions s where s.id = p_subscription_id
  returning id into v_id;
  if v_id is not null then
    perform app.queue_push_job(v_id);
  end if;
  return v_id;
end;
$$;
comment on function app.queue_push(bigint, text, jsonb) is
'Records one push of kind p_kind (alarm.triggered | push.test) to a subscribed browser and queues its deliver_push job, in the caller''s transaction; returns the message id, null when the subscription does not exist.';

-- why: the alarm.triggered push carries what the webhook event and the e-mail do (app.alarm_triggered_event)
create or replace function app.queue_alarm_pushes(p_alarm app.alarms) returns int
language sql
as $$
  select count(app.queue_push(s.id, 'alarm.triggered', app.alarm_triggered_event(p_alarm)))::int
  from app.push_subscriptions s where s.owner = p_alarm.owner
$$;
comment on function app.queue_alarm_pushes(app.alarms) is
'Queues one alarm.triggered push (data: app.alarm_triggered_event) per browser the alarm''s owner subscribed, in the caller''s transaction; returns how many. Called by app.evaluate_alarms.';

create or replace function app.queue_test_push(p_owner text, p_subscription_id bigint) returns uuid
language sql
as $$
  select app.queue_push(s.id, 'push.test', jsonb_build_object('sent_at', market.iso_time(now())))
  from app.push_subscriptions s where s.id = p_subscription_id and s.owner = p_owner
$$;
comment on function app.queue_test_push(text, bigint) is 'Queues a test notification to one browser of p_owner (the console''s "Send a test notification"); null when p_owner has no such subscription.';

-- why: the push channel's message hook (app.outbox_channel)
create or replace function app.push_outbox_message(p_message_id uuid)
returns table (message jsonb, settle_as text, error text)
language sql stable
as $$
  select
    case when s.id is not null then jsonb_build_object('endpoint', s.endpoint, 'p256dh', s.p256dh, 'auth', s.auth, 'kind', m.kind, 'data', m.data) end,
    case when s.id is null then 'gone' end,
    case when s.id is null then 'the browser was unsubscribed before delivery' end
  from app.push_messages m
  left join app.push_subscriptions s on s.id = m.subscription_id
  where m.id = p_message_id
$$;
comment on function app.push_outbox_message(uuid) is
'What one request of a push sends (the browser''s endpoint and keys, kind, data), or, when the browser was unsubscribed meanwhile, that it settles as gone. Called by app.begin_outbox_attempt.';

-- why: the push channel's settled hook: a browser the push service no longer knows is not pushed to again
create or replace function app.push_outbox_settled(p_message_id uuid, p_status text) returns text
language sql
as $$
  update app.push_subscriptions s set last_success_at = now()
  from app.push_messages m where m.id = p_message_id and s.id = m.subscription_id and p_status = 'delivered';
  -- unsubscribed or expired at the push service (404/410)
  delete from app.push_subscriptions s
  using app.push_messages m where m.id = p_message_id and s.id = m.subscription_id and p_status = 'gone';
  select null::text;
$$;
comment on function app.push_outbox_settled(uuid, text) is
'What settling a push means to its browser: delivered stamps the subscription''s last_success_at; gone removes the subscription (its other pending pushes settle as gone). '
'Called by app.settle_outbox_message.';
