// The suite runs on the embedded database (the default, CI) and on a TimescaleDB server
// (TEST_DATABASE_URL). A test that applies to one of them only is registered through these: on the
// other it is skipped, and its title says why, so nothing passes there without being checked.
import type { TestFn } from 'ava';

export const onServer = Boolean(process.env.TEST_DATABASE_URL);

function onlyWhere(applies: boolean, where: string, test: TestFn, reason: string): TestFn {
  if (applies) return test;
  const skipped = ((title: string, ...rest: unknown[]) =>
    (test.skip as (title: string, ...rest: unknown[]) => void)(`${title} [skipped, ${where} only: ${reason}]`, ...rest)) as unknown as TestFn;
  return Object.assign(skipped, {
    serial: skipped, skip: test.skip, todo: test.todo, before: test.before, after: test.after, beforeEach: test.beforeEach, afterEach: test.afterEach,
  });
}

/** Registers tests that only make sense on the embedded database (its multiplexer, its process). */
export const embeddedOnly = (test: TestFn, reason: string) => onlyWhere(!onServer, 'embedded database', test, reason);
/** Registers tests that only make sense on a database server (its scheduler, its autovacuum, replicas). */
export const serverOnly = (test: TestFn, reason: string) => onlyWhere(onServer, 'database server', test, reason);
/** A streaming replica of TEST_DATABASE_URL's server (any database name: tests use their own), e.g. postgres://…:55433/postgres. */
export const replicaUrl = process.env.TEST_DATABASE_READ_URL;
/** Registers tests that need a database server and a streaming replica of it (TEST_DATABASE_READ_URL). */
export const replicaOnly = (test: TestFn, reason: string) =>
  onlyWhere(onServer && Boolean(replicaUrl), 'database server with a streaming replica (TEST_DATABASE_READ_URL)', test, reason);
