// The demo market's minute: append a bar per simulated coin and refresh the current state (the
// first run writes the present, then the two years of history behind it, through the same path).
// Queued on its own graphile-worker queue, so two ticks never overlap.
import type { Task } from 'graphile-worker';
import { NOTICE } from '../src/log.ts';
import { queryOf } from '../src/db/query.ts';
import { runSource } from '../src/sources/source.ts';
import { simulatedMarket, simulatedMarketFirst } from '../src/sources/simulated/index.ts';

export type MarketSource = 'simulated' | 'exchanges' | 'none';

export const simulateMarket = (source: MarketSource): Task => async (payload, helpers) => {
  if (source !== 'simulated') return;
  // the worker's first jobs for the market (jobs/index.ts): the present, then its last day, the rest later
  const history = (payload as { history?: unknown } | null)?.history;
  if (history === 'none' || history === 'day') {
    await helpers.withPgClient((client) => runSource(queryOf(client), simulatedMarketFirst(history)));
    return;
  }
  const started = Date.now();
  // A run long enough to announce (the first start's history) also says when it is done, at info.
  let announced = false;
  const progress = (note: string) => {
    announced = true;
    helpers.logger.info(note, NOTICE);
  };
  const result = await helpers.withPgClient((client) => runSource(queryOf(client), simulatedMarket, { signal: helpers.abortSignal, progress }));
  if (result.aborted) {
    helpers.logger.info(`simulated market: stopped after ${result.pieces} pieces (${result.bars} bars); the next tick resumes`, announced ? NOTICE : undefined);
    return;
  }
  if (announced) {
    helpers.logger.info(`demo market: history written, ${result.bars} bars of ${result.coins} coins in ${Math.round((Date.now() - started) / 1000)} s`, NOTICE);
  } else if (result.pieces > 1 || result.refreshCalls > 0) {
    helpers.logger.info(
      `simulated market: ${result.bars} bars in ${result.pieces} pieces, ${result.refreshCalls} aggregate refreshes, ` +
        `${result.coins} coins, ${Date.now() - started} ms`,
    );
  }
};
