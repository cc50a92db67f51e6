-- Console accounts: a key owner (app.owners) becomes an account with a role; a password hash
-- (argon2id, computed by the service) and a disabled mark. Owners made by the CLI keep role null
-- (no console access) until `mdapi create-account` or a sign-up gives them one.
alter table app.owners
  add column password_hash text check (password_hash like '$argon2id$%'),
  add column role text check (role in ('user', 'admin')),
  add column disabled_at timestamptz;
-- sign-in is by e-mail address: one account per address, whatever its case
create unique index owners_account_email on app.owners (lower(email)) where role is not null;
comment on column app.owners.password_hash is 'The console password as an argon2id PHC string (@node-rs/argon2); null: no password set yet (sign in by a link).';
comment on column app.owners.role is 'The console role: user or admin; null: a key owner without a console account.';
comment on column app.owners.disabled_at is 'When the operator disabled the account: its sessions end and its API keys are refused (app.admit).';
