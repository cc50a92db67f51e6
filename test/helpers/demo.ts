// The demo data `make start` serves (simulated market, venues and liquidations, demo content,
// sentiment), loaded into a test database the way the worker loads it on its first minute; and a
// test database that starts from a copy of it (built once per run), brought up to now.
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { loadDemoContentIfEmpty } from '../../src/content/demo.ts';
import { runSource } from '../../src/sources/source.ts';
import { simulatedMarket } from '../../src/sources/simulated/index.ts';
import { simulatedExchanges } from '../../src/sources/simulated/exchanges.ts';
import { simulatedLiquidations } from '../../src/sources/simulated/liquidations.ts';
import { testDatabase, type TestDatabase } from './database.ts';
import { TEMPLATE_DIR } from './template.ts';
import { withQuery } from './query.ts';
import { until } from '../../dev/wait.ts';

/** tallies: the indicator tallies of the top 20 too (the template's; a copy keeps them, minutes old as the job leaves them) */
export async function loadDemoData(db: TestDatabase, { tallies = true } = {}) {
  await withQuery(db, async (query) => {
    await runSource(query, simulatedMarket);
    await runSource(query, simulatedExchanges);
    await runSource(query, simulatedLiquidations);
  });
  await loadDemoContentIfEmpty(db.sql);
  // as jobs/refresh_sentiment.ts does every 15 minutes
  await db.sql`select market.refresh_sentiment()`;
  if (!tallies) return;
  for (const { coin_id } of await db.sql<{ coin_id: number }[]>`select coin_id from market.coin_state where rank <= 20 order by rank`) {
    await db.sql`select market.refresh_tally_coin(${coin_id})`;
  }
  await db.sql`select market.refresh_indicator_tally(p_coins => false)`;
}

/** The demo template of this run: the migrated template with the demo data in it. */
const DEMO_TEMPLATE_DIR = `${TEMPLATE_DIR.replace(/\/$/, '')}-demo`;

/**
 * The demo history takes most of a minute to write, so the first file of a run that asks builds it
 * once and the others wait for it (a directory made atomically is the lock).
 */
async function demoTemplate(): Promise<string> {
  const ready = `${DEMO_TEMPLATE_DIR}/ready`;
  let builder = false;
  try {
    mkdirSync(`${DEMO_TEMPLATE_DIR}.lock`);
    builder = true;
  } catch {
    // another file is building it
  }
  if (builder && !existsSync(ready)) {
    const db = await testDatabase({ optimisedWasm: true });
    await loadDemoData(db);
    await db.sql.end({ timeout: 5 });
    await db.embedded!.stop();
    renameSync(db.dataDir!, DEMO_TEMPLATE_DIR);
    mkdirSync(ready);
  }
  await until(`the demo template ${DEMO_TEMPLATE_DIR} (built by another test process)`, () => existsSync(ready), { timeoutMs: 300_000, everyMs: 250 });
  return DEMO_TEMPLATE_DIR;
}

/** A test database with the demo data as of now: a copy of the run's demo template, caught up (a server: loaded). */
export async function demoDatabase(): Promise<TestDatabase> {
  const db = process.env.TEST_DATABASE_URL ? await testDatabase() : await testDatabase({ template: await demoTemplate(), optimisedWasm: true });
  // on a copy, only the minutes since the template was built, and the sentiment anew
  await loadDemoData(db, { tallies: !!process.env.TEST_DATABASE_URL });
  return db;
}
