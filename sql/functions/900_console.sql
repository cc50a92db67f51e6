-- The developer console (src/console/): accounts, sessions and single-use links. Tokens arrive here
-- as SHA-256 hashes only; passwords as argon2id strings computed by the service. Everything is in
-- app: the analyst role reads none of it.

-- why: one spelling of "this account may use the console" for sign-in, sessions and links
create or replace function app.console_account(p_owner text)
returns table (owner text, email text, email_verified_at timestamptz, role text, has_password boolean)
language sql stable
as $$
  select o.owner, o.email, o.email_verified_at, o.role, o.password_hash is not null
  from app.owners o where o.owner = p_owner and o.role is not null and o.disabled_at is null
$$;
comment on function app.console_account(text) is 'The console account of an owner: e-mail, verification, role, whether a password is set. No row for an owner without a console role or a disabled one.';

-- why: sign-up, create-account and invites make accounts the same way
create or replace function app.console_create_account(p_email text, p_role text, p_password_hash text default null, p_owner text default null)
returns text
language plpgsql
as $$
declare
  v_owner text := coalesce(p_owner, 'acct-' || replace(gen_random_uuid()::text, '-', ''));
begin
  if exists (select from app.owners o where lower(o.email) = lower(p_email) and o.role is not null and o.owner <> v_owner) then
    raise exception 'an account with this e-mail address exists' using errcode = 'P0C01';
  end if;
  -- an account's address changes on its own page (later), never by making it again
  if exists (select from app.owners o where o.owner = v_owner and o.role is not null) then
    raise exception 'the owner % is a console account already', v_owner using errcode = 'P0C02';
  end if;
  -- an existing key owner (made by the CLI) becomes an account and keeps its keys
  insert into app.owners as o (owner, email, role, password_hash)
  values (v_owner, p_email, p_role, p_password_hash)
  on conflict (owner) do update set
    email = excluded.email,
    email_verified_at = case when o.email = excluded.email then o.email_verified_at end,
    role = excluded.role,
    password_hash = coalesce(excluded.password_hash, o.password_hash),
    updated_at = now();
  return v_owner;
end;
$$;
comment on function app.console_create_account(text, text, text, text) is
'Makes a console account (role user or admin) with the address, optionally a password hash, for a new owner or an existing one (p_owner, which keeps its keys). Returns the owner. Raises P0C01 when another account has the address, P0C02 when p_owner is an account already.';

-- why: a new link or a new password ends the account's older links: whoever holds one (an old
-- e-mail, a forwarded one) can no longer set a password with it
create or replace function app.console_end_links(p_owner text) returns void
language sql
as $$
  update app.console_tokens set used_at = now() where owner = p_owner and used_at is null
$$;
comment on function app.console_end_links(text) is 'Ends (marks used) every unused console link of an account: verification and reset links; invites (no account yet) are not touched.';

-- why: every link (verify, reset, invite) is one hashed, expiring, single-use row; only the newest
-- link of an account works, so an older reset link cannot outlive a newer one
create or replace function app.console_issue_token(p_purpose text, p_token_hash bytea, p_owner text, p_email text, p_ttl interval)
returns void
language sql
as $$
  select app.console_end_links(p_owner);
  insert into app.console_tokens (token_hash, purpose, owner, email, expires_at)
  values (p_token_hash, p_purpose, p_owner, p_email, now() + p_ttl)
$$;
comment on function app.console_issue_token(text, bytea, text, text, interval) is 'Records a single-use console link (its SHA-256) of a purpose for an account (or an invited address), valid for p_ttl; every other unused link of the account ends (app.console_end_links).';

-- why: a link is used once: the row is claimed in the statement that checks it
create or replace function app.console_use_token(p_purpose text, p_token_hash bytea)
returns table (owner text, email text)
language sql
as $$
  update app.console_tokens t set used_at = now()
  where t.token_hash = p_token_hash and t.purpose = p_purpose and t.used_at is null and t.expires_at > now()
    and (t.owner is null or exists (select from app.owners o where o.owner = t.owner and o.disabled_at is null))
  returning t.owner, t.email
