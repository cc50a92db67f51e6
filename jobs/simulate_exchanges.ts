// The simulated venues' minute: rewrite their tickers from the demo coins' current state, refresh
// the venue figures and trust scores, and record the venue history (the first run backfills a
// year). Queued on the demo market's queue, after its tick, so the two never overlap.
import type { Task } from 'graphile-worker';
import { clientQuery, runSource } from '../src/sources/source.ts';
import { simulatedExchanges } from '../src/sources/simulated/exchanges.ts';
import type { MarketSource } from './simulate_market.ts';

export const simulateExchanges = (source: MarketSource): Task => async (_payload, helpers) => {
  if (source !== 'simulated') return;
  const started = Date.now();
  const result = await helpers.withPgClient((client) => runSource(clientQuery(client), simulatedExchanges));
  if (result.historyRows > 0 && result.refreshCalls > 0) {
    helpers.logger.info(
      `simulated exchanges: ${result.tickers} tickers, ${result.historyRows} history rows, ${result.refreshCalls} aggregate refreshes, ${Date.now() - started} ms`,
    );
  }
};
