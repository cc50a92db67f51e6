// The one shape of a data source: a named row of market.data_sources that runs on one database
// connection and writes through the shared SQL path (bars → aggregates → coin state → alarms,
// or its own tables). Jobs only schedule runSource; each run's outcome becomes the source's
// health (market.source_health), read by /ping, /readyz and analysts.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Query } from '../db/query.ts';

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

/** A catalogue shipped beside the code: its text, read once per process, and a short hash of it that names its version. */
export function shippedCatalogue(url: URL): () => { text: string; hash: string } {
  let read: { text: string; hash: string } | null = null;
  return () => {
    if (!read) {
      const text = readFileSync(url, 'utf8');
      read = { text, hash: createHash('sha256').update(text).digest('hex').slice(0, 16) };
    }
    return read;
  };
}

/**
 * Runs `load` unless `version` is the one the source loaded last (kept in its row of
 * market.data_sources, settings.catalogue_hash), then records it. Returns whether it loaded.
 */
export async function loadCatalogueOnce(query: Query, source: string, version: string, load: () => Promise<unknown>): Promise<boolean> {
  const [row] = await query(`select settings ->> 'catalogue_hash' as hash from market.data_sources where name = $1`, [source]);
  if (row?.hash === version) return false;
  await load();
  await query(`update market.data_sources set settings = settings || jsonb_build_object('catalogue_hash', $2::text) where name = $1`, [source, version]);
  return true;
}
