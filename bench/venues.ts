// One live minute of the exchange source (MARKET_SOURCE=exchanges) for the catalogue's top
// BENCH_VENUES_COINS coins (default 300) on the six venues of the loopback replay
// (dev/venues/replay.ts), ccxt's real rate limits on (kraken: one request a second): the first run
// (markets, tickers, candles; cold) and the next minute (steady state: tickers and the new candles),
// on a virtual clock as the worker's cron would run them a minute apart. Per venue: requests,
// candles, and how many of its coin markets got candles within the budget (BENCH_VENUES_BUDGET_MS,
// default 40000 as EXCHANGE_BUDGET_MS). Figures only, no assertions. Runs in `make bench`
// (BENCH_VENUES=off skips it) or alone: node bench/venues.ts (a fresh embedded database).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Sql } from '../src/db/client.ts';
import { ExchangesSource, type ExchangesTickResult } from '../src/sources/exchanges/index.ts';
import { withReservedQuery } from '../src/db/query.ts';
import { runSource } from '../src/sources/source.ts';
import { startOfflineReplay } from '../dev/venues/offline.ts';
import { MINUTE, REPLAY_VENUES } from '../dev/venues/replay.ts';

export async function benchVenues(sql: Sql) {
  const coins = Number(process.env.BENCH_VENUES_COINS ?? 300);
  const budgetMs = Number(process.env.BENCH_VENUES_BUDGET_MS ?? 40_000);
  // half a minute into a minute of an hour ago: every run has closed minutes to read
  let clock = Math.floor(Date.now() / MINUTE) * MINUTE - 60 * MINUTE + 30_000;
  const { replay, scenario } = await startOfflineReplay({ coins, now: () => clock });
  try {
    const source = new ExchangesSource({
      venues: [...REPLAY_VENUES],
      urls: Object.fromEntries(REPLAY_VENUES.map((venue) => [venue, replay.baseUrl(venue)])),
      budgetMs,
      clock: () => clock,
    });
    const minute = async () => {
      const started = performance.now();
      const result = await withReservedQuery(sql, (query) => runSource(query, source));
      const ms = performance.now() - started;
      // the markets whose candles stand for a coin on each venue: what a run would read in full
      const due = Object.fromEntries(
        (await sql<{ exchange: string; n: number }[]>`
          select v.exchange, (select count(*)::int from market.venue_candle_markets(v.exchange)) as n
          from unnest(${[...REPLAY_VENUES]}::text[]) v (exchange)`).map((row) => [row.exchange, row.n]),
      );
      return { result, ms, due };
    };
    const first = await minute();
    clock += MINUTE;
    const next = await minute();

    const listed = REPLAY_VENUES.reduce((sum, venue) => sum + (scenario.venues[venue]?.markets.length ?? 0), 0);
    console.log(`\nlive minute of the exchange source: ${scenario.coins.length} catalogue coins × ${REPLAY_VENUES.length} venues (${listed} spot markets) from the replay server, candle budget ${budgetMs / 1000} s per venue\n`);
    const rows: string[][] = [];
    const add = (label: string, run: { result: ExchangesTickResult; ms: number; due: Record<string, number> }) => {
      rows.push([label, 'all', (run.ms / 1000).toFixed(1), String(run.result.requests), String(run.result.candles), String(run.result.bars), '', '']);
      for (const venue of REPLAY_VENUES) {
        const figures = run.result.venues[venue];
        if (!figures) continue;
        rows.push([
          '', venue, '', String(figures.requests), String(figures.candles), '',
          `${figures.candleMarkets}/${run.due[venue] ?? 0}`,
          figures.state === 'up' ? (figures.markets ? `${figures.markets.markets} markets loaded` : '') : `${figures.state}: ${figures.error ?? ''}`,
        ]);
      }
    };
    add('first (cold)', first);
    add('next minute', next);
    printRows(['run', 'venue', 'wall s', 'requests', 'candles', 'bars', 'candle markets', 'note'], rows);
    console.log('\n  candle markets: markets whose candles were read in the run / each coin\'s best market on the venue (the rest come in later runs, oldest first)');
  } finally {
    await replay.close();
  }
}

function printRows(header: string[], rows: string[][]) {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const left = new Set([0, 1, header.length - 1]);
  const format = (cells: string[]) => cells.map((cell, i) => (left.has(i) ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd();
  console.log(format(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of rows) console.log(format(row));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [{ loadConfig }, { silentLogger }, { startService }] = await Promise.all([
    import('../src/config.ts'),
    import('../src/log.ts'),
    import('../src/service.ts'),
  ]);
  const dataDir = mkdtempSync(join(tmpdir(), 'mdapi-bench-venues-'));
  const service = await startService(
    loadConfig({ ...process.env, DATA_DIR: dataDir, EMBEDDED_DB_PORT: '0', PORT: '0', WORKER: 'off', LOG_REQUESTS: 'false', MARKET_SOURCE: 'none' }),
    silentLogger,
  );
  try {
    await benchVenues(service.sql);
  } finally {
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
