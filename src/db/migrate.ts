// Forward-only numbered migrations (sql/migrations) recorded in app.migrations, then the
// idempotent function files (sql/functions) re-applied every time. Each step runs in its own
// transaction under a transaction-scoped advisory lock, which serialises concurrent migrators
// on a real server and behind the embedded multiplexer alike.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Logger as GraphileLogger, runMigrations } from 'graphile-worker';
import { WORKER_APPLICATION_NAME, type Sql } from './client.ts';
import { detailLogger, silentLogger, type Logger } from '../log.ts';
import { checkServer } from './server-check.ts';

const SQL_DIR = new URL('../../sql/', import.meta.url).pathname;
// Any constant will do; it only has to be the same for every migrator.
const LOCK_KEY = 727_001;

export interface MigrationResult {
  applied: string[];
  functions: string[];
}

const sqlFiles = (dir: string, root = SQL_DIR) =>
  readdirSync(join(root, dir))
    .filter((name) => name.endsWith('.sql'))
    .sort();

/** The numbered migration files this code knows (readiness compares them with app.migrations). */
export const migrationFiles = () => sqlFiles('migrations');

/**
 * Committed after a higher-numbered migration, so a database may have applied them after it; each
 * is independent of the files it was overtaken by (sql/migrations/README.md). No other file may be.
 */
export const LATE_MIGRATIONS: readonly string[] = ['000057_alarm_crossings.sql', '000082_venue_backfills.sql'];

/**
 * Merged migrations renamed before the rule was enforced (sql/migrations/README.md): a database that
 * applied one under its old name has applied it, so its record takes the new name. No rename may be added.
 */
export const RENAMED_MIGRATIONS: Readonly<Record<string, string>> = {
  '000112_usage_daily.sql': '000132_usage_daily.sql',
  '000125_widget_plans.sql': '000133_widget_plans.sql',
  '000126_widget_keys.sql': '000134_widget_keys.sql',
};

/** Merged migrations removed before the rule was enforced; a database that applied one keeps its harmless leftovers. No removal may be added. */
export const REMOVED_MIGRATIONS: readonly string[] = ['000070_json_page_state.sql'];

const migrationNumber = (name: string) => Number(/^(\d+)_/.exec(name)?.[1] ?? NaN);

/**
 * Refuses pending migrations numbered at or below the newest one applied: a database that already
 * ran the higher one would run them out of order, a fresh one in order, and the two could differ.
 */
export function checkMigrationOrder(pending: readonly string[], applied: readonly string[]) {
  const newest = applied.toSorted((a, b) => migrationNumber(a) - migrationNumber(b) || a.localeCompare(b)).at(-1);
  if (newest === undefined) return;
  const late = pending.filter((name) => migrationNumber(name) <= migrationNumber(newest) && !LATE_MIGRATIONS.includes(name));
  if (late.length > 0) {
    throw new Error(
      `Migration ${late.join(', ')} is not numbered above ${newest}, which this database has already applied: ` +
        `applied now, it would run out of order. Give it a number above the highest in sql/migrations (sql/migrations/README.md); nothing was applied.`,
    );
  }
}

