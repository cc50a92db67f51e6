// The simulated venues' minute: rewrite their tickers from the demo coins' current state, refresh
// the venue figures and trust scores, and record the venue history (the first run backfills a
// year). Queued on the demo market's queue, after its tick, so the two never overlap. With
// `{venuesOnly: true}` (the worker's first job) only the venues, before any coin has a price.
import type { Task } from 'graphile-worker';
import { queryOf } from '../src/db/query.ts';
import { runSource } from '../src/sources/source.ts';
import { loadDemoVenues, simulatedExchanges, simulatedExchangesPresent } from '../src/sources/simulated/exchanges.ts';
import type { MarketSource } from './simulate_market.ts';

export const simulateExchanges = (source: MarketSource): Task => async (payload, helpers) => {
  if (source !== 'simulated') return;
  // the worker's first job (jobs/index.ts): only the venues, ahead of the demo market's history
  if ((payload as { venuesOnly?: boolean } | null)?.venuesOnly) {
    await helpers.withPgClient((client) => loadDemoVenues(queryOf(client)));
    return;
  }
  // the first start, right after the market's present: tickers and figures, the history later
  if ((payload as { presentOnly?: boolean } | null)?.presentOnly) {
    await helpers.withPgClient((client) => runSource(queryOf(client), simulatedExchangesPresent));
    return;
  }
  const started = Date.now();
  const result = await helpers.withPgClient((client) => runSource(queryOf(client), simulatedExchanges));
  if (result.historyRows > 0 && result.refreshCalls > 0) {
    helpers.logger.info(
      `simulated exchanges: ${result.tickers} tickers, ${result.historyRows} history rows, ${result.refreshCalls} aggregate refreshes, ${Date.now() - started} ms`,
    );
  }
};
