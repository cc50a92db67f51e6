// Table maintenance where no autovacuum runs (the embedded database): the churn tables are vacuumed
// and analyzed. On a server autovacuum does it and the task leaves them alone.
import test from 'ava';
import { quickAddJob, runOnce } from 'graphile-worker';
import { taskList } from '../../jobs/index.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { onServer } from '../helpers/targets.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
});
test.after.always(() => db?.close());

test.serial('every table on the churn list exists', async (t) => {
  const tables = await db.sql<{ name: string }[]>`select t::text as name from app.churn_tables() t`;
  t.is(tables.length, 7);
});

test.serial('the task vacuums and analyzes the churn tables where no autovacuum runs, and leaves them to autovacuum where it does', async (t) => {
  const [autovacuum] = await db.sql`select app.autovacuum_running() as running`;
  t.is(autovacuum!.running, onServer, onServer ? 'a server runs autovacuum' : 'the embedded database runs no autovacuum');
  const config = db.config();
  const options = { connectionString: config.database.url, noPreparedStatements: true, taskList: taskList(config) };
  await quickAddJob(options, 'maintain_tables', {});
  await runOnce(options);
  const stats = await db.sql<{ relname: string; vacuumed: boolean; analyzed: boolean }[]>`
    select relname, last_vacuum is not null as vacuumed, last_analyze is not null as analyzed
    from pg_stat_user_tables where relid in (select app.churn_tables())`;
  t.is(stats.length, 7);
  // last_vacuum/last_analyze record manual runs only (autovacuum has columns of its own)
  for (const row of stats) {
    t.is(row.vacuumed, !onServer, `${row.relname} vacuumed by the task`);
    t.is(row.analyzed, !onServer, `${row.relname} analyzed by the task`);
  }
  const [coins] = await db.sql`select last_analyze is not null as analyzed from pg_stat_user_tables where relid = 'market.coins'::regclass`;
  t.is(coins!.analyzed, !onServer, 'the rest of the database is analyzed too');
});
