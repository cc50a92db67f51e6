// The one shape of a data source: a named row of market.data_sources that runs on one database
// connection and writes through the shared SQL path (bars → aggregates → coin state → alarms,
// or its own tables). Jobs only schedule runSource; each run's outcome becomes the source's
// health (market.source_health), read by /ping, /readyz and analysts.
import type { Sql } from '../db/client.ts';
import type { Query } from './aggregates.ts';

export interface RunOptions {
  /** a stopping worker: a long run ends between two of its statements */
  signal?: AbortSignal;
  /** a note a run makes when it turns out long (the demo market's first-start backfill) */
  progress?: (note: string) => void;
}

export interface Source<Result = unknown> {
  /** its row in market.data_sources */
  readonly name: string;
  run(query: Query, options?: RunOptions): Promise<Result>;
  /** for sources with several venues: which were up in the result */
  venues?(result: Result): Record<string, 'up' | 'down'>;
}

/** Runs a source once and records its health; a failed run is recorded, then rethrown for the job's retry. */
export async function runSource<Result>(query: Query, source: Source<Result>, options: RunOptions = {}): Promise<Result> {
  let result: Result;
  try {
    result = await source.run(query, options);
  } catch (error) {
    // Best effort: the error that matters is the run's, not a failure to record it.
    await query('select market.record_source_run($1, $2)', [source.name, (error as Error).message ?? String(error)]).catch(() => {});
    throw error;
  }
  const venues = source.venues?.(result);
  await query('select market.record_source_run($1, null, $2::text::jsonb)', [source.name, venues ? JSON.stringify(venues) : null]);
  return result;
}

/** A Query over a node-postgres client, as graphile-worker's jobs hold one. */
export const clientQuery =
  (client: { query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }> }): Query =>
  async (text, values) => (await client.query(text, values as unknown[])).rows;

/** Runs work with a Query on one reserved postgres.js connection, outside any transaction (aggregate refreshes need that). */
export async function withReservedQuery<T>(sql: Sql, work: (query: Query) => Promise<T>): Promise<T> {
  const reserved = await sql.reserve();
  try {
    return await work(async (text, values = []) => (await reserved.unsafe(text, values as never[])) as Record<string, unknown>[]);
  } finally {
    reserved.release();
  }
}

/**
 * A Query that runs one statement at a time in call order, for work that calls it from parallel
 * tasks (the venues of a run) over one connection: a connection answers one statement at a time.
 */
export function serialized(query: Query): Query {
  let tail: Promise<unknown> = Promise.resolve();
  return (text, values) => {
    const result = tail.then(() => query(text, values));
    tail = result.catch(() => {});
    return result;
  };
}
