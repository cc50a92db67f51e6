-- Admission counted in the API process (src/http/admission-batch.ts): a key's plan is looked up once
-- and cached until a NOTIFY on channel api_keys says it changed; the counters are added up in memory
-- and written to the shared counter rows in one statement per flush, which reads back the counts
-- of every process so that several processes still share one quota.

-- What a process caches for a valid key: the key, its plan's limits, the ranks of its scope's plans
-- (for the plan gate) and the shared counts of the given minute and month as of now.
create or replace function app.admission_key(p_key_hash bytea, p_scope text, p_window timestamptz, p_month date)
returns table (
  key_id bigint,
  owner text,
  plan text,
  ranks json,
  quota_limit bigint,
  rate_limit int,
  per_page_cap int,
  quota_used bigint,
  window_requests int
)
language sql stable security definer
set search_path = app, pg_temp
as $$
  select k.id, k.owner, k.plan,
    (select json_object_agg(r.name, r.rank) from app.plans r where r.scope = k.scope),
    p.monthly_quota, p.requests_per_minute, p.per_page_cap,
    coalesce((select u.used from app.usage_monthly u where u.key_id = k.id and u.month = p_month), 0),
    coalesce((select w.requests from app.rate_windows w where w.key_id = k.id and w.window_start = p_window), 0)
  from app.api_keys k
  join app.plans p on p.name = k.plan
  where k.key_hash = p_key_hash and app.key_live(k.revoked_at) and k.scope = p_scope and app.owner_enabled(k.owner);
$$;
comment on function app.admission_key(bytea, text, timestamptz, date) is
  'A valid (unrevoked) key of the scope: id, owner, plan, the scope''s plan ranks, the plan''s limits and the shared counts of the given minute window and month. No row for an unknown or revoked key.';
revoke execute on function app.admission_key(bytea, text, timestamptz, date) from public;

