-- The operator's console pages (src/console/operator.ts, accounts with role admin): accounts found
-- by a part of their address, their keys' plans, disabling, roles, and this month's top accounts.
-- In app and not executable by PUBLIC: the analyst role calls none of them.

-- why: the accounts page searches by any part of an address; strpos, not LIKE, so % and _ typed
-- by the operator are plain characters; bounded (at most 100 rows a page)
create or replace function app.console_admin_accounts(p_query text, p_owner text, p_limit int, p_offset int)
returns table (owner text, email text, role text, email_verified_at timestamptz, created_at timestamptz, disabled_at timestamptz, keys bigint, requests_this_month bigint)
language sql stable
set search_path = app, pg_temp
as $$
  select o.owner, o.email, o.role, o.email_verified_at, o.created_at, o.disabled_at,
    (select count(*) from app.api_keys k where k.owner = o.owner and app.key_live(k.revoked_at)),
    coalesce((select sum(u.used) from app.usage_monthly u join app.api_keys k on k.id = u.key_id
              where k.owner = o.owner and u.month = date_trunc('month', now() at time zone 'utc')::date), 0)::bigint
  from app.owners o
  where o.role is not null
    and (p_owner is null or o.owner = p_owner)
    and strpos(lower(o.email), lower(coalesce(p_query, ''))) > 0
  order by lower(o.email), o.owner
  limit least(greatest(coalesce(p_limit, 1), 1), 100) offset greatest(coalesce(p_offset, 0), 0)
$$;
comment on function app.console_admin_accounts(text, text, int, int) is
'Console accounts whose address contains p_query (any case; empty: all), or the one of p_owner, by address: role, verification, created, disabled, working keys and requests this month (UTC, all its keys). At most 100 rows from p_offset.';
revoke execute on function app.console_admin_accounts(text, text, int, int) from public;

-- why: the operator sets any plan of the key's own scope (app.plans.scope), beyond self-service
create or replace function app.console_admin_set_plan(p_owner text, p_key_id bigint, p_plan text) returns text
language sql
set search_path = app, pg_temp
as $$
  with target as (
    select k.id, k.scope from app.api_keys k where k.id = p_key_id and k.owner = p_owner and app.key_live(k.revoked_at)),
  changed as (
    update app.api_keys k set plan = p_plan
    from target t join app.plans p on p.name = p_plan and p.scope = t.scope
    where k.id = t.id
    returning 1)
  select case when exists (select from changed) then 'changed' when exists (select from target) then 'wrong_plan' else 'no_key' end
$$;
comment on function app.console_admin_set_plan(text, bigint, text) is
'Sets the plan of a working key of the owner (the API sees it within a second: NOTIFY api_keys). Returns changed, wrong_plan (no plan of that name in the key''s scope) or no_key.';
revoke execute on function app.console_admin_set_plan(text, bigint, text) from public;

-- why: disabling goes through app.console_set_disabled (sessions ended, keys refused); never the
-- operator's own account, which would sign it out and could leave no admin
create or replace function app.console_admin_set_disabled(p_by text, p_owner text, p_disabled boolean) returns text
language plpgsql
set search_path = app, pg_temp
as $$
begin
  if p_disabled and p_by = p_owner then
    return 'self';
  end if;
  if not exists (select from app.owners o where o.owner = p_owner and o.role is not null) then
    return 'no_account';
  end if;
  perform app.console_set_disabled(p_owner, p_disabled);
  return 'changed';
end;
$$;
comment on function app.console_admin_set_disabled(text, text, boolean) is
'The admin p_by disables (or enables) the account p_owner through app.console_set_disabled. Returns changed, self (an admin does not disable its own account) or no_account.';
revoke execute on function app.console_admin_set_disabled(text, text, boolean) from public;

-- why: the service always keeps one enabled admin; the admins are locked first, so two admins
-- removing each other's role at once cannot both pass
create or replace function app.console_admin_set_role(p_owner text, p_role text) returns text
language plpgsql
set search_path = app, pg_temp
as $$
declare
  v_role text;
