// Vacuums the tables rewritten every minute and refreshes planner statistics, where no
// autovacuum does it (the embedded database). On a real server it does nothing.
import type { Task } from 'graphile-worker';

export const maintainTables: Task = async (_payload, helpers) => {
  const { rows } = await helpers.query<{ running: boolean }>('select app.autovacuum_running() as running');
  if (rows[0]?.running) return;
  const tables = await helpers.query<{ name: string }>('select t::text as name from app.churn_tables() t');
  // VACUUM cannot run inside a transaction block or a function: one plain statement each.
  for (const { name } of tables.rows) await helpers.query(`vacuum (analyze) ${name}`);
  await helpers.query('analyze');
};
