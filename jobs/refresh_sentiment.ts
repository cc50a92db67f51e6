// Every 15 minutes: rewrite the Fear & Greed and Bull/Bear snapshots and bring the daily altseason
// index up to today (market.refresh_sentiment), then rebuild the market-wide indicator tally. The
// tally's per-coin indicator states cost about 150 ms a coin: they are refreshed one coin per
// statement, so that other clients of the single-backend embedded database get turns in between;
// the roll-up is one last statement. Safe to run twice: every step replaces what it writes.
import type { Task } from 'graphile-worker';

export const refreshSentiment: Task = async (_payload, helpers) => {
  const started = Date.now();
  const { rows } = await helpers.query<{ counts: Record<string, number> }>('select market.refresh_sentiment() as counts');
  const coins = await helpers.query<{ coin_id: number }>('select coin_id from market.coin_state where rank <= 100 order by rank');
  for (const { coin_id } of coins.rows) await helpers.query('select market.refresh_tally_coin($1)', [coin_id]);
  const tally = await helpers.query<{ categories: number }>('select market.refresh_indicator_tally(p_coins => false) as categories');
  helpers.logger.info(
    `sentiment: ${JSON.stringify(rows[0]?.counts)}, tally of ${coins.rows.length} coins in ${tally.rows[0]?.categories} categories, ${Date.now() - started} ms`,
  );
};