begin
  perform from app.owners o where o.role = 'admin' order by o.owner for update;
  select o.role into v_role from app.owners o where o.owner = p_owner and o.role is not null for update;
  if not found then
    return 'no_account';
  end if;
  if v_role = 'admin' and p_role <> 'admin'
    and not exists (select from app.owners o where o.role = 'admin' and o.disabled_at is null and o.owner <> p_owner) then
    return 'last_admin';
  end if;
  update app.owners o set role = p_role, updated_at = now() where o.owner = p_owner and o.role is distinct from p_role;
  return 'changed';
end;
$$;
comment on function app.console_admin_set_role(text, text) is
'Sets an account''s console role (user or admin; its sessions see it on their next request). Returns changed, last_admin (it is the last enabled admin: refused) or no_account.';
revoke execute on function app.console_admin_set_role(text, text) from public;

-- why: the usage page: who used the service most this month, from the same monthly counters as
-- the keys page and GET /api/v1/usage (app.usage_monthly)
create or replace function app.console_admin_top_accounts(p_limit int)
returns table (owner text, email text, role text, disabled_at timestamptz, data_api bigint, mcp bigint, requests bigint, all_requests bigint)
language sql stable
set search_path = app, pg_temp
as $$
  select k.owner, o.email, o.role, o.disabled_at,
    coalesce(sum(u.used) filter (where k.scope = 'data-api'), 0)::bigint,
    coalesce(sum(u.used) filter (where k.scope = 'mcp'), 0)::bigint,
    sum(u.used)::bigint,
    (sum(sum(u.used)) over ())::bigint
  from app.usage_monthly u
  join app.api_keys k on k.id = u.key_id
  left join app.owners o on o.owner = k.owner
  where u.month = date_trunc('month', now() at time zone 'utc')::date
  group by k.owner, o.email, o.role, o.disabled_at
  having sum(u.used) > 0
  order by sum(u.used) desc, k.owner
  limit least(greatest(coalesce(p_limit, 1), 1), 100)
$$;
comment on function app.console_admin_top_accounts(int) is
'The key owners (console accounts or owners made by the CLI) with the most requests this month (UTC), at most p_limit (100): Data API and MCP requests, their sum, and all owners'' requests this month.';
revoke execute on function app.console_admin_top_accounts(int) from public;

-- why: the operator's view of which operations the service spends its time on, from the same daily
-- rollup the account's usage page reads
create or replace function app.console_admin_top_endpoints(p_limit int)
returns table (endpoint text, requests bigint, ok bigint, client_errors bigint, refused bigint, server_errors bigint, accounts bigint)
language sql stable
set search_path = app, pg_temp
as $$
  select u.endpoint, sum(u.requests)::bigint,
    coalesce(sum(u.requests) filter (where u.status_class in ('2xx', '3xx')), 0)::bigint,
    coalesce(sum(u.requests) filter (where u.status_class = '4xx'), 0)::bigint,
    coalesce(sum(u.requests) filter (where u.status_class = '429'), 0)::bigint,
    coalesce(sum(u.requests) filter (where u.status_class = '5xx'), 0)::bigint,
    count(distinct k.owner)::bigint
  from app.usage_daily u
  join app.api_keys k on k.id = u.key_id
  where u.day >= date_trunc('month', now() at time zone 'utc')::date
  group by u.endpoint
  order by sum(u.requests) desc, u.endpoint
  limit least(greatest(coalesce(p_limit, 1), 1), 100)
$$;
comment on function app.console_admin_top_endpoints(int) is
'The endpoints (route templates, MCP tools, unrouted) with the most keyed responses this month (UTC), at most p_limit (100), from app.usage_daily: '
'all responses, 2xx/3xx, 4xx other than 429, 429 refusals, 5xx, and how many owners called each.';
revoke execute on function app.console_admin_top_endpoints(int) from public;
