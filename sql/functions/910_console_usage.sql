-- The console's usage page (src/console/usage.ts): an account's Data API keys, all of them or one,
-- from the daily rollup the admission flush writes (app.usage_daily) and the quota counters. Days
-- and months are UTC. Every function takes the signed-in owner and answers nothing about a key of
-- another owner. Service only: execute revoked from public (the analyst reads nothing in app).

-- why: one spelling of "the keys this page may show": the owner's Data API keys (revoked ones
-- too: their requests were made), or the one asked for when it is the owner's
create or replace function app.console_usage_key_ids(p_owner text, p_key_id bigint default null)
returns setof bigint
language sql stable security definer
set search_path = app, pg_temp
as $$
  select k.id from app.api_keys k
  where k.owner = p_owner and k.scope = 'data-api' and (p_key_id is null or k.id = p_key_id)
$$;
comment on function app.console_usage_key_ids(text, bigint) is
'The ids of the owner''s Data API keys (revoked ones included), or only p_key_id when it is one of them; nothing for another owner''s key.';
revoke execute on function app.console_usage_key_ids(text, bigint) from public;

-- why: the quota figures must be the X-Quota-* headers' own: app.key_quota, as GET /api/v1/usage
create or replace function app.console_usage_quota(p_owner text, p_key_id bigint default null)
returns table (
  id bigint,
  name text,
  prefix text,
  plan text,
  quota_limit bigint,
  quota_used bigint,
  quota_remaining bigint,
  quota_reset timestamptz
)
language sql stable security definer
set search_path = app, pg_temp
as $$
  select k.id, k.name, k.prefix, q.plan, q.quota_limit, q.quota_used, q.quota_remaining, q.quota_reset
  from app.api_keys k
  cross join lateral app.key_quota(k.id) q
  where k.id in (select app.console_usage_key_ids(p_owner, p_key_id)) and app.key_live(k.revoked_at)
  order by k.id
$$;
comment on function app.console_usage_quota(text, bigint) is
'This month''s quota of each working Data API key of the owner (or of p_key_id, when it is one): name, prefix, plan, limit, used, remaining and reset, from app.key_quota (the figures of the X-Quota-* headers). No row for another owner''s key or a revoked one.';
revoke execute on function app.console_usage_quota(text, bigint) from public;

-- why: the CSV download is these rows, and the page's pivots read them: one place that sums the
-- selected keys' counts
create or replace function app.console_usage_rows(p_owner text, p_key_id bigint default null, p_since date default null)
returns table (day date, endpoint text, status_class text, requests bigint)
language sql stable security definer
set search_path = app, pg_temp
as $$
  with today as (select (now() at time zone 'utc')::date as day)
  select u.day, u.endpoint, u.status_class, sum(u.requests)::bigint
  from today
  join app.usage_daily u on u.day >= coalesce(p_since, least(date_trunc('month', today.day)::date, today.day - 29))
  where u.key_id in (select app.console_usage_key_ids(p_owner, p_key_id))
  group by u.day, u.endpoint, u.status_class
  order by u.day, u.endpoint, u.status_class
$$;
comment on function app.console_usage_rows(text, bigint, date) is
'Responses per UTC day, endpoint and status class to the owner''s Data API keys (summed) or to p_key_id, from p_since (default: the earlier of this month''s first day and 29 days ago, the console''s CSV download) up to today. No row for another owner''s key.';
revoke execute on function app.console_usage_rows(text, bigint, date) from public;

-- Both pivots answer the classes as one object ({"2xx": n, "429": n, …}, only the classes seen):
-- a class added later (app.usage_daily.status_class) needs no new column.
create or replace function app.console_usage_days(p_owner text, p_key_id bigint default null)
returns table (day date, requests bigint, by_class jsonb)
language sql stable security definer
set search_path = app, pg_temp
as $$
  with keys as (select app.console_usage_key_ids(p_owner, p_key_id) as id),
  today as (select (now() at time zone 'utc')::date as day),
  classes as (
    select r.day, r.status_class, sum(r.requests) as requests
    from today, app.console_usage_rows(p_owner, p_key_id, today.day - 29) r
    group by r.day, r.status_class)
  select d.day::date, coalesce(sum(c.requests), 0)::bigint,
    coalesce(jsonb_object_agg(c.status_class, c.requests) filter (where c.status_class is not null), '{}')
  from today
  cross join generate_series(today.day - 29, today.day, interval '1 day') d (day)
  left join classes c on c.day = d.day::date
  where exists (select from keys)
  group by d.day
  order by d.day
$$;
comment on function app.console_usage_days(text, bigint) is
'Responses per UTC day over the last 30 days (today included, days without any as zeros) to the owner''s Data API keys or to p_key_id: in all, and by status class as {"2xx": n, "4xx": n, "429": n, …} (classes without any left out). No row for another owner''s key.';
revoke execute on function app.console_usage_days(text, bigint) from public;

create or replace function app.console_usage_endpoints(p_owner text, p_key_id bigint default null)
returns table (endpoint text, requests bigint, by_class jsonb)
language sql stable security definer
set search_path = app, pg_temp
as $$
  with classes as (
    select r.endpoint, r.status_class, sum(r.requests) as requests
    from app.console_usage_rows(p_owner, p_key_id, date_trunc('month', now() at time zone 'utc')::date) r
    group by r.endpoint, r.status_class)
  select c.endpoint, sum(c.requests)::bigint, jsonb_object_agg(c.status_class, c.requests)
  from classes c
  group by c.endpoint
  order by sum(c.requests) desc, c.endpoint
$$;
comment on function app.console_usage_endpoints(text, bigint) is
'Responses this month (UTC) to the owner''s Data API keys or to p_key_id, per endpoint: in all, and by status class as {"2xx": n, "429": n, …}; most used first. No row for another owner''s key.';
revoke execute on function app.console_usage_endpoints(text, bigint) from public;

create or replace function app.console_usage_refusals(p_owner text, p_key_id bigint default null)
returns table (this_month bigint, last_30_days bigint)
language sql stable security definer
set search_path = app, pg_temp
as $$
  with keys as (select app.console_usage_key_ids(p_owner, p_key_id) as id),
  today as (select (now() at time zone 'utc')::date as day)
  select
    coalesce(sum(r.requests) filter (where r.day >= date_trunc('month', today.day)::date), 0)::bigint,
    coalesce(sum(r.requests) filter (where r.day >= today.day - 29), 0)::bigint
  from today
  -- the rows' default period covers both this month and the last 30 days
  left join app.console_usage_rows(p_owner, p_key_id) r on r.status_class = '429'
  where exists (select from keys)
  group by today.day
$$;
comment on function app.console_usage_refusals(text, bigint) is
'Requests of the owner''s Data API keys (or of p_key_id) refused with 429 (per-minute rate limit or monthly quota), this month (UTC) and over the last 30 days. No row for another owner''s key.';
revoke execute on function app.console_usage_refusals(text, bigint) from public;

