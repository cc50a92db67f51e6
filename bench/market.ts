// Coins and Prices over HTTP beside the same api.* SQL called directly (the ceiling), on the
// demo market loaded through the same path `make start` takes.
import type { Sql } from '../src/db/client.ts';
import { queryOf } from '../src/db/query.ts';
import { tick } from '../src/sources/simulated/index.ts';
import { measure, printTable, type Figures } from './harness.ts';

export async function benchMarket(sql: Sql, get: (path: string) => () => Promise<void>, options: { requests: number; concurrency: number }) {
  const started = performance.now();
  const loaded = await tick(queryOf(sql));
  console.log(
    `\ndemo market loaded: ${loaded.bars} bars, ${loaded.coins} coins, ${((performance.now() - started) / 1000).toFixed(1)} s (the first-start backfill)\n`,
  );
  const slugs = (await sql<{ slug: string }[]>`
    select c.slug from market.coin_state s join market.coins c on c.id = s.coin_id
    where s.rank is not null order by s.rank limit 10`).map((row) => row.slug);
  const rows: Figures[] = [];
  rows.push(await measure('GET /coins?per_page=100', get('/api/v1/coins?per_page=100'), options));
  rows.push(await measure('  api.coin_list (SQL)', () => sql`select api.coin_list(p_per_page => 100)`, options));
  rows.push(await measure('GET /coins/bitcoin/history hourly 1000', get('/api/v1/coins/bitcoin/history?interval=hourly&limit=1000'), options));
  rows.push(
    await measure('  api.coin_history (SQL)', () => sql`select * from api.coin_history('bitcoin', 'hourly', null, null, 1000)`, options),
  );
  rows.push(await measure('GET /prices?slugs=<10>', get(`/api/v1/prices?slugs=${slugs.join(',')}`), options));
  rows.push(await measure('  api.prices (SQL)', () => sql`select * from api.prices(null, ${slugs}::text[], null, 'USD')`, options));
  printTable(rows);
}
