// The one statement runner: code that runs hand-written SQL text over whatever connection its
// caller holds (the service's postgres.js pool, a transaction, a reserved connection, or a
// graphile-worker job's pg client) takes a Query, and the adapters below are the only ways to make one.
import type postgres from 'postgres';

export type Row = Record<string, unknown>;

/** Runs one parameterised statement ($1, $2 … bound to `values`) and returns its rows. */
export type Query = <R extends object = Row>(text: string, values?: unknown[]) => Promise<R[]>;

/** What a Query runs over: postgres.js (the pool, a transaction, a reserved connection) or a node-postgres client, as graphile-worker's jobs hold one (`helpers`, `helpers.withPgClient`). */
export type Connection = postgres.Sql | postgres.TransactionSql | postgres.ReservedSql | PgClient;
interface PgClient { query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> }

/** The one adapter: a Query over whichever connection the caller holds. */
export function queryOf(connection: Connection): Query {
  if ('unsafe' in connection) {
    const sql = connection;
    return async <R extends object>(text: string, values: unknown[] = []) => (await sql.unsafe(text, values as never[])) as unknown as R[];
  }
  return async <R extends object>(text: string, values?: unknown[]) => (await connection.query(text, values)).rows as R[];
}

/** Runs work with a Query on one reserved postgres.js connection, outside any transaction (aggregate refreshes need that). */
export async function withReservedQuery<T>(sql: postgres.Sql, work: (query: Query) => Promise<T>): Promise<T> {
  const reserved = await sql.reserve();
  try {
    return await work(queryOf(reserved));
  } finally {
    reserved.release();
  }
}

/** A serialized Query: `timed(add)` queues on the same line and adds each statement's own running time (not its wait in line) to `add`. */
export type SerializedQuery = Query & { timed(add: (ms: number) => void): Query };

/**
 * A Query that runs one statement at a time in call order, for work that calls it from parallel
 * tasks (the venues of a run) over one connection: a connection answers one statement at a time.
 */
export function serialized(query: Query): SerializedQuery {
  let tail: Promise<unknown> = Promise.resolve();
  const enqueue = <R extends object>(text: string, values: unknown[] | undefined, add?: (ms: number) => void): Promise<R[]> => {
    const result = tail.then(async () => {
      const started = performance.now();
      try {
        return await query<R>(text, values);
      } finally {
        add?.(performance.now() - started);
      }
    });
    tail = result.catch(() => {});
    return result;
  };
  const line = <R extends object>(text: string, values?: unknown[]) => enqueue<R>(text, values);
  return Object.assign(line, {
    timed: (add: (ms: number) => void): Query => <R extends object>(text: string, values?: unknown[]) => enqueue<R>(text, values, add),
  });
}
