// The demo liquidations' minute: writes the simulated OKX swap liquidations of the minutes the demo
// market has priced since the last run (sql/functions/510_simulated_liquidations.sql). Rows older
// than the daily rollup's refresh window (a first run reaches back 48 hours) are refreshed into it
// at once, before retention can drop them. Queued on the demo market's queue, after its tick.
import type { Task } from 'graphile-worker';
import type { MarketSource } from './simulate_market.ts';

export const simulateLiquidations = (source: MarketSource): Task => async (_payload, helpers) => {
  if (source !== 'simulated') return;
  const { rows } = await helpers.query<{ inserted: number; earliest: Date | null; old: boolean }>(
    `select inserted, earliest, earliest < now() - interval '46 hours' as old from market.simulate_liquidations()`,
  );
  const result = rows[0];
  if (result?.old) {
    // one statement per call: a continuous-aggregate refresh cannot run inside a transaction block
    await helpers.query(
      `call refresh_continuous_aggregate('market.liquidations_1d', date_trunc('day', $1::timestamptz, 'UTC'), null)`,
      [result.earliest],
    );
    helpers.logger.info(`simulated liquidations: backfilled ${result.inserted} since ${result.earliest!.toISOString()}`);
  }
};
