// The simulated demo market: a catalogue of real coins (catalogue.json) whose prices and volumes
// are made up, deterministically, by the SQL functions of sql/functions/120_simulated_market.sql.
// Everything it writes is labelled: market.data_sources has the row `simulated` with demo = true.
import type { Query } from '../../db/query.ts';
import { completeCoinBarBackfills } from '../aggregates.ts';
import { loadCatalogueOnce, shippedCatalogue, type RunOptions, type Source } from '../source.ts';

export const SOURCE_NAME = 'simulated';

const CATALOGUE_PATH = new URL('./catalogue.json', import.meta.url);

export interface Catalogue {
  version: number;
  seed: number;
  history: string;
  coins: { slug: string; symbol: string; name: string; type: 'coin' | 'token'; status?: string }[];
}

const catalogueText = shippedCatalogue(CATALOGUE_PATH);

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
  return loadCatalogueOnce(query, SOURCE_NAME, version, () =>
    query(
      `select market.load_simulated_market(case when $2::bigint is null then $1::text::jsonb
         else jsonb_set($1::text::jsonb, '{seed}', to_jsonb($2::bigint)) end)`,
      [text, overrides.seed ?? null],
    ),
  );
}

export interface TickResult {
  /** bars written by this tick (the first one writes the present, then the history behind it) */
  bars: number;
  /** simulate_market and simulate_market_history calls: one per band piece, so no statement holds the database long */
  pieces: number;
  /** refresh_continuous_aggregate calls made for windows older than the refresh policies reach */
  refreshCalls: number;
  /** coins whose current state was rewritten */
  coins: number;
  /** history pieces written by this tick */
  historyPieces: number;
  /** the worker stopped the tick between two pieces of a backfill */
  aborted?: boolean;
}

export interface TickOptions extends RunOptions {
  seed?: number;
  now?: string;
  /**
   * how much of the history the first run left behind the present to write: all of it (default),
   * none, or its last day (every 24-hour figure): the first start's first market jobs
   */
  history?: 'all' | 'none' | 'day';
}

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/**
 * One tick of the demo market: loads the catalogue if it changed, writes the bars since the
 * source's coverage (on the first run: the present, the current hour), refreshes the aggregates
 * over any window older than their refresh policies reach and the current state; then the history
 * the first run left behind the present, newest first, piece by piece: the state again once the
 * last 24 hours and the last 7 days are in (their changes and volume), at each new minute meanwhile,
 * and at the end with its all-time extremes rescanned.
 * Safe to repeat: coverage is recorded with the bars, and a crash between writing old bars and
 * refreshing them leaves a pending window that the next tick completes.
 */
export async function tick(query: Query, options: TickOptions = {}): Promise<TickResult> {
  await ensureCatalogue(query, { seed: options.seed });
  const now = options.now ?? null;
  const clock = () => (now === null ? Date.now() : Date.parse(now));
  const result: TickResult = { bars: 0, pieces: 0, refreshCalls: 0, coins: 0, historyPieces: 0 };
  const stopped = () => {
    result.aborted = true;
    return result;
  };
  /** the bars up to this minute, the aggregates over what was written into the past, the state */
  const present = async (afterHistory: boolean) => {
    let pieces = 0;
    for (;;) {
      const [piece] = await query(`select bars::int as bars, done from market.simulate_market(coalesce($1::timestamptz, now()))`, [now]);
      if (!piece) break;
      pieces++;
      result.bars += piece.bars as number;
      if (piece.done) break;
      // A stopping worker ends a long catch-up between pieces; the next tick resumes from the coverage.
      if (options.signal?.aborted) return false;
    }
    result.pieces += pieces;
    const { calls } = await completeCoinBarBackfills(query);
    result.refreshCalls += calls;
    // Bars written into the past (a catch-up, the history) may hold new all-time extremes: rescan them then.
    const full = afterHistory || pieces > 1 || calls > 0;
    const [state] = await query(`select market.refresh_coin_state(coalesce($1::timestamptz, now()), $2::boolean) as coins`, [now, full]);
    result.coins = state!.coins as number;
    return true;
  };
  if (options.signal?.aborted) return stopped();
  if (!(await present(false))) return stopped();
  if (options.history === 'none') return result;
  // the history reaching back this far completes the 24-hour figures, then the 7-day change
  const reaches = [DAY_MS, 7 * DAY_MS];
  let minute = Math.floor(clock() / MINUTE_MS);
  for (;;) {
    if (options.signal?.aborted) return stopped();
    const [piece] = await query(
      `select bars::int as bars, done, window_start, history_from from market.simulate_market_history(coalesce($1::timestamptz, now()))`,
      [now],
    );
    if (!piece) break;
    if (result.historyPieces++ === 0) {
      const since = (piece.history_from as Date).toISOString().slice(0, 10);
      options.progress?.(`demo market: writing its price history since ${since} in the background; a line follows when it is done`);
    }
    result.pieces++;
    result.bars += piece.bars as number;
    if (piece.done) break;
    const reached = clock() - (piece.window_start as Date).getTime() > (reaches[0] ?? Infinity) + MINUTE_MS;
    // Minutes pass while the history is written: the present keeps its minute meanwhile.
    if (reached || Math.floor(clock() / MINUTE_MS) !== minute) {
      if (reached && reaches.shift() === DAY_MS && options.history === 'day') return (await present(false)) ? result : stopped();
      minute = Math.floor(clock() / MINUTE_MS);
      if (!(await present(false))) return stopped();
    }
  }
  if (result.historyPieces > 0 && !(await present(true))) return stopped();
  return result;
}

/** The demo market as a source: one tick a run. */
export const simulatedMarket: Source<TickResult> = {
  name: SOURCE_NAME,
  run: (query, { signal, progress } = {}) => tick(query, { signal, progress }),
};

/** The demo market as the first start's first market jobs run it: the present, then its last day; the rest of the history is left to the next tick. */
export const simulatedMarketFirst = (history: 'none' | 'day'): Source<TickResult> => ({
  name: SOURCE_NAME,
  run: (query, { signal } = {}) => tick(query, { signal, history }),
});
