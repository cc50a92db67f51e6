// The analyst role reads market and api and nothing in app.
import test from 'ava';
import postgres from 'postgres';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
let analyst: postgres.Sql;
test.before(async () => {
  db = await testDatabase();
  await db.sql`create table market.role_probe (id int primary key)`;
  await db.sql`insert into market.role_probe values (1)`;
  await db.sql.unsafe(`create or replace function api.role_probe() returns int language sql stable as 'select 7'`);
  await db.sql.unsafe(`grant execute on function api.role_probe() to analyst`);
  analyst = postgres(db.urlAs('analyst'), { prepare: false, max: 1, onnotice: () => {} });
});
test.after.always(async () => {
  await analyst?.end();
  await db?.close();
});

test.serial('the analyst reads tables in market and calls functions in api', async (t) => {
  const [row] = await analyst`select id from market.role_probe`;
  t.is(row!.id, 1);
  const [called] = await analyst`select api.role_probe() as value`;
  t.is(called!.value, 7);
  const [who] = await analyst`select current_user as name`;
  t.is(who!.name, 'analyst');
});

test.serial('the analyst cannot read app.api_keys, nor call app functions', async (t) => {
  const keys = await t.throwsAsync(analyst`select * from app.api_keys`);
  t.is((keys as { code?: string }).code, '42501');
  const admit = await t.throwsAsync(analyst`select * from app.admit(null, 'x', 'data-api', 'free', 'x', 1, 1, false)`);
  t.is((admit as { code?: string }).code, '42501');
});

test.serial('the analyst cannot write to market', async (t) => {
  const error = await t.throwsAsync(analyst`insert into market.role_probe values (2)`);
  t.is((error as { code?: string }).code, '42501');
});

test.serial('no table in app is readable by the analyst', async (t) => {
  const readable = await db.sql`
    select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'app' and c.relkind in ('r', 'v', 'm', 'p')
      and has_table_privilege('analyst', c.oid, 'select')`;
  t.deepEqual(readable.map((row) => row.relname), []);
  const [schema] = await db.sql`select has_schema_privilege('analyst', 'app', 'usage') as usage`;
  t.false(schema!.usage);
});
