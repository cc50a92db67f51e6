-- Admission of one API request in one round trip: authentication, failed-attempt limits,
-- plan gate, per-minute rate limit and monthly quota. Counting happens here so that every
-- API process shares the same counters.
-- why: a request may need several plans at once (an endpoint's and a longer window's); which is
-- the highest is the plans table's to say, not the code's
create or replace function app.highest_plan(p_plans text[]) returns text
language sql stable security definer
set search_path = app, pg_temp
as $$ select p.name from app.plans p where p.name = any (p_plans) order by p.rank desc limit 1 $$;
comment on function app.highest_plan(text[]) is 'The plan of highest rank (app.plans.rank) among p_plans; null when none is a plan.';
revoke execute on function app.highest_plan(text[]) from public;

create or replace function app.admit(
  p_key_hash bytea,
  p_client text,
  p_scope text,
  p_required_plan text,
  p_endpoint text,
  p_key_failure_limit int,
  p_client_failure_limit int,
  p_consume boolean default true,
  p_per_page int default null
) returns table (
  outcome text,
  key_id bigint,
  owner text,
  plan text,
  quota_limit bigint,
  quota_used bigint,
  quota_reset timestamptz,
  rate_limit int,
  rate_remaining int,
  rate_reset int,
  retry_after int,
  per_page_cap int
)
language plpgsql volatile security definer
set search_path = app, pg_temp
as $$
declare
  v_window timestamptz := date_trunc('minute', now());
  v_window_left int := greatest(1, ceil(extract(epoch from v_window + interval '1 minute' - now()))::int);
  v_month date := date_trunc('month', now() at time zone 'utc')::date;
  v_key_subject text := case when p_key_hash is null then null else 'key:' || encode(p_key_hash, 'hex') end;
  v_client_subject text := 'ip:' || p_client;
  v_key app.api_keys;
  v_plan app.plans;
  v_required app.plans;
  v_requests int;
  v_used bigint;
