// The simulated venues of the demo market: a catalogue of real-world venue names (exchanges.json)
// whose markets, spreads and volumes are made up, deterministically, by the SQL functions of
// sql/functions/410_simulated_exchanges.sql around the simulated coins' current prices.
// Everything it writes is labelled: market.data_sources has the row `simulated-exchanges`, demo = true.
import type { Query } from '../../db/query.ts';
import { loadCatalogueOnce, shippedCatalogue, type Source } from '../source.ts';

export const SOURCE_NAME = 'simulated-exchanges';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const CATALOGUE_PATH = new URL('./exchanges.json', import.meta.url);
const catalogueText = shippedCatalogue(CATALOGUE_PATH);

/** Loads the venue catalogue unless this very version is already there; the JSON is parsed by PostgreSQL. */
export async function ensureExchangeCatalogue(query: Query): Promise<boolean> {
  const { text, hash } = catalogueText();
  return loadCatalogueOnce(query, SOURCE_NAME, hash, () => query(`select market.load_simulated_exchanges($1::text::jsonb)`, [text]));
}

export interface ExchangeTickResult {
  tickers: number;
  /** venue snapshots written into the past (the first tick backfills a year) */
  historyRows: number;
  /** refresh_continuous_aggregate calls for history older than the refresh policies reach */
  refreshCalls: number;
}

/**
 * The demo venues themselves, before any coin has a price (the worker's first job on a first
 * start): the catalogue and their figures, so that they answer at once. Not a run of the source:
 * its health waits for the first run that writes their history.
 */
export async function loadDemoVenues(query: Query): Promise<void> {
  await ensureExchangeCatalogue(query);
  await query(`select market.refresh_exchange_state(now())`);
}

/**
 * One minute of the simulated venues: loads the catalogue if it changed, rewrites the tickers from
 * the coins' current state, refreshes the venue state (which records this minute's snapshot),
 * fills the venue history since the source's coverage (first run: a year; `history: false`: not
 * yet) and refreshes the aggregates over a filled window the refresh policies do not reach. Safe to repeat.
 */
export async function exchangeTick(query: Query, options: { now?: string; history?: boolean } = {}): Promise<ExchangeTickResult> {
  await ensureExchangeCatalogue(query);
  const now = options.now ?? null;
  const [{ tickers }] = (await query(`select market.simulate_exchange_tickers(coalesce($1::timestamptz, now())) as tickers`, [now])) as [
    { tickers: number },
  ];
  await query(`select market.refresh_exchange_state(coalesce($1::timestamptz, now()))`, [now]);
  // No coin prices yet (the demo market's first tick has not run): no level to backfill around.
  // Or the present only (the first start): the venue history waits for the market's.
  if (Number(tickers) === 0 || options.history === false) return { tickers: Number(tickers), historyRows: 0, refreshCalls: 0 };
  const [gap] = await query(
    `select coalesce(covered_until, coalesce($1::timestamptz, now()) - interval '365 days') as start,
       date_trunc('minute', coalesce($1::timestamptz, now())) as end
     from market.data_sources where name = $2`,
    [now, SOURCE_NAME],
  );
  let historyRows = 0;
  let refreshCalls = 0;
  if (gap && new Date(gap.start as string) < new Date(gap.end as string)) {
    // Piece by piece (each a few thousand rows, about half a second on the embedded database), so
    // that no statement holds it long: a piece of a coarser band ends where the next band begins.
    // Coverage advances with each piece, so a crash resumes where it stopped.
    let start = new Date(gap.start as string);
    const end = new Date(gap.end as string);
    const reference = now === null ? Date.now() : new Date(now).getTime();
    while (start < end) {
      const age = reference - start.getTime();
      const span = age > 90 * DAY ? Math.max(age - 90 * DAY, HOUR) : age > DAY ? Math.max(Math.min(10 * DAY, age - DAY), HOUR) : 2 * HOUR;
      const pieceEnd = new Date(Math.min(end.getTime(), start.getTime() + span));
      const [row] = await query(`select market.simulate_exchange_history($1, $2, coalesce($3::timestamptz, now())) as n`, [start, pieceEnd, now]);
      historyRows += Number(row!.n);
      // Reaching back beyond the hourly policy's window (7 days): materialize the piece before raw
      // retention (8 days) drops it. A refresh only materializes whole buckets: the window is
      // widened to whole UTC days.
      if (start.getTime() < reference - 7 * DAY) {
        for (const view of ['market.exchange_volumes_1h', 'market.exchange_volumes_1d']) {
          await query(
            `call refresh_continuous_aggregate($1::regclass, date_trunc('day', $2::timestamptz, 'UTC'), date_trunc('day', $3::timestamptz, 'UTC') + interval '1 day')`,
            [view, start, pieceEnd],
          );
          refreshCalls++;
        }
      }
      // Coverage moves only once the piece is written and materialized: a crash repeats the piece.
      await query(`update market.data_sources set covered_until = $2, updated_at = now() where name = $1`, [SOURCE_NAME, pieceEnd]);
      start = pieceEnd;
    }
  }
  // The snapshots just filled in may reach 24 hours and 7 days back: the changes need them.
  if (historyRows > 0) await query(`select market.refresh_exchange_state(coalesce($1::timestamptz, now()))`, [now]);
  return { tickers: Number(tickers), historyRows, refreshCalls };
}

/** The demo venues as a source: one venue minute a run. */
export const simulatedExchanges: Source<ExchangeTickResult> = {
  name: SOURCE_NAME,
  run: (query) => exchangeTick(query),
};

/** The demo venues' present only (the first start, right after the market's present): tickers and figures, no history. */
export const simulatedExchangesPresent: Source<ExchangeTickResult> = {
  name: SOURCE_NAME,
  run: (query) => exchangeTick(query, { history: false }),
};
