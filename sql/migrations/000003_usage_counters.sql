-- Counters live in the database so that several API processes share one quota and one limit.
create table app.usage_monthly (
  key_id bigint not null references app.api_keys (id) on delete cascade,
  month date not null,
  used bigint not null default 0,
  primary key (key_id, month)
);
comment on table app.usage_monthly is 'Requests counted against the monthly quota, per key and calendar month (UTC).';

create table app.usage_endpoints (
  key_id bigint not null references app.api_keys (id) on delete cascade,
  month date not null,
  endpoint text not null,
  requests bigint not null default 0,
  primary key (key_id, month, endpoint)
);
comment on table app.usage_endpoints is 'Per-endpoint breakdown of usage_monthly, for GET /api/v1/usage.';

create table app.rate_windows (
  key_id bigint not null references app.api_keys (id) on delete cascade,
  window_start timestamptz not null,
  requests int not null default 0,
  primary key (key_id, window_start)
);
comment on table app.rate_windows is 'Per-minute request counts (fixed one-minute windows) for the rate limit.';

create table app.auth_failures (
  subject text not null,
  window_start timestamptz not null,
  failures int not null default 0,
  primary key (subject, window_start)
);
comment on table app.auth_failures is 'Failed authentication attempts per minute, per presented key hash (key:<hex>) and per client address (ip:<addr>).';
