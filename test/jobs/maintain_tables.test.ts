// Table maintenance where no autovacuum runs (the embedded database): the churn tables are vacuumed
// and analyzed. On a server autovacuum does it and the task leaves them alone. A table that goes
// while the task walks the list (a chunk dropped or compressed away) is skipped.
import test from 'ava';
import { quickAddJob, runOnce } from 'graphile-worker';
import { taskList } from '../../jobs/index.ts';
import { analyzeTables } from '../../jobs/maintain_tables.ts';
import type { Query } from '../../src/db/query.ts';
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

test.serial('a chunk dropped between the listing and its turn is skipped, not a failure of the task', async (t) => {
  await db.sql`create table maintenance_probe (time timestamptz not null, value int)`;
  await db.sql`select create_hypertable('maintenance_probe', 'time', chunk_time_interval => interval '1 day')`;
  await db.sql`insert into maintenance_probe select g, 1 from generate_series(now() - interval '3 days', now(), interval '1 hour') g`;
  const chunks = (await db.sql<{ name: string }[]>`select c::text as name from show_chunks('maintenance_probe') c order by 1`).map((row) => row.name);
  t.true(chunks.length >= 3);
  const [doomed, ...kept] = chunks;
  let dropped = false;
  // the chunk goes (as retention or compression takes it) once the walk has listed it
  const query: Query = async <R extends object>(text: string, values?: unknown[]) => {
    if (!dropped && text.includes('app.analyze_table')) {
      dropped = true;
      await db.query(`drop table ${doomed}`);
    }
    return db.query<R>(text, values);
  };
  const result = await analyzeTables(query);
  t.true(dropped, 'the chunk was dropped during the walk');
  t.is(result.skipped, 1, 'the dropped chunk, and nothing else');
  t.true(result.analyzed > 10);
  const analyzed = await db.sql<{ name: string }[]>`
    select relid::regclass::text as name from pg_stat_user_tables where last_analyze is not null and relid::regclass::text = any (${kept}::text[])`;
  t.deepEqual(analyzed.map((row) => row.name).sort(), kept, 'the chunks still there were analyzed');
  t.false(await db.sql`select app.analyze_table(0::oid) as done`.then(([row]) => row!.done as boolean), 'a table that is gone: false');
  await db.sql`drop table maintenance_probe`;
});
