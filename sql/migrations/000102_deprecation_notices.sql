-- Deprecation notices sent by e-mail (mdapi notify-deprecation): one per owner, deprecated route
-- and sunset date, ever. The unique key is what keeps a notice from going out twice.

create table app.deprecation_notices (
  id bigint generated always as identity primary key,
  owner text not null,
  -- as app.usage_endpoints names it: 'GET /api/v1/coins/{id}'
  endpoint text not null,
  sunset date not null,
  changelog text not null,
  recipient text not null,
  message_id uuid references app.email_messages (id) on delete set null,
  created_at timestamptz not null default now(),
  unique (owner, endpoint, sunset)
);
comment on table app.deprecation_notices is
'What deprecation notice went to whom: one row per owner, deprecated endpoint and sunset date (never sent twice); the e-mail itself is app.email_messages. Service only.';
