// What the service needs of its database server, checked before anything is migrated: a server
// that lacks it is refused with what was found and what is needed, instead of failing later on
// the first continuous aggregate or policy.
import type { Sql } from './client.ts';

export const MIN_POSTGRES = 15;
export const MIN_TIMESCALEDB = [2, 13] as const;

export interface ServerFacts {
  postgres: string;
  postgresMajor: number;
  /** the installed extension's version, else the one the server offers, else null */
  timescaledb: string | null;
  installed: boolean;
  /** loaded at server start (shared_preload_libraries), or the embedded build, which loads it itself */
  preloaded: boolean;
  sharedPreloadLibraries: string;
  /** TimescaleDB's license GUC: 'timescale' has the TSL features (continuous aggregates, policies); 'apache' lacks them */
  license: string | null;
  embedded: boolean;
}

export class UnsupportedServerError extends Error {}

export async function readServerFacts(sql: Sql): Promise<ServerFacts> {
  const [row] = await sql<{
    postgres: string; major: number; installed: string | null; available: string | null; preload: string | null; license: string | null; embedded: boolean;
  }[]>`
    select current_setting('server_version') as postgres,
      current_setting('server_version_num')::int / 10000 as major,
      (select extversion from pg_extension where extname = 'timescaledb') as installed,
      (select default_version from pg_available_extensions where name = 'timescaledb') as available,
      current_setting('shared_preload_libraries', true) as preload,
      current_setting('timescaledb.license', true) as license,
      version() like '%emcc%' as embedded`;
  const preloaded = (row!.preload ?? '').split(',').map((name) => name.trim().replace(/^"|"$/g, '')).includes('timescaledb');
  return {
    postgres: row!.postgres,
    postgresMajor: row!.major,
    timescaledb: row!.installed ?? row!.available,
    installed: row!.installed !== null,
    preloaded: preloaded || row!.embedded,
    sharedPreloadLibraries: row!.preload ?? '',
    license: row!.license,
    embedded: row!.embedded,
  };
}

const versionAtLeast = (version: string, [major, minor]: readonly [number, number]) => {
  const [a = 0, b = 0] = version.split('.').map((part) => Number.parseInt(part, 10));
  return a > major || (a === major && b >= minor);
};

/** The problems that make the server unusable, each naming what was found and what is needed. */
export function serverProblems(facts: ServerFacts): string[] {
  const needed = `TimescaleDB ${MIN_TIMESCALEDB.join('.')} or newer`;
  const problems: string[] = [];
  if (facts.postgresMajor < MIN_POSTGRES) problems.push(`PostgreSQL ${facts.postgres} found; ${MIN_POSTGRES} or newer is needed`);
  if (facts.timescaledb === null) problems.push(`TimescaleDB is not installed on the server; ${needed} is needed`);
  else if (!versionAtLeast(facts.timescaledb, MIN_TIMESCALEDB)) problems.push(`TimescaleDB ${facts.timescaledb} found; ${needed} is needed`);
  if (facts.timescaledb !== null && !facts.preloaded) {
    problems.push(`timescaledb is not in shared_preload_libraries (found: '${facts.sharedPreloadLibraries}'); add it and restart the server`);
  }
  // The GUC exists once the library is loaded; 'apache' is the build without continuous aggregates and policies.
  if (facts.license === 'apache') {
    problems.push(`TimescaleDB runs with the Apache-2 license only (timescaledb.license = 'apache'): continuous aggregates and retention/refresh policies are missing; set timescaledb.license = 'timescale' (the TSL build is needed)`);
  }
  return problems;
}

/** Refuses an unsupported server; returns what was found for the log. */
export async function checkServer(sql: Sql): Promise<ServerFacts> {
  const facts = await readServerFacts(sql);
  const problems = serverProblems(facts);
  if (problems.length > 0) throw new UnsupportedServerError(`unsupported database server:\n  ${problems.join('\n  ')}`);
  return facts;
}