$$;
comment on function app.console_use_token(text, bytea) is 'Uses a console link once: its account (null for an invite) and address; no row when it is unknown, used, expired, of another purpose or its account is disabled.';

-- why: the address the verification link went to is the one marked verified (not a later one)
create or replace function app.console_verify_email(p_token_hash bytea) returns text
language sql
as $$
  with used as (select * from app.console_use_token('verify_email', p_token_hash))
  update app.owners o set email_verified_at = now(), updated_at = now()
  from used where o.owner = used.owner and o.email = used.email
  returning o.owner
$$;
comment on function app.console_verify_email(bytea) is 'Marks the address a verification link was sent to as verified; returns the owner, or null when the link is not valid (or the address changed since).';

-- why: a new password ends every session of the account (whoever knew the old one is signed out)
create or replace function app.console_set_password(p_owner text, p_password_hash text) returns void
language sql
as $$
  update app.owners set password_hash = p_password_hash, updated_at = now() where owner = p_owner;
  update app.console_sessions set revoked_at = now() where owner = p_owner and revoked_at is null;
  select app.console_end_links(p_owner);
$$;
comment on function app.console_set_password(text, text) is 'Sets an account''s password hash (argon2id), revokes all its sessions and ends all its unused links.';

-- why: sign-in, reset and sign-up are limited like failed API keys, in the same per-minute table
-- (app.auth_failures, pruned with it): per account (console:<address>) and per client address
create or replace function app.console_attempts_left(p_email text, p_client text, p_per_account int, p_per_client int) returns boolean
language sql stable
as $$
  select not exists (
    select from app.auth_failures f
    where f.window_start = date_trunc('minute', now())
      and ((f.subject = 'console:' || lower(p_email) and f.failures >= p_per_account)
        or (f.subject = 'console-ip:' || p_client and f.failures >= p_per_client)))
$$;
comment on function app.console_attempts_left(text, text, int, int) is 'False when this minute''s failed console sign-ins (with reset requests and sign-ups) of the address or of the client reached their limit.';

create or replace function app.console_count_attempt(p_email text, p_client text) returns void
language sql
as $$
  insert into app.auth_failures as f (subject, window_start, failures)
  values ('console:' || lower(p_email), date_trunc('minute', now()), 1), ('console-ip:' || p_client, date_trunc('minute', now()), 1)
  on conflict (subject, window_start) do update set failures = f.failures + 1
$$;
comment on function app.console_count_attempt(text, text) is 'Counts a failed console sign-in (or a reset request, or a sign-up) against the address and the client for this minute.';

-- why: a typed coin field asks at every key stroke: limited per account per minute in the table of
-- the console's other per-minute limits (app.auth_failures, pruned with it), then the coin list's search
create or replace function app.console_coin_suggestions(p_owner text, p_search text, p_per_minute int) returns json
language plpgsql
as $$
declare
  v_count int;
begin
  insert into app.auth_failures as f (subject, window_start, failures)
  values ('console-search:' || p_owner, date_trunc('minute', now()), 1)
  on conflict (subject, window_start) do update set failures = f.failures + 1
  returning f.failures into v_count;
  if v_count > p_per_minute then
    return null;
  end if;
  return coalesce((
    select json_agg(json_build_object('slug', c.slug, 'name', c.name, 'symbol', c.symbol) order by o.n)
    from market.coin_search(p_search, 10) o
    join market.coins c on c.id = o.id), '[]');
end;
$$;
comment on function app.console_coin_suggestions(text, text, int) is
'The console''s coin field suggestions: at most 10 coins [{slug, name, symbol}], the first rows of GET /api/v1/coins?search=p_search (market.coin_search); null when p_owner asked more than p_per_minute times this minute (counted in app.auth_failures as console-search:<owner>).';

