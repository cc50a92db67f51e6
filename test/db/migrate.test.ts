// Migrations: recorded once, re-runs apply nothing, concurrent migrators do not collide; numbered in
// the order they were committed, and a file numbered below one already applied is refused.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { LATE_MIGRATIONS, REMOVED_MIGRATIONS, RENAMED_MIGRATIONS, checkMigrationOrder, migrate } from '../../src/db/migrate.ts';
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

test.serial('a pending migration numbered below the newest applied is refused by name, and nothing is applied', async (t) => {
  // a copy of sql/ with probe migrations around the real ones, all applied in the test database
  const sqlDir = mkdtempSync(join(tmpdir(), 'mdapi-migrations-'));
  const probes = ['000900_high_probe.sql', '000850_low_probe.sql', '000950_later_probe.sql'];
  t.teardown(async () => {
    rmSync(sqlDir, { recursive: true, force: true });
    await db.sql`delete from app.migrations where name in ${db.sql(probes)}`;
    await db.sql.unsafe('drop table if exists app.high_probe, app.low_probe, app.later_probe');
  });
  cpSync(new URL('../../sql/', import.meta.url).pathname, sqlDir, { recursive: true });
  const probe = (name: string) => writeFileSync(join(sqlDir, 'migrations', name), `create table app.${name.slice(7, -4)} (id int);`);
  probe('000900_high_probe.sql');
  t.deepEqual((await migrate(db.sql, undefined, { sqlDir })).applied, ['000900_high_probe.sql']);

  // a lower-numbered file committed after the higher one was applied, and a higher one after it
  probe('000850_low_probe.sql');
  probe('000950_later_probe.sql');
  const before = await db.sql`select name from app.migrations order by name`;
  const error = await t.throwsAsync(migrate(db.sql, undefined, { sqlDir }));
  t.regex(error!.message, /000850_low_probe\.sql is not numbered above 000900_high_probe\.sql/);
  t.deepEqual([...(await db.sql`select name from app.migrations order by name`)], [...before]);
  const [tables] = await db.sql<{ low: string | null; later: string | null }[]>`
    select to_regclass('app.low_probe')::text as low, to_regclass('app.later_probe')::text as later`;
  t.deepEqual({ ...tables }, { low: null, later: null });
});

test('only the migrations committed late may be applied after a higher-numbered one', (t) => {
  const applied = ['000056_alarms.sql', '000067_content_entities.sql', '000085_coin_catalogue.sql'];
  t.notThrows(() => checkMigrationOrder([...LATE_MIGRATIONS], applied));
  t.notThrows(() => checkMigrationOrder(['000086_next.sql'], applied));
  t.throws(() => checkMigrationOrder(['000058_other.sql', '000086_next.sql'], applied), {
    message: /^Migration 000058_other\.sql is not numbered above 000085_coin_catalogue\.sql/,
  });
  // the same number twice is out of order too
  t.throws(() => checkMigrationOrder(['000085_twin.sql'], applied), { message: /000085_twin\.sql/ });
});

