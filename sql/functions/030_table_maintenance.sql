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
