-- Console sign-in sessions: only the SHA-256 of the session token (the cookie) is stored.
create table app.console_sessions (
  id bigint generated always as identity primary key,
  token_hash bytea not null unique check (length(token_hash) = 32),
  owner text not null references app.owners (owner) on delete cascade,
  user_agent text not null default '' check (length(user_agent) <= 200),
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  -- idle: ends when not used this long; absolute: ends at expires_at whatever the use
  idle_timeout interval not null,
  expires_at timestamptz not null,
  revoked_at timestamptz
);
create index console_sessions_owner on app.console_sessions (owner);
comment on table app.console_sessions is
'Console sign-in sessions: the SHA-256 of the session cookie''s token (never the token), the account, a user-agent label, and the idle and absolute expiry. Service only.';
