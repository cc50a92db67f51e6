// Vacuums the tables rewritten every minute and refreshes planner statistics, where no
// autovacuum does it (the embedded database). On a real server it does nothing.
import type { Task } from 'graphile-worker';

export const maintainTables: Task = async (_payload, helpers) => {
  const { rows } = await helpers.query<{ running: boolean }>('select app.autovacuum_running() as running');
  if (rows[0]?.running) return;
  const tables = await helpers.query<{ name: string }>('select t::text as name from app.churn_tables() t');
  // VACUUM cannot run inside a transaction block or a function: one plain statement each.
  for (const { name } of tables.rows) await helpers.query(`vacuum (analyze) ${name}`);
  // The rest table by table rather than one ANALYZE of the database (4 s behind the first-start
  // backfill): no statement holds the embedded database long. A hypertable's rows are its chunks'.
  const rest = await helpers.query<{ name: string }>(
    `select c.oid::regclass::text as name from pg_class c
     where c.relkind in ('r', 'm', 'p') and c.relnamespace <> 'pg_toast'::regnamespace
       and c.oid not in (select format('%I.%I', h.hypertable_schema, h.hypertable_name)::regclass from timescaledb_information.hypertables h)
     order by 1`,
  );
  for (const { name } of rest.rows) await helpers.query(`analyze ${name}`);
};