-- why: a sign-up whose address is never confirmed must not hold the address (nor a row) for ever
create or replace function app.console_expire_unverified(p_after interval) returns int
language sql
as $$
  with expired as (
    select o.owner, exists (select from app.api_keys k where k.owner = o.owner) as has_keys
    from app.owners o
    where o.role is not null and o.email_verified_at is null and o.created_at < now() - p_after
      -- never signed in: an address confirmed once and changed since is not a sign-up left unconfirmed
      and not exists (select from app.console_sessions s where s.owner = o.owner)
    for update of o
  ),
  -- an owner with keys (made by the CLI before) stays a key owner, without the console account
  demoted as (
    update app.owners o set role = null, password_hash = null, updated_at = now()
    from expired e where o.owner = e.owner and e.has_keys
    returning 1
  ),
  deleted as (
    delete from app.owners o using expired e where o.owner = e.owner and not e.has_keys
    returning 1
  )
  select ((select count(*) from demoted) + (select count(*) from deleted))::int
$$;
comment on function app.console_expire_unverified(interval) is 'Ends the console accounts whose address was not confirmed within p_after of their making (CONSOLE_UNVERIFIED_DAYS) and that never signed in: deleted with their links, or, for an owner with API keys, left a key owner without a role; the address is free again. Returns how many.';

-- why: the password hash is checked by the service (argon2), never by SQL
create or replace function app.console_sign_in_candidate(p_email text)
returns table (owner text, password_hash text, email_verified_at timestamptz)
language sql stable
as $$
  select o.owner, o.password_hash, o.email_verified_at from app.owners o
  where lower(o.email) = lower(p_email) and o.role is not null and o.disabled_at is null
$$;
comment on function app.console_sign_in_candidate(text) is 'The enabled account with this address (any case): owner, password hash (to check) and verification.';

create or replace function app.console_open_session(p_owner text, p_token_hash bytea, p_user_agent text, p_idle interval, p_absolute interval)
returns bigint
language sql
as $$
  insert into app.console_sessions (token_hash, owner, user_agent, idle_timeout, expires_at)
  values (p_token_hash, p_owner, left(coalesce(p_user_agent, ''), 200), p_idle, now() + p_absolute)
  returning id
$$;
comment on function app.console_open_session(text, bytea, text, interval, interval) is 'Opens a console session for the account (token stored as its SHA-256) with its idle timeout and absolute lifetime; returns its id.';

-- why: every console request: the live session, touched (idle expiry counts from here)
create or replace function app.console_session(p_token_hash bytea)
returns table (session_id bigint, owner text, email text, email_verified_at timestamptz, role text)
language sql
as $$
  update app.console_sessions s set last_seen_at = now()
  from app.owners o
  where s.token_hash = p_token_hash and s.revoked_at is null and s.expires_at > now()
    and s.last_seen_at + s.idle_timeout > now()
    and o.owner = s.owner and o.role is not null and o.disabled_at is null
  returning s.id, o.owner, o.email, o.email_verified_at, o.role
$$;
comment on function app.console_session(bytea) is 'The live session of a token hash with its account, its last_seen_at moved to now; no row when it is unknown, revoked, idle too long, past its absolute expiry, or its account is disabled.';

create or replace function app.console_sessions_of(p_owner text)
returns table (id bigint, user_agent text, created_at timestamptz, last_seen_at timestamptz, expires_at timestamptz)
language sql stable
as $$
  select s.id, s.user_agent, s.created_at, s.last_seen_at, least(s.expires_at, s.last_seen_at + s.idle_timeout)
  from app.console_sessions s
  where s.owner = p_owner and s.revoked_at is null and s.expires_at > now() and s.last_seen_at + s.idle_timeout > now()
  order by s.last_seen_at desc
