// Migrations: recorded once, re-runs apply nothing, concurrent migrators do not collide.
import { readdirSync } from 'node:fs';
import test from 'ava';
import { migrate } from '../../src/db/migrate.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
});
test.after.always(() => db?.close());

const migrationFiles = readdirSync(new URL('../../sql/migrations/', import.meta.url)).filter((name) => name.endsWith('.sql')).sort();

test.serial('every migration file is recorded once, in order', async (t) => {
  const rows = await db.sql<{ name: string }[]>`select name from app.migrations order by name`;
  t.deepEqual(rows.map((row) => row.name), migrationFiles);
});

test.serial('a second run applies no migration and re-applies every function file', async (t) => {
  const before = await db.sql`select name, applied_at from app.migrations order by name`;
  const result = await migrate(db.sql);
  t.deepEqual(result.applied, []);
  t.true(result.functions.length > 0);
  const after = await db.sql`select name, applied_at from app.migrations order by name`;
  t.deepEqual([...after], [...before]);
});

test.serial('concurrent migrators both succeed and record nothing twice', async (t) => {
  const results = await Promise.all([migrate(db.sql), migrate(db.sql), migrate(db.sql)]);
  t.deepEqual(results.map((result) => result.applied), [[], [], []]);
  const [row] = await db.sql`select count(*)::int as n, count(distinct name)::int as d from app.migrations`;
  t.is(row!.n, row!.d);
});

test.serial('a re-run rewrites no catalog row of the tables and chunks, so it cannot collide with a worker creating chunks', async (t) => {
  const rows = () => db.sql<{ rel: string; xmin: string }[]>`
    select c.oid::regclass::text as rel, c.xmin::text as xmin from pg_class c
    where c.relnamespace in ('market'::regnamespace, '_timescaledb_internal'::regnamespace) and c.relkind in ('r', 'p')
    order by 1`;
  const before = await rows();
  t.true(before.some((row) => row.rel === 'market.coin_bars_1m'));
  await migrate(db.sql);
  t.deepEqual(await rows(), before);
  // and the analyst still reads every table and runs every api function
  const [missing] = await db.sql<{ tables: number; functions: number }[]>`
    select (select count(*)::int from pg_class c where c.relnamespace in ('market'::regnamespace, 'api'::regnamespace)
              and c.relkind in ('r', 'p', 'v', 'm') and not has_table_privilege('analyst', c.oid, 'select')) as tables,
           (select count(*)::int from pg_proc p where p.pronamespace = 'api'::regnamespace and p.prokind = 'f'
              and not has_function_privilege('analyst', p.oid, 'execute')) as functions`;
  t.deepEqual({ ...missing }, { tables: 0, functions: 0 });
});

test.serial('the schemas of the design exist with the timescaledb extension', async (t) => {
  const schemas = await db.sql<{ nspname: string }[]>`select nspname from pg_namespace where nspname in ('market', 'api', 'app') order by 1`;
  t.deepEqual(schemas.map((row) => row.nspname), ['api', 'app', 'market']);
  const [extension] = await db.sql`select extversion from pg_extension where extname = 'timescaledb'`;
  t.truthy(extension);
});
