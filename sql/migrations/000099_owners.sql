-- Key holders' e-mail addresses: one row per owner (the `owner` of app.api_keys), set by the
-- operator (mdapi create-key --email, mdapi set-email). In `app`: never readable by the analyst role.

create table app.owners (
  owner text primary key,
  -- a plausible address: one @, no white space; the SMTP server has the last word (a bounce)
  email text not null check (email ~ '^[^@\s]+@[^@\s]+$' and length(email) <= 254),
  -- null: not verified; the operator marks an address verified (mdapi set-email --verified)
  email_verified_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
comment on table app.owners is
'Key holders: the e-mail address of an owner of API keys (app.api_keys.owner), verified or not, for alarm e-mails and deprecation notices. Service only.';
