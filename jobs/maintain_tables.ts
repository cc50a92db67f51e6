// Vacuums the tables rewritten every minute and refreshes planner statistics, where no
// autovacuum does it (the embedded database). On a real server it does nothing.
import type { Task } from 'graphile-worker';
import { queryOf, type Query } from '../src/db/query.ts';

/**
 * Analyzes the tables of app.maintenance_tables() one by one rather than one ANALYZE of the
 * database (4 s behind the first-start backfill): no statement holds the embedded database long.
 * A table gone since the listing (a chunk dropped or compressed away) is skipped.
 */
export async function analyzeTables(query: Query): Promise<{ analyzed: number; skipped: number }> {
  const listed = await query('select t::int8 as oid from app.maintenance_tables() t');
  let analyzed = 0;
  for (const { oid } of listed) {
    const [row] = await query('select app.analyze_table($1::oid) as done', [oid]);
    if (row?.done === true) analyzed++;
  }
  return { analyzed, skipped: listed.length - analyzed };
}

export const maintainTables: Task = async (_payload, helpers) => {
  const { rows } = await helpers.query<{ running: boolean }>('select app.autovacuum_running() as running');
  if (rows[0]?.running) return;
  const tables = await helpers.query<{ name: string }>('select t::text as name from app.churn_tables() t');
  // VACUUM cannot run inside a transaction block or a function: one plain statement each.
  for (const { name } of tables.rows) await helpers.query(`vacuum (analyze) ${name}`);
  const { skipped } = await analyzeTables(queryOf(helpers));
  if (skipped > 0) helpers.logger.debug(`maintain_tables: ${skipped} tables gone since they were listed, skipped`);
};
