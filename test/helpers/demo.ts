// The demo data `make start` serves (simulated market, venues and liquidations, demo content,
// sentiment), loaded into a test database the way the worker loads it on its first minute.
import { loadDemoContentIfEmpty } from '../../src/content/demo.ts';
import { runSource } from '../../src/sources/source.ts';
import { simulatedMarket } from '../../src/sources/simulated/index.ts';
import { simulatedExchanges } from '../../src/sources/simulated/exchanges.ts';
import { simulatedLiquidations } from '../../src/sources/simulated/liquidations.ts';
import type { TestDatabase } from './database.ts';
import { withQuery } from './query.ts';

export async function loadDemoData(db: TestDatabase) {
  await withQuery(db, async (query) => {
    await runSource(query, simulatedMarket);
    await runSource(query, simulatedExchanges);
    await runSource(query, simulatedLiquidations);
  });
  await loadDemoContentIfEmpty(db.sql);
  // as jobs/refresh_sentiment.ts does every 15 minutes
  await db.sql`select market.refresh_sentiment()`;
  for (const { coin_id } of await db.sql<{ coin_id: number }[]>`select coin_id from market.coin_state where rank <= 20 order by rank`) {
    await db.sql`select market.refresh_tally_coin(${coin_id})`;
  }
  await db.sql`select market.refresh_indicator_tally(p_coins => false)`;
}
