-- Plans live in a table so that changing a quota is an UPDATE, not a deploy.
create table app.plans (
  name text primary key,
  rank int not null unique,
  monthly_quota bigint not null check (monthly_quota > 0),
  requests_per_minute int not null check (requests_per_minute > 0),
  per_page_cap int not null check (per_page_cap > 0)
);
comment on table app.plans is 'API plans: monthly request quota, per-minute rate limit and per_page cap. A route needs a plan of at least its rank.';

insert into app.plans (name, rank, monthly_quota, requests_per_minute, per_page_cap) values
  ('free', 1, 10000, 30, 100),
  ('starter', 2, 100000, 120, 250),
  ('pro', 3, 1000000, 600, 250);

create table app.api_keys (
  id bigint generated always as identity primary key,
  key_hash bytea not null unique check (length(key_hash) = 32),
  prefix text not null,
  owner text not null,
  plan text not null references app.plans (name),
  scope text not null check (scope in ('data-api', 'mcp')),
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
comment on table app.api_keys is 'API keys, stored as SHA-256 hashes of the key; the key itself is shown once at creation and never stored. prefix identifies a key in listings.';
create index api_keys_owner on app.api_keys (owner);
