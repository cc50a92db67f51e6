-- Webhooks: the endpoints an owner registered, the events recorded for them (the outbox), one
-- delivery per event and endpoint, and every HTTP attempt of a delivery. All in `app`: the
-- endpoint secret must never be readable by the analyst role.

create table app.webhook_endpoints (
  id bigint generated always as identity primary key,
  owner text not null,
  url text not null check (url ~ '^https?://' and length(url) <= 2048),
  events text[] not null check (cardinality(events) > 0),
  -- shown once at creation; signs every delivery (HMAC-SHA256)
  secret text not null,
  status text not null default 'delivering' check (status in ('delivering', 'disabled')),
  consecutive_failures int not null default 0 check (consecutive_failures >= 0),
  disabled_at timestamptz,
  created_at timestamptz not null default now(),
  check ((status = 'disabled') = (disabled_at is not null))
);
create index webhook_endpoints_owner on app.webhook_endpoints (owner, id);
comment on table app.webhook_endpoints is
'Registered webhook endpoints, one owner each. status delivering -> disabled after 10 consecutive failed deliveries (a delivery = the first attempt and up to 3 retries); re-enabling sets it back and resets the count.';

create table app.webhook_events (
  -- the idempotency id receivers de-duplicate on (body `id`, header X-Service-Event-Id)
  id uuid primary key default gen_random_uuid(),
  owner text not null,
  event text not null,
  -- a test event (POST /webhooks/{id}/test) carries sample data and "test": true
  test boolean not null default false,
  data jsonb not null,
  created_at timestamptz not null default now()
);
create index webhook_events_created_at on app.webhook_events (created_at);
comment on table app.webhook_events is 'The outbox: one row per event raised for an owner, written in the transaction that raised it.';

create table app.webhook_deliveries (
  id bigint generated always as identity primary key,
  endpoint_id bigint not null references app.webhook_endpoints (id) on delete cascade,
  event_id uuid not null references app.webhook_events (id) on delete cascade,
  -- pending (queued or between retries) -> succeeded | failed | skipped (endpoint disabled meanwhile)
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed', 'skipped')),
  -- attempts that reached an outcome (a worker that died mid-attempt does not use up a retry)
  attempts int not null default 0,
  response_status int,
  error text,
  delivered_at timestamptz,
  created_at timestamptz not null default now(),
  unique (event_id, endpoint_id)
);
create index webhook_deliveries_endpoint on app.webhook_deliveries (endpoint_id, created_at desc, id desc);
comment on table app.webhook_deliveries is 'One delivery of an event to an endpoint; its HTTP attempts are in app.webhook_attempts.';

create table app.webhook_attempts (
  id bigint generated always as identity primary key,
  delivery_id bigint not null references app.webhook_deliveries (id) on delete cascade,
  started_at timestamptz not null default now(),
  -- null while in flight; an attempt whose worker died is closed as interrupted by the next run
  finished_at timestamptz,
  outcome text check (outcome in ('succeeded', 'failed', 'interrupted')),
  response_status int,
  duration_ms int,
  error text
);
create index webhook_attempts_delivery on app.webhook_attempts (delivery_id, id);
comment on table app.webhook_attempts is 'Every HTTP attempt of a delivery: response status, duration and error.';
