// The simulated demo market: a catalogue of real coins (catalogue.json) whose prices and volumes
// are made up, deterministically, by the SQL functions of sql/functions/120_simulated_market.sql.
// Everything it writes is labelled: market.data_sources has the row `simulated` with demo = true.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { completeCoinBarBackfills, type Query } from '../aggregates.ts';
import type { RunOptions, Source } from '../source.ts';

export const SOURCE_NAME = 'simulated';

const CATALOGUE_PATH = new URL('./catalogue.json', import.meta.url);

export interface Catalogue {
  version: number;
  seed: number;
  history: string;
  coins: { slug: string; symbol: string; name: string; type: 'coin' | 'token'; status?: string }[];
}

let cached: { text: string; hash: string } | null = null;

function catalogueText() {
  if (!cached) {
    const text = readFileSync(CATALOGUE_PATH, 'utf8');
    cached = { text, hash: createHash('sha256').update(text).digest('hex').slice(0, 16) };
  }
  return cached;
}

export function readCatalogue(): Catalogue {
  return JSON.parse(catalogueText().text) as Catalogue;
}

/**
 * Loads the catalogue into the database unless this very version is already there. The JSON
 * travels as text and is parsed by PostgreSQL, so supplies and prices never become JS floats.
 */
export async function ensureCatalogue(query: Query, overrides: { seed?: number } = {}): Promise<boolean> {
  const { text, hash } = catalogueText();
  const version = overrides.seed === undefined ? hash : `${hash}/${overrides.seed}`;
  const [row] = await query(`select settings ->> 'catalogue_hash' as hash from market.data_sources where name = $1`, [SOURCE_NAME]);
  if (row?.hash === version) return false;
  await query(
    `select market.load_simulated_market(case when $2::bigint is null then $1::text::jsonb
       else jsonb_set($1::text::jsonb, '{seed}', to_jsonb($2::bigint)) end)`,
    [text, overrides.seed ?? null],
  );
  await query(`update market.data_sources set settings = settings || jsonb_build_object('catalogue_hash', $2::text) where name = $1`, [
    SOURCE_NAME,
    version,
  ]);
  return true;
}

export interface TickResult {
  /** bars written by this tick (the first one backfills the whole history) */
  bars: number;
  /** simulate_market calls: one per band piece, so no statement holds the database long */
  pieces: number;
  /** refresh_continuous_aggregate calls made for windows older than the refresh policies reach */
  refreshCalls: number;
  /** coins whose current state was rewritten */
  coins: number;
  /** the worker stopped the tick between two pieces of a backfill */
  aborted?: boolean;
}

/**
 * One tick of the demo market: loads the catalogue if it changed, writes the bars since the
 * source's coverage (on the first run: the whole history, band by band), refreshes the
 * aggregates over any window older than their refresh policies reach, then the current state.
 * Safe to repeat: coverage is recorded with the bars, and a crash between writing old bars and
 * refreshing them leaves a pending window that the next tick completes.
 */
export async function tick(query: Query, options: { seed?: number; now?: string } & RunOptions = {}): Promise<TickResult> {
  await ensureCatalogue(query, { seed: options.seed });
  const now = options.now ?? null;
  let bars = 0;
  let pieces = 0;
  for (;;) {
    // A stopping worker ends a long backfill between pieces; the next tick resumes from the coverage.
    if (options.signal?.aborted) return { bars, pieces, refreshCalls: 0, coins: 0, aborted: true };
    const [piece] = await query(
      `select bars::int as bars, done, window_start from market.simulate_market(coalesce($1::timestamptz, now()))`,
      [now],
    );
    if (!piece) break;
    pieces++;
    bars += piece.bars as number;
    if (piece.done) break;
    if (pieces === 1) {
      const since = (piece.window_start as Date).toISOString().slice(0, 10);
      options.progress?.(`demo market: writing its price history since ${since} in the background; a line follows when it is done`);
    }
  }
  const { calls } = await completeCoinBarBackfills(query);
  // History written into the past may hold new all-time extremes: rescan them then.
  const full = pieces > 1 || calls > 0;
  const [state] = await query(`select market.refresh_coin_state(coalesce($1::timestamptz, now()), $2::boolean) as coins`, [now, full]);
  return { bars, pieces, refreshCalls: calls, coins: state!.coins as number };
}

/** The demo market as a source: one tick a run. */
export const simulatedMarket: Source<TickResult> = {
  name: SOURCE_NAME,
  run: (query, { signal, progress } = {}) => tick(query, { signal, progress }),
};