export async function migrate(sql: Sql, logger: Logger = silentLogger, options: { sqlDir?: string } = {}): Promise<MigrationResult> {
  const root = options.sqlDir ?? SQL_DIR;
  // A line per step for log collectors; on a terminal, the sum at the end.
  const detail = detailLogger(logger);
  const server = await checkServer(sql);
  detail.info({ postgres: server.postgres, timescaledb: server.timescaledb, embedded: server.embedded }, 'database server supported');
  // Before the function files: SQL functions queue jobs with graphile_worker.add_job in the
  // caller's transaction, so its schema must exist wherever migrations ran, worker or not.
  await installWorkerSchema(sql);
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${LOCK_KEY})`;
    await tx.unsafe(`
      create schema if not exists app;
      create table if not exists app.migrations (
        name text primary key,
        applied_at timestamptz not null default now()
      );
      comment on table app.migrations is 'Numbered files of sql/migrations already applied.';
    `).simple();
    await tx`
      update app.migrations m set name = renamed.now
      from unnest(${Object.keys(RENAMED_MIGRATIONS)}::text[], ${Object.values(RENAMED_MIGRATIONS)}::text[]) as renamed(old, now)
      where m.name = renamed.old and not exists (select from app.migrations n where n.name = renamed.now)`;
  });

  // before any file runs, so that a refused set leaves the database as it was
  const files = sqlFiles('migrations', root);
  const done = new Set((await sql<{ name: string }[]>`select name from app.migrations`).map((row) => row.name));
  checkMigrationOrder(files.filter((name) => !done.has(name)), [...done]);

  const applied: string[] = [];
  for (const name of files) {
    const done = await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${LOCK_KEY})`;
      const [seen] = await tx`select 1 from app.migrations where name = ${name}`;
      if (seen) return false;
      await tx.unsafe(readFileSync(join(root, 'migrations', name), 'utf8')).simple();
      await tx`insert into app.migrations (name) values (${name})`;
      return true;
    });
    if (done) {
      applied.push(name);
      detail.info({ migration: name }, 'migration applied');
    }
  }

  const functions = sqlFiles('functions', root);
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${LOCK_KEY})`;
    for (const name of functions) await tx.unsafe(readFileSync(join(root, 'functions', name), 'utf8')).simple();
    // Functions created after the default privileges were set still need the grant when replaced.
    // Only where the analyst lacks it: a GRANT rewrites the catalog row of every table it names
    // (and TimescaleDB's of every chunk), which collides ('tuple concurrently updated') with a
    // worker creating chunks while another process starts.
    await tx.unsafe(GRANT_MISSING_TO_ANALYST).simple();
  });
  detail.info({ functionFiles: functions.length }, 'function files re-applied');
  logger.info(
    { migrationsApplied: applied.length, functionFiles: functions.length },
    `database ready (${server.embedded ? 'embedded ' : ''}PostgreSQL ${server.postgres}, TimescaleDB ${server.timescaledb}): ` +
      `${applied.length === 0 ? 'no migration to apply' : `applied ${applied.length} migration${applied.length === 1 ? '' : 's'}`}, ${functions.length} function files re-applied`,
  );
  return { applied, functions };
}

/** The migration files this code knows that the database has not applied; all of them on a database never migrated. */
export async function pendingMigrations(sql: Sql): Promise<string[]> {
  const files = migrationFiles();
  // Asked first rather than caught: a failed statement would end the caller's transaction.
  const [{ known }] = (await sql`select to_regprocedure('app.pending_migrations(text[])') is not null as known`) as unknown as [{ known: boolean }];
  // no such function: a new database, or one migrated by code older than it
  if (!known) return files;
  const [row] = await sql<{ pending: string[] }[]>`select app.pending_migrations(${files}::text[]) as pending`;
  return row!.pending;
}

/**
 * Runs `work` in a transaction on a current schema, migrating first only when a migration is
 * pending: for commands that need the schema, not a migration run (create-key). A run is a
 * transaction per file, and behind a busy embedded database (the first-start backfill) each waits
 * for the statement ahead of it; here the check is made inside the command's own transaction,
 * which waits once. The function files stay as the last run left them, as the running service uses them.
 */
export async function inMigratedTransaction<T>(sql: Sql, work: (tx: Sql) => Promise<T>, logger: Logger = silentLogger): Promise<T> {
  const attempt = () =>
    sql.begin(async (tx) => ((await pendingMigrations(tx as unknown as Sql)).length > 0 ? { pending: true as const } : { value: await work(tx as unknown as Sql) }));
  const first = await attempt();
  if (!('pending' in first)) return first.value;
  await migrate(sql, logger);
  const second = await attempt();
  if ('pending' in second) throw new Error('migrations still pending after a migration run');
  return second.value;
}

/** graphile-worker's own migrations (idempotent; it serialises concurrent installers itself), over the same database as `sql`. */
async function installWorkerSchema(sql: Sql) {
  const { host, port, user, database, ssl } = sql.options;
  const password = (sql.options as { pass?: unknown }).pass;
  const url = new URL('postgres://placeholder');
  url.username = encodeURIComponent(user);
  if (typeof password === 'string' && password) url.password = encodeURIComponent(password);
  url.pathname = `/${encodeURIComponent(database)}`;
  url.searchParams.set('application_name', WORKER_APPLICATION_NAME);
  // A Unix socket directory cannot be a URL host; libpq-style `?host=` carries it.
  if (host[0]!.startsWith('/')) url.searchParams.set('host', host[0]!);
  else url.host = `${host[0]!.includes(':') ? `[${host[0]}]` : host[0]}:${port[0]}`;
  if (ssl) url.searchParams.set('sslmode', ssl === 'prefer' || ssl === 'allow' ? 'no-verify' : 'require');
  await runMigrations({ connectionString: url.toString(), maxPoolSize: 1, noPreparedStatements: true, logger: silentGraphileLogger });
}

const silentGraphileLogger = new GraphileLogger(() => () => {});

/** What `grant execute on all functions in schema api` and `grant select on all tables in schema market, api` would grant, minus what the analyst already has. */
const GRANT_MISSING_TO_ANALYST = `
do $$
declare
  statement text;
begin
  for statement in
    select format('grant execute on function %s to analyst', p.oid::regprocedure)
    from pg_proc p
    where p.pronamespace = 'api'::regnamespace and p.prokind in ('f', 'a', 'w')
      and not exists (select from aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
                      where a.grantee = 'analyst'::regrole and a.privilege_type = 'EXECUTE')
    union all
    select format('grant select on %s to analyst', c.oid::regclass)
    from pg_class c
    where c.relnamespace in ('market'::regnamespace, 'api'::regnamespace) and c.relkind in ('r', 'p', 'v', 'm', 'f')
      and not exists (select from aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a
                      where a.grantee = 'analyst'::regrole and a.privilege_type = 'SELECT')
  loop
    execute statement;
  end loop;
end $$`;