// The history of sql/migrations read from git, renames followed: the order files were added in (a
// rename adds its new name), and every rename or removal of a file once committed.
function migrationHistory(repo: string) {
  const log = execFileSync('git', ['log', '--reverse', '-M', '--name-status', '--format=', '--', 'sql/migrations'], { cwd: repo, encoding: 'utf8' });
  const file = (path: string) => path.replace(/^sql\/migrations\//, '');
  const added: string[] = [];
  const renamed: [string, string][] = [];
  const removed: string[] = [];
  for (const line of log.split('\n').filter((entry) => entry.endsWith('.sql'))) {
    const [status, from, to] = line.split('\t') as [string, string, string | undefined];
    if (status === 'A') added.push(file(from));
    else if (status === 'D') removed.push(file(from));
    else if (status.startsWith('R') && to) {
      renamed.push([file(from), file(to)]);
      added.push(file(to));
    }
  }
  return { added, renamed, removed };
}

/** What the history breaks of the rule "a merged migration keeps its name forever", beyond the exceptions of src/db/migrate.ts. */
function historyViolations(repo: string) {
  const { renamed, removed } = migrationHistory(repo);
  return [
    ...renamed.filter(([from, to]) => RENAMED_MIGRATIONS[from] !== to).map(([from, to]) => `renamed ${from} to ${to}`),
    ...removed.filter((name) => !REMOVED_MIGRATIONS.includes(name)).map((name) => `removed ${name}`),
  ];
}

const REPO = new URL('../../', import.meta.url).pathname;
const git = (...args: string[]) => execFileSync('git', args, { cwd: REPO, encoding: 'utf8' }).trim();
const history = !existsSync(join(REPO, '.git'))
  ? 'not a git checkout'
  : git('rev-parse', '--is-shallow-repository') === 'true'
    ? 'a shallow clone (git fetch --unshallow)'
    : null;
const withHistory = history ? test.skip : test;
const needs = history ? ` (needs the history: ${history})` : '';

withHistory(`migration numbers increase in the order the files were committed${needs}`, (t) => {
  const order = [...new Set([...migrationHistory(REPO).added.filter((name) => migrationFiles.includes(name)), ...migrationFiles])];
  t.is(order.length, migrationFiles.length);
  let newest = 0;
  const late: string[] = [];
  for (const name of order) {
    const number = Number(name.slice(0, 6));
    if (number <= newest) late.push(name);
    newest = Math.max(newest, number);
  }
  t.deepEqual(late, [...LATE_MIGRATIONS]);
});

withHistory(`no merged migration was renamed or removed beyond the recorded exceptions${needs}`, (t) => {
  // a file renamed or removed but not yet committed counts too
  const uncommitted = git('status', '--porcelain', '--', 'sql/migrations').split('\n').filter((line) => /^( D|D |R )/.test(line));
  t.deepEqual([...historyViolations(REPO), ...uncommitted], []);
});

test('the history check fails on a renamed and on a removed migration (a fixture repository)', (t) => {
  const repo = mkdtempSync(join(tmpdir(), 'mdapi-migration-history-'));
  t.teardown(() => rmSync(repo, { recursive: true, force: true }));
  const run = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: repo, encoding: 'utf8' });
  const commit = (message: string) => run('commit', '-q', '-m', message);
  run('init', '-q');
  mkdirSync(join(repo, 'sql/migrations'), { recursive: true });
  writeFileSync(join(repo, 'sql/migrations/000001_first.sql'), 'create table app.first (id int primary key, label text);\n');
  writeFileSync(join(repo, 'sql/migrations/000002_second.sql'), 'create table app.second (id int primary key, label text);\n');
  run('add', '.');
  commit('two migrations');
  t.deepEqual(historyViolations(repo), []);
  run('mv', 'sql/migrations/000001_first.sql', 'sql/migrations/000003_first.sql');
  commit('renumbered');
  t.deepEqual(historyViolations(repo), ['renamed 000001_first.sql to 000003_first.sql']);
  t.deepEqual(migrationHistory(repo).added, ['000001_first.sql', '000002_second.sql', '000003_first.sql']);
  run('rm', '-q', 'sql/migrations/000002_second.sql');
  commit('removed');
  t.deepEqual(historyViolations(repo), ['renamed 000001_first.sql to 000003_first.sql', 'removed 000002_second.sql']);
});

test.serial('a database that applied a renamed migration under its old name takes the new name and applies nothing again', async (t) => {
  const [oldName, newName] = Object.entries(RENAMED_MIGRATIONS)[0]!;
  await db.sql`update app.migrations set name = ${oldName} where name = ${newName}`;
  t.teardown(() => db.sql`update app.migrations set name = ${newName} where name = ${oldName}`);
  t.deepEqual((await migrate(db.sql)).applied, []);
  const rows = await db.sql<{ name: string }[]>`select name from app.migrations where name in (${oldName}, ${newName})`;
  t.deepEqual(rows.map((row) => row.name), [newName]);
});
