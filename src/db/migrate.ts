// Forward-only numbered migrations (sql/migrations) recorded in app.migrations, then the
// idempotent function files (sql/functions) re-applied every time. Each step runs in its own
// transaction under a transaction-scoped advisory lock, which serialises concurrent migrators
// on a real server and behind the embedded multiplexer alike.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Sql } from './client.ts';

const SQL_DIR = new URL('../../sql/', import.meta.url).pathname;
// Any constant will do; it only has to be the same for every migrator.
const LOCK_KEY = 727_001;

export interface MigrationResult {
  applied: string[];
  functions: string[];
}

const sqlFiles = (dir: string) =>
  readdirSync(join(SQL_DIR, dir))
    .filter((name) => name.endsWith('.sql'))
    .sort();

export async function migrate(sql: Sql, log: (line: string) => void = () => {}): Promise<MigrationResult> {
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
  });

  const applied: string[] = [];
  for (const name of sqlFiles('migrations')) {
    const done = await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${LOCK_KEY})`;
      const [seen] = await tx`select 1 from app.migrations where name = ${name}`;
      if (seen) return false;
      await tx.unsafe(readFileSync(join(SQL_DIR, 'migrations', name), 'utf8')).simple();
      await tx`insert into app.migrations (name) values (${name})`;
      return true;
    });
    if (done) {
      applied.push(name);
      log(`applied ${name}`);
    }
  }

  const functions = sqlFiles('functions');
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${LOCK_KEY})`;
    for (const name of functions) await tx.unsafe(readFileSync(join(SQL_DIR, 'functions', name), 'utf8')).simple();
    // Functions created after the default privileges were set still need the grant when replaced.
    await tx.unsafe(`grant execute on all functions in schema api to analyst; grant select on all tables in schema market, api to analyst`).simple();
  });
  log(`re-applied ${functions.length} function files`);
  return { applied, functions };
}