begin
  quota_reset := (v_month + interval '1 month') at time zone 'utc';

  select k.* into v_key from app.api_keys k
  where k.key_hash = p_key_hash and app.key_live(k.revoked_at) and k.scope = p_scope and app.owner_enabled(k.owner);
  if not found then
    -- Only failed attempts are limited: a valid key is looked up first and never refused for other
    -- keys' failures from its address (behind a proxy without TRUST_PROXY, every client shares one).
    -- Attempts over a limit are not counted again: a client retrying a bad key cannot push its
    -- address over the address limit by itself.
    if exists (
      select from app.auth_failures f
      where f.window_start = v_window
        and ((f.subject = v_key_subject and f.failures >= p_key_failure_limit)
          or (f.subject = v_client_subject and f.failures >= p_client_failure_limit))
    ) then
      outcome := 'auth_rate_limited';
      retry_after := v_window_left;
      return next;
      return;
    end if;
    insert into app.auth_failures as f (subject, window_start, failures)
    select s, v_window, 1 from unnest(array[v_key_subject, v_client_subject]) s where s is not null
    on conflict (subject, window_start) do update set failures = f.failures + 1;
    -- a live key of another scope is still a failed attempt here; the outcome names it so that a
    -- surface may tell its client which kind of key it needs (the MCP server does)
    outcome := case
      when exists (
        select from app.api_keys k
        where k.key_hash = p_key_hash and k.scope <> p_scope and app.key_live(k.revoked_at) and app.owner_enabled(k.owner)
      ) then 'wrong_scope'
      else 'unauthorized'
    end;
    return next;
    return;
  end if;

  select p.* into v_plan from app.plans p where p.name = v_key.plan;
  -- ranks compare within the key's scope: a plan of the other scope is not the key's to meet (as in
  -- src/http/admission-batch.ts, which knows its scope's ranks only)
  select p.* into v_required from app.plans p where p.name = p_required_plan and p.scope = v_key.scope;
  key_id := v_key.id;
  owner := v_key.owner;
  plan := v_plan.name;
  quota_limit := v_plan.monthly_quota;
  rate_limit := v_plan.requests_per_minute;
  per_page_cap := v_plan.per_page_cap;
  select coalesce((select u.used from app.usage_monthly u where u.key_id = v_key.id and u.month = v_month), 0)
    into quota_used;

  if v_plan.rank < v_required.rank then
    outcome := 'plan_required';
    return next;
    return;
  end if;

  -- per_page is capped by plan, and a request over the cap is refused, never clamped.
  if p_per_page > v_plan.per_page_cap then
    outcome := 'per_page_exceeded';
    return next;
    return;
  end if;

  -- A request refused for bad input is authenticated and gated but costs nothing.
  if not p_consume then
    outcome := 'ok';
    return next;
    return;
  end if;

  insert into app.rate_windows as w (key_id, window_start, requests) values (v_key.id, v_window, 1)
  on conflict on constraint rate_windows_pkey do update set requests = w.requests + 1
  returning w.requests into v_requests;
  rate_remaining := greatest(0, v_plan.requests_per_minute - v_requests);
  rate_reset := v_window_left;
  if v_requests > v_plan.requests_per_minute then
    outcome := 'rate_limited';
    retry_after := v_window_left;
    return next;
    return;
  end if;

  insert into app.usage_monthly as u (key_id, month, used) values (v_key.id, v_month, 1)
  on conflict on constraint usage_monthly_pkey do update set used = u.used + 1
    where u.used < v_plan.monthly_quota
  returning u.used into v_used;
  if v_used is null then
    outcome := 'quota_exceeded';
    quota_used := v_plan.monthly_quota;
    retry_after := greatest(1, ceil(extract(epoch from quota_reset - now()))::int);
    return next;
    return;
  end if;
  quota_used := v_used;

  insert into app.usage_endpoints as e (key_id, month, endpoint, requests, last_called_at) values (v_key.id, v_month, p_endpoint, 1, now())
  on conflict on constraint usage_endpoints_pkey do update set requests = e.requests + 1, last_called_at = now();
  update app.api_keys k set last_used_at = now()
  where k.id = v_key.id and (k.last_used_at is null or k.last_used_at < now() - interval '1 minute');

  outcome := 'ok';
  return next;
end;
$$;
comment on function app.admit(bytea, text, text, text, text, int, int, boolean, int) is
  'Admits one API request: outcome is ok, unauthorized (no such live key), wrong_scope (a live key of another scope: refused like unauthorized), auth_rate_limited, plan_required, per_page_exceeded, rate_limited or quota_exceeded, with the quota and rate-limit figures for the response headers.';
revoke execute on function app.admit(bytea, text, text, text, text, int, int, boolean, int) from public;

-- The status of a response is known once it is written: counted per key, UTC day, endpoint and
-- class (app.usage_daily) by the admission flush, or here, once per response, with
-- ADMISSION_FLUSH_MS=0 (src/http/admission.ts, recordResponses).
create or replace function app.record_response(p_key_id bigint, p_endpoint text, p_status_class text) returns void
language sql volatile security definer
set search_path = app, pg_temp
as $$
  insert into app.usage_daily as d (key_id, day, endpoint, status_class, requests)
  select k.id, (now() at time zone 'utc')::date, p_endpoint, p_status_class, 1
  from app.api_keys k where k.id = p_key_id
  on conflict on constraint usage_daily_pkey do update set requests = d.requests + 1;
$$;
comment on function app.record_response(bigint, text, text) is
  'Counts one response of a key in app.usage_daily (today, UTC; endpoint as declared; status class 2xx, 3xx, 4xx, 429 or 5xx); nothing for a key deleted meanwhile.';
revoke execute on function app.record_response(bigint, text, text) from public;

-- Counters older than their window are dead weight; the worker prunes them hourly.
create or replace function app.prune_counters() returns void
language sql volatile
set search_path = app, pg_temp
as $$
  delete from app.rate_windows where window_start < now() - interval '1 hour';
  delete from app.auth_failures where window_start < now() - interval '1 hour';
  delete from app.usage_daily where day < (now() at time zone 'utc')::date - 400;
$$;
comment on function app.prune_counters() is 'Deletes rate-limit and failed-authentication windows older than an hour, and daily response counts (app.usage_daily) older than 400 days.';
revoke execute on function app.prune_counters() from public;

-- A key's quota this month (UTC): the figures of the X-Quota-* headers as the counters hold them,
-- for GET /api/v1/usage and the console's usage page alike.
create or replace function app.key_quota(p_key_id bigint)
returns table (
  plan text,
  quota_limit bigint,
  quota_used bigint,
  quota_remaining bigint,
  period_start date,
  quota_reset timestamptz,
  burst_per_minute int,
  per_page_cap int
)
language sql stable security definer
set search_path = app, pg_temp
as $$
  with period as (select date_trunc('month', now() at time zone 'utc')::date as month)
  select p.name, p.monthly_quota, coalesce(u.used, 0), greatest(0, p.monthly_quota - coalesce(u.used, 0)),
    period.month, (period.month + interval '1 month') at time zone 'utc', p.requests_per_minute, p.per_page_cap
  from app.api_keys k
  cross join period
  join app.plans p on p.name = k.plan
  left join app.usage_monthly u on u.key_id = k.id and u.month = period.month
  where k.id = p_key_id;
$$;
comment on function app.key_quota(bigint) is
  'A key''s quota this month (UTC): plan, limit, used, remaining (never below 0), the month''s first day, the reset (the next month''s start, as X-Quota-Reset), the per-minute limit and the per_page cap. No row for an unknown key.';
revoke execute on function app.key_quota(bigint) from public;

-- GET /api/v1/usage: the key's plan and this month's counts, per endpoint and per key of its owner.
create or replace function app.usage_report(p_key_id bigint) returns json
language sql stable
set search_path = app, pg_temp
as $$
  with k as (select * from app.api_keys where id = p_key_id)
  select json_build_object(
    'plan', q.plan,
    'limit', q.quota_limit,
    'used', q.quota_used,
    'remaining', q.quota_remaining,
    'period_start', to_char(q.period_start, 'YYYY-MM-DD'),
    'period_end', to_char(q.quota_reset at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'),
    'burst_per_minute', q.burst_per_minute,
    'per_page_cap', q.per_page_cap,
    'endpoints', coalesce((
      select json_agg(json_build_object('endpoint', e.endpoint, 'requests', e.requests) order by e.requests desc, e.endpoint)
      from app.usage_endpoints e where e.key_id = k.id and e.month = q.period_start), '[]'::json),
    'tokens', coalesce((
      select json_agg(json_build_object(
        'id', o.id, 'name', o.prefix, 'kind', o.scope,
        'requests', coalesce((select m.used from app.usage_monthly m where m.key_id = o.id and m.month = q.period_start), 0),
        -- the API's one spelling of an instant (market.iso_time, defined after this file)
        'last_used_at', to_char(o.last_used_at at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'), 'revoked', not app.key_live(o.revoked_at)) order by o.id)
      from app.api_keys o where o.owner = k.owner), '[]'::json))
  from k
  cross join app.key_quota(k.id) q;
$$;
comment on function app.usage_report(bigint) is 'Usage of one key this month (UTC): plan, limit, used, remaining, period (app.key_quota), per-endpoint counts and the owner''s keys.';
revoke execute on function app.usage_report(bigint) from public;
