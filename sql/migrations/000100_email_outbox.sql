-- The e-mail outbox: one message per notification, written (and its send_email job queued) in
-- the transaction that raised it, and every SMTP attempt of it. The message id is the event id,
-- sent as the Message-ID header on every attempt.

create table app.email_messages (
  -- the event id: Message-ID <id@host>, the same on every attempt
  id uuid primary key default gen_random_uuid(),
  owner text not null,
  kind text not null check (kind in ('alarm.triggered', 'deprecation.notice')),
  -- the owner's address when queued; null when there was none (status skipped)
  recipient text,
  -- what the templates render (src/mail/templates.ts)
  data jsonb not null,
  -- pending (queued or between retries) -> delivered | bounced (permanent rejection) | failed (retries used up) | skipped (no address)
  status text not null default 'pending' check (status in ('pending', 'delivered', 'bounced', 'failed', 'skipped')),
  -- attempts begun (an interrupted one included)
  attempts int not null default 0,
  smtp_code int,
  error text,
  created_at timestamptz not null default now(),
  settled_at timestamptz,
  check ((status = 'skipped') = (recipient is null))
);
create index email_messages_owner on app.email_messages (owner, created_at desc);
create index email_messages_pending on app.email_messages (created_at) where status = 'pending';
comment on table app.email_messages is
'The e-mail outbox: one message per alarm.triggered e-mail or deprecation notice, queued in the transaction that raised it; its SMTP attempts are in app.email_attempts. Service only.';

create table app.email_attempts (
  id bigint generated always as identity primary key,
  message_id uuid not null references app.email_messages (id) on delete cascade,
  started_at timestamptz not null default now(),
  -- null while in flight; an attempt whose worker died is closed as interrupted by the next run
  finished_at timestamptz,
  -- delivered: 250 accepted; deferred: temporary (connection refused, 4xx), retried; bounced: permanent (5xx)
  outcome text check (outcome in ('delivered', 'deferred', 'bounced', 'interrupted')),
  smtp_code int,
  -- the server's reply (or the connection error), never the message
  response text,
  duration_ms int
);
create index email_attempts_message on app.email_attempts (message_id, id);
comment on table app.email_attempts is 'Every SMTP attempt of an e-mail: outcome, reply code and text, duration. Service only.';
