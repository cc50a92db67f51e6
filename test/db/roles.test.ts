// The analyst role reads market and api and nothing in app.
import test from 'ava';
import postgres from 'postgres';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { embeddedOnly } from '../helpers/targets.ts';

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

test.serial('the analyst cannot read key holders\' e-mail addresses, the e-mail outbox or the deprecation notices', async (t) => {
  await db.sql`insert into app.owners (owner, email) values ('role-probe', 'probe@example.com') on conflict do nothing`;
  for (const table of ['app.owners', 'app.email_messages', 'app.email_attempts', 'app.deprecation_notices']) {
    const error = await t.throwsAsync(analyst.unsafe(`select * from ${table}`).simple(), undefined, table);
    t.is((error as { code?: string }).code, '42501', table);
  }
  const queue = await t.throwsAsync(analyst`select app.queue_email('role-probe', 'alarm.triggered', '{}')`);
  t.is((queue as { code?: string }).code, '42501');
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

// On the embedded database the analyst shares the superuser's session: every way out of its role
// is refused by the multiplexer (and the server-side defences stand behind that).
const embedded = embeddedOnly(test, 'only the embedded database shares one session between the analyst and the service');
const ESCAPES = [
  'reset role',
  'RESET   ROLE',
  'reset/**/role',
  'set role postgres',
  "set role to 'postgres'",
  'begin; set local role postgres',
  'set session role postgres',
  '/* a */ SET -- b\n "role" = postgres',
  'set session authorization postgres',
  'SET SESSION AUTHORIZATION DEFAULT',
  'reset session authorization',
  'set local session authorization postgres',
  'discard all',
  "select set_config('role', 'postgres', false)",
  "select pg_catalog.set_config('session_authorization', 'postgres', false)",
  `select "pg_catalog"."set_config"('ro' || 'le', 'postgres', false)`,
  "select SET_CONFIG/**/('role', 'postgres', false)",
  `select U&"\\0073et_config"('role', 'postgres', false)`,
  "update pg_settings set setting = 'postgres' where name = 'session_authorization'",
  "do $$ begin execute 'reset ' || 'role'; end $$",
  "DO LANGUAGE plpgsql 'begin execute ''reset role''; end'",
  "create function pg_temp.escape() returns void language plpgsql as $f$ begin execute 'reset role'; end $f$",
  "select query_to_xml('select set_config(''role'', ''postgres'', false)', false, false, '')",
  "select ts_stat('select set_config(''role'', ''postgres'', false)::tsvector')",
  'set standard_conforming_strings = off',
  // the service's prepared statements share the session: they must stay out of reach
  "prepare mine as select 1",
  'execute c1_x1',
  'deallocate all',
  "explain (costs off) execute c1_x1",
];

for (const [index, statement] of ESCAPES.entries()) {
  embedded.serial(`escape ${index + 1} is refused and leaves the analyst an analyst: ${statement.replace(/\s+/g, ' ')}`, async (t) => {
    const escaping = postgres(db.urlAs('analyst'), { prepare: false, max: 1, onnotice: () => {} });
    const error = await t.throwsAsync(escaping.unsafe(statement).simple());
    t.is((error as { code?: string }).code, '42501');
    await escaping.end().catch(() => {});
    const after = postgres(db.urlAs('analyst'), { prepare: false, max: 1, onnotice: () => {} });
    const secrets = await t.throwsAsync(after`select secret from app.webhook_endpoints`);
    t.is((secrets as { code?: string }).code, '42501');
    const keys = await t.throwsAsync(after.unsafe('select count(*) from app.api_keys').simple());
    t.is((keys as { code?: string }).code, '42501');
    const [who] = await after`select session_user as session, current_user as current`;
    t.deepEqual({ ...who }, { session: 'analyst', current: 'analyst' });
    const [row] = await after`select id from market.role_probe where id = ${1}`;
    t.is(row!.id, 1);
    await after.end();
    const [service] = await db.sql`select current_user as name, count(*)::int as keys from app.api_keys group by 1`.then(
      (rows) => (rows.length ? rows : db.sql`select current_user as name`),
    );
    t.is(service!.name, 'postgres');
  });
}

embedded.serial('server side, RESET ROLE and SET ROLE cannot leave a session authorization', async (t) => {
  const error = await t.throwsAsync(
    db.sql.begin(async (tx) => {
      await tx.unsafe('set local session authorization analyst');
      await tx.unsafe('reset role');
      await tx.unsafe('select count(*) from app.api_keys');
    }),
  );
  t.is((error as { code?: string }).code, '42501');
  const denied = await t.throwsAsync(
    db.sql.begin(async (tx) => {
      await tx.unsafe('set local session authorization analyst');
      await tx.unsafe('set role postgres');
    }),
  );
  t.is((denied as { code?: string }).code, '42501');
  const [who] = await db.sql`select current_user as name`;
  t.is(who!.name, 'postgres');
});

test.serial('harmless statements that mention the words still run for the analyst', async (t) => {
  const [row] = await analyst.unsafe(`select 'reset role; set_config' as text, 1 as "do"`).simple();
  t.is(row!.text, 'reset role; set_config');
  const [setting] = await analyst.unsafe("set timezone = 'UTC'; show timezone").simple();
  t.truthy(setting);
});
