-- Single-use links of the console (e-mail verification, password reset, invites), stored hashed.
create table app.console_tokens (
  token_hash bytea primary key check (length(token_hash) = 32),
  purpose text not null check (purpose in ('verify_email', 'reset_password', 'invite')),
  -- the account the link acts on; null for an invite (the account is made when it is used)
  owner text references app.owners (owner) on delete cascade,
  email text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz,
  check ((purpose = 'invite') = (owner is null))
);
create index console_tokens_owner on app.console_tokens (owner);
comment on table app.console_tokens is
'Single-use console links: the SHA-256 of the token sent by e-mail (or printed by mdapi create-account), its purpose, account or invited address, expiry and use. Service only.';
