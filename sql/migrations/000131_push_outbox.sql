-- The push outbox, like the e-mail outbox (000100): one message per subscription and notification,
-- written (and its deliver_push job queued) in the transaction that raised it, and every attempt
-- at the push service. app.evaluate_alarms gains a result column (pushes queued): its old
-- signature is dropped here and sql/functions/625_alarm_evaluation.sql creates the new one.

create table app.push_messages (
  id uuid primary key default gen_random_uuid(),
  -- null once the subscription is gone (removed, or 404/410 from the push service)
  subscription_id bigint references app.push_subscriptions (id) on delete set null,
  owner text not null,
  kind text not null check (kind in ('alarm.triggered', 'push.test')),
  -- what the notification shows (encrypted for the browser at each attempt, never stored so)
  data jsonb not null,
  -- pending (queued or between retries) -> delivered | gone (subscription expired or removed) | failed (refused, or retries used up)
  status text not null default 'pending' check (status in ('pending', 'delivered', 'gone', 'failed')),
  -- attempts begun (an interrupted one included)
  attempts int not null default 0,
  response_status int,
  error text,
  created_at timestamptz not null default now(),
  settled_at timestamptz
);
create index push_messages_owner on app.push_messages (owner, created_at desc);
create index push_messages_subscription on app.push_messages (subscription_id);
comment on table app.push_messages is
'The push outbox: one message per subscribed browser per alarm.triggered (or console test), queued in the transaction that raised it; its attempts are in app.push_attempts. Service only.';

create table app.push_attempts (
  id bigint generated always as identity primary key,
  message_id uuid not null references app.push_messages (id) on delete cascade,
  started_at timestamptz not null default now(),
  -- null while in flight; an attempt whose worker died is closed as interrupted by the next run
  finished_at timestamptz,
  -- delivered: 2xx; gone: 404/410 (the subscription is removed); failed: 5xx, 429, time-out or
  -- connection error (retried); refused: another 4xx (not retried)
  outcome text check (outcome in ('delivered', 'gone', 'failed', 'refused', 'interrupted')),
  response_status int,
  -- the push service's status line or the connection error, never the payload
  error text,
  duration_ms int
);
create index push_attempts_message on app.push_attempts (message_id, id);
comment on table app.push_attempts is 'Every attempt at a push service: outcome, HTTP status, error, duration. Service only.';

drop function if exists app.evaluate_alarms();