$$;
comment on function app.console_sessions_of(text) is 'The live sessions of an account, most recently used first, with when each ends if unused.';

create or replace function app.console_revoke_sessions(p_owner text, p_session_id bigint default null) returns int
language sql
as $$
  with revoked as (
    update app.console_sessions set revoked_at = now()
    where owner = p_owner and revoked_at is null and (p_session_id is null or id = p_session_id)
    returning 1)
  select count(*)::int from revoked
$$;
comment on function app.console_revoke_sessions(text, bigint) is 'Revokes one session of the account (p_session_id) or all of them (null: sign out everywhere); returns how many.';

-- why: the console's key list: only the owner's own keys, with this month's count
drop function if exists app.console_keys(text, text);
create function app.console_keys(p_owner text, p_scope text)
returns table (id bigint, name text, prefix text, plan text, created_at timestamptz, last_used_at timestamptz, requests_this_month bigint, retires_at timestamptz)
language sql stable
as $$
  select k.id, k.name, k.prefix, k.plan, k.created_at, k.last_used_at,
    coalesce((select u.used from app.usage_monthly u where u.key_id = k.id and u.month = date_trunc('month', now() at time zone 'utc')::date), 0),
    k.revoked_at
  from app.api_keys k
  where k.owner = p_owner and k.scope = p_scope and app.key_live(k.revoked_at)
  order by k.id
$$;
comment on function app.console_keys(text, text) is 'The working keys of an owner in a scope: name, prefix, plan, created, last used, requests this month (UTC), and retires_at: when a rotated key stops working (null: not rotated).';

-- why: each console section (Data API, MCP) renames keys of its own scope only
drop function if exists app.console_rename_key(text, bigint, text);
create or replace function app.console_rename_key(p_owner text, p_scope text, p_key_id bigint, p_name text) returns boolean
language sql
as $$
  with renamed as (
    update app.api_keys set name = p_name
    where id = p_key_id and owner = p_owner and scope = p_scope and app.key_live(revoked_at)
    returning 1)
  select exists (select from renamed)
$$;
comment on function app.console_rename_key(text, text, bigint, text) is 'Renames a working key of the owner in a scope; false when it has no such key in that scope.';

-- why: disabling ends sessions here and refuses keys through app.owner_enabled + the owners trigger
create or replace function app.console_set_disabled(p_owner text, p_disabled boolean) returns void
language sql
as $$
  update app.owners set disabled_at = case when p_disabled then coalesce(disabled_at, now()) end, updated_at = now() where owner = p_owner;
  update app.console_sessions set revoked_at = now() where p_disabled and owner = p_owner and revoked_at is null;
$$;
comment on function app.console_set_disabled(text, boolean) is 'Disables an account (its sessions revoked, its API keys refused within a second: NOTIFY api_keys) or enables it again.';

-- why: a console link is e-mailed while its reader waits, before its token is stored, so the outbox
-- keeps the record of the delivery but never the link (a token at rest would be a password at rest)
create or replace function app.console_record_link_email(
  p_id uuid, p_owner text, p_recipient text, p_data jsonb, p_smtp_code int, p_response text, p_duration_ms int
) returns void
language sql
as $$
  with message as (
    insert into app.email_messages (id, owner, kind, recipient, data, status, attempts, smtp_code, settled_at)
    values (p_id, p_owner, 'console.link', p_recipient, p_data - 'path', 'delivered', 1, p_smtp_code, now())
    returning id
  )
  insert into app.email_attempts (message_id, finished_at, outcome, smtp_code, response, duration_ms)
  select id, now(), 'delivered', p_smtp_code, left(p_response, 1000), p_duration_ms from message
$$;
comment on function app.console_record_link_email(uuid, text, text, jsonb, int, text, int) is
'Records a console link e-mail the console delivered itself (verification, reset) as a settled outbox message with its one attempt; the link''s path is dropped from p_data, so no token is kept.';
