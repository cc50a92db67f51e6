// Global Market and Sentiment over HTTP beside the same api.* SQL (the ceiling), on the demo market
// loaded by benchMarket: the 15-minute sentiment refresh is timed first (its first run backfills
// the daily altseason history), then the endpoints that read its snapshots.
import type { Sql } from '../src/db/client.ts';
import { measure, printTable, type Figures } from './harness.ts';

export async function benchGlobal(sql: Sql, get: (path: string) => () => Promise<void>, options: { requests: number; concurrency: number }) {
  let started = performance.now();
  const [first] = await sql`select market.refresh_sentiment() as counts`;
  console.log(`\nsentiment refresh, first run: ${JSON.stringify(first!.counts)}, ${((performance.now() - started) / 1000).toFixed(1)} s`);
  started = performance.now();
  await sql`select market.refresh_sentiment()`;
  console.log(`sentiment refresh, every 15 minutes: ${(performance.now() - started).toFixed(0)} ms`);
  started = performance.now();
  const [tally] = await sql`select market.refresh_indicator_tally() as categories`;
  console.log(`indicator tally (${tally!.categories} categories): ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  const rows: Figures[] = [];
  rows.push(await measure('GET /global', get('/api/v1/global'), options));
  rows.push(await measure('  api.global_market (SQL)', () => sql`select api.global_market()`, options));
  rows.push(await measure('GET /global/heatmap', get('/api/v1/global/heatmap'), options));
  rows.push(await measure('  api.market_heatmap (SQL)', () => sql`select api.market_heatmap()`, options));
  rows.push(await measure('GET /sentiment/fear-greed', get('/api/v1/sentiment/fear-greed'), options));
  rows.push(await measure('GET /global/history/marketcap?period=7d', get('/api/v1/global/history/marketcap?period=7d'), options));
  printTable(rows);
}
