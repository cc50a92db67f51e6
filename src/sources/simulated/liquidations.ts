// The demo liquidations: simulated OKX swap liquidations for the minutes the demo market has priced
// since the last run (sql/functions/510_simulated_liquidations.sql). Rows older than the daily
// rollup's refresh window (a first run reaches back 48 hours) are refreshed into it at once, before
// retention can drop them. Labelled: market.data_sources row `simulated-liquidations`, demo = true.
import type { Source } from '../source.ts';

export interface LiquidationsResult {
  inserted: number;
  /** the oldest row written, when it was older than the rollup's refresh window */
  backfilledSince: Date | null;
}

export const simulatedLiquidations: Source<LiquidationsResult> = {
  name: 'simulated-liquidations',
  async run(query) {
    const [result] = await query(
      `select inserted, earliest, earliest < now() - interval '46 hours' as old from market.simulate_liquidations()`,
    );
    if (!result?.old) return { inserted: Number(result?.inserted ?? 0), backfilledSince: null };
    // one statement per call: a continuous-aggregate refresh cannot run inside a transaction block
    await query(`call refresh_continuous_aggregate('market.liquidations_1d', date_trunc('day', $1::timestamptz, 'UTC'), null)`, [result.earliest]);
    return { inserted: Number(result.inserted), backfilledSince: result.earliest as Date };
  },
};
