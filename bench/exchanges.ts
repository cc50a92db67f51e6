// Exchanges and Markets over HTTP beside the same api.* SQL called directly (the ceiling), on the
// simulated venues loaded through the same path the worker takes (after the demo market's tick,
// whose coin prices they follow).
import type { Sql } from '../src/db/client.ts';
import { queryOf } from '../src/db/query.ts';
import { exchangeTick } from '../src/sources/simulated/exchanges.ts';
import { measure, printTable, type Figures } from './harness.ts';

export async function benchExchanges(sql: Sql, get: (path: string) => () => Promise<void>, options: { requests: number; concurrency: number }) {
  const query = queryOf(sql);
  let started = performance.now();
  const loaded = await exchangeTick(query);
  console.log(
    `\nsimulated venues loaded: ${loaded.tickers} tickers, ${loaded.historyRows} history rows, ${((performance.now() - started) / 1000).toFixed(1)} s (the first-run backfill)`,
  );
  started = performance.now();
  await exchangeTick(query);
  console.log(`one venue minute (tickers, state, snapshot): ${(performance.now() - started).toFixed(0)} ms\n`);
  const rows: Figures[] = [];
  rows.push(await measure('GET /exchanges', get('/api/v1/exchanges'), options));
  rows.push(await measure('  api.exchange_list (SQL)', () => sql`select api.exchange_list()`, options));
  rows.push(await measure('GET /tickers?per_page=100', get('/api/v1/tickers?per_page=100'), options));
  rows.push(await measure('  api.ticker_list (SQL)', () => sql`select api.ticker_list(p_per_page => 100)`, options));
  rows.push(await measure('GET /exchanges/binance/history hourly', get('/api/v1/exchanges/binance/history?interval=hourly'), options));
  rows.push(await measure('  api.exchange_history (SQL)', () => sql`select * from api.exchange_history('binance', 'hourly', null, null, 1000)`, options));
  printTable(rows);
}
