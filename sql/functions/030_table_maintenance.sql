-- Where no autovacuum runs (the embedded PGlite has no background workers), tables rewritten
-- every minute bloat and the planner never gets statistics; the worker does that work instead.
create or replace function app.autovacuum_running() returns boolean
language sql stable
as $$
  select exists (select from pg_stat_activity where backend_type = 'autovacuum launcher');
$$;
comment on function app.autovacuum_running() is 'True when PostgreSQL''s autovacuum launcher runs on this database.';

create or replace function app.churn_tables() returns setof regclass
language sql stable
as $$
  -- Tables rewritten or counted into on every request or every minute.
  select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where (n.nspname, c.relname) in (
    ('market', 'coin_state'), ('app', 'rate_windows'), ('app', 'auth_failures'),
    ('app', 'usage_monthly'), ('app', 'usage_endpoints'), ('app', 'api_keys'),
    ('app', 'timescaledb_job_runs'))
  order by 1;
$$;
comment on function app.churn_tables() is 'The tables that the table-maintenance task vacuums when no autovacuum runs.';

-- why: the tables the maintenance task analyzes one by one (a hypertable through its chunks), so
-- that no statement holds the embedded database long
create or replace function app.maintenance_tables() returns setof oid
language sql stable
as $$
  select c.oid from pg_class c
  where c.relkind in ('r', 'm', 'p') and c.relnamespace <> 'pg_toast'::regnamespace
    and c.oid not in (select format('%I.%I', h.hypertable_schema, h.hypertable_name)::regclass from timescaledb_information.hypertables h)
  order by c.oid::regclass::text;
$$;
comment on function app.maintenance_tables() is 'The tables the table-maintenance task analyzes: every table and materialized view but the hypertables themselves (their chunks are listed).';

-- why: a chunk dropped or compressed away between the listing and its turn (retention, a
-- backfill's chunk, compression) is skipped, not a failure of the whole task
create or replace function app.analyze_table(p_table oid) returns boolean
language plpgsql volatile
as $$
declare
  v_name text := (select c.oid::regclass::text from pg_class c where c.oid = p_table);
begin
  if v_name is null then
    return false;
  end if;
  execute format('analyze %s', v_name);
  return true;
exception when undefined_table then
  -- dropped between the lookup above and ANALYZE taking its lock
  return false;
end;
$$;
comment on function app.analyze_table(oid) is 'ANALYZE of one table by oid: true when done, false when the table no longer exists (a chunk dropped or compressed away since it was listed).';
revoke execute on function app.analyze_table(oid) from public;
