// Every minute, after the demo market's tick on its queue: the demo liquidations (src/sources/simulated/liquidations.ts).
import type { Task } from 'graphile-worker';
import { queryOf } from '../src/db/query.ts';
import { runSource } from '../src/sources/source.ts';
import { simulatedLiquidations } from '../src/sources/simulated/liquidations.ts';
import type { MarketSource } from './simulate_market.ts';

export const simulateLiquidations = (source: MarketSource): Task => async (_payload, helpers) => {
  if (source !== 'simulated') return;
  const result = await helpers.withPgClient((client) => runSource(queryOf(client), simulatedLiquidations));
  if (result.backfilledSince) {
    helpers.logger.info(`simulated liquidations: backfilled ${result.inserted} since ${result.backfilledSince.toISOString()}`);
  }
};