-- One flush of a process: adds its counts to the shared rows, in key order (two processes flushing
-- at once lock rows in the same order), and returns the shared counts of every key it reads, with
-- the key's validity and limits.
-- p_counts: {"rates": [{key_id, window_start, requests}], "usage": [{key_id, month, used}],
-- "endpoints": [{key_id, month, endpoint, requests}], "reads": [{key_id, window_start, month}],
-- "responses": [{key_id, day, endpoint, status_class, requests}]} (responses: the answers written
-- since the last flush, by status class, for app.usage_daily; absent from an older process's flush).
create or replace function app.admission_flush(p_counts jsonb)
returns table (
  key_id bigint,
  window_start timestamptz,
  month date,
  quota_used bigint,
  window_requests int,
  key_valid boolean,
  plan text,
  quota_limit bigint,
  rate_limit int,
  per_page_cap int
)
language plpgsql volatile security definer
set search_path = app, pg_temp
as $$
#variable_conflict use_column
begin
  insert into app.rate_windows as w (key_id, window_start, requests)
  select r.key_id, r.window_start, r.requests
  from jsonb_to_recordset(p_counts -> 'rates') as r (key_id bigint, window_start timestamptz, requests int)
  order by r.key_id, r.window_start
  on conflict on constraint rate_windows_pkey do update set requests = w.requests + excluded.requests;

  -- used never passes the quota, as with app.admit: what several processes admitted beyond it
  -- (the documented bound) is served but not recorded as quota.
  insert into app.usage_monthly as u (key_id, month, used)
  select r.key_id, r.month, least(r.used, p.monthly_quota)
  from jsonb_to_recordset(p_counts -> 'usage') as r (key_id bigint, month date, used bigint)
  join app.api_keys k on k.id = r.key_id
  join app.plans p on p.name = k.plan
  order by r.key_id, r.month
  on conflict on constraint usage_monthly_pkey do update
    set used = least(u.used + excluded.used, (select p.monthly_quota from app.api_keys k join app.plans p on p.name = k.plan where k.id = u.key_id));

  -- last_called_at: the flush's time, at most ADMISSION_FLUSH_MS after the call
  insert into app.usage_endpoints as e (key_id, month, endpoint, requests, last_called_at)
  select r.key_id, r.month, r.endpoint, r.requests, now()
  from jsonb_to_recordset(p_counts -> 'endpoints') as r (key_id bigint, month date, endpoint text, requests bigint)
  order by r.key_id, r.month, r.endpoint
  on conflict on constraint usage_endpoints_pkey do update set requests = e.requests + excluded.requests, last_called_at = excluded.last_called_at;

  -- a key deleted since its requests were answered takes its counts with it
  insert into app.usage_daily as d (key_id, day, endpoint, status_class, requests)
  select r.key_id, r.day, r.endpoint, r.status_class, r.requests
  from jsonb_to_recordset(coalesce(p_counts -> 'responses', '[]')) as r (key_id bigint, day date, endpoint text, status_class text, requests bigint)
  where exists (select from app.api_keys k where k.id = r.key_id)
  order by r.key_id, r.day, r.endpoint, r.status_class
  on conflict on constraint usage_daily_pkey do update set requests = d.requests + excluded.requests;

  update app.api_keys k set last_used_at = now()
  where k.id in (select (r ->> 'key_id')::bigint from jsonb_array_elements(p_counts -> 'usage') r)
    and (k.last_used_at is null or k.last_used_at < now() - interval '1 minute');

  -- With the counts, whether the key is still valid and its plan's limits: a process that missed a
  -- NOTIFY (e.g. LISTEN through a transaction pooler) still drops a revoked key at its next flush.
  return query
  select r.key_id, r.window_start, r.month,
    coalesce((select u.used from app.usage_monthly u where u.key_id = r.key_id and u.month = r.month), 0),
    coalesce((select w.requests from app.rate_windows w where w.key_id = r.key_id and w.window_start = r.window_start), 0),
    k.id is not null and app.key_live(k.revoked_at) and app.owner_enabled(k.owner),
    k.plan, p.monthly_quota, p.requests_per_minute, p.per_page_cap
  from jsonb_to_recordset(p_counts -> 'reads') as r (key_id bigint, window_start timestamptz, month date)
  left join app.api_keys k on k.id = r.key_id
  left join app.plans p on p.name = k.plan;
end;
$$;
comment on function app.admission_flush(jsonb) is
  'Adds one API process''s batched counts (rate windows, monthly usage, per-endpoint usage, responses per day and status class) to the shared counter rows and returns, for the keys it reads, the shared minute and month counts, whether the key is still valid, and its plan and limits.';
revoke execute on function app.admission_flush(jsonb) from public;

-- A key revoked, re-planned, re-scoped or deleted, or any plan changed, is announced to every API
-- process (channel api_keys: the key's hash in hex, or * for "drop every cached key").
create or replace function app.announce_key_change() returns trigger
language plpgsql
set search_path = app, pg_temp
as $$
begin
  if tg_table_name = 'plans' then
    perform pg_notify('api_keys', '*');
  else
    perform pg_notify('api_keys', encode(old.key_hash, 'hex'));
  end if;
  return null;
end;
$$;
comment on function app.announce_key_change() is 'Trigger: NOTIFY api_keys with the changed key''s hash (hex), or * when a plan changed, so API processes drop what they cached.';

-- An account disabled or enabled again: every key of it is announced, as a revocation is (the
-- same channel; admission reads app.owner_enabled).
create or replace function app.announce_owner_change() returns trigger
language plpgsql
set search_path = app, pg_temp
as $$
begin
  perform pg_notify('api_keys', encode(k.key_hash, 'hex')) from app.api_keys k where k.owner = new.owner;
  return null;
end;
$$;
comment on function app.announce_owner_change() is 'Trigger: NOTIFY api_keys with the hash of every key of an account whose disabled_at changed.';

create or replace trigger owners_announce_change
  after update of disabled_at on app.owners
  for each row when (old.disabled_at is distinct from new.disabled_at) execute function app.announce_owner_change();
comment on trigger owners_announce_change on app.owners is 'NOTIFY api_keys for each key of an account disabled or enabled again.';

-- Only the columns admission reads: last_used_at, written by every flush, announces nothing.
create or replace trigger api_keys_announce_change
  after update of key_hash, plan, scope, revoked_at or delete on app.api_keys
  for each row execute function app.announce_key_change();
create or replace trigger plans_announce_change
  after update or delete on app.plans
  for each statement execute function app.announce_key_change();
comment on trigger api_keys_announce_change on app.api_keys is 'NOTIFY api_keys with the key''s hash when its hash, plan, scope or revocation changes, or it is deleted.';
comment on trigger plans_announce_change on app.plans is 'NOTIFY api_keys * when a plan changes: API processes drop every cached key.';
