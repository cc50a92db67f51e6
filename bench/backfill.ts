// Backfill throughput from the loopback replay of the ten venues (dev/venues/replay.ts): coins ×
// venues of history read through ccxt (its rate limiters on) and written through the live path
// (venue candles → price index → aggregates), as `mdapi backfill` does. BENCH_BACKFILL_COINS coins (default 10)
// listed on all ten venues, BENCH_BACKFILL_INTERVALS (default hourly,minutely) from
// BENCH_BACKFILL_DAYS days ago (default 2), and the estimate printed up front. Figures only, no assertions. Runs in `make bench`
// (BENCH_BACKFILL=off skips it) or alone: node bench/backfill.ts (a fresh embedded database).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Sql } from '../src/db/client.ts';
import { BACKFILL_INTERVALS, backfill, type BackfillEvent, type BackfillInterval } from '../src/sources/exchanges/backfill.ts';
import { estimateLine } from '../src/sources/exchanges/backfill-report.ts';
import { ExchangesSource } from '../src/sources/exchanges/index.ts';
import { withReservedQuery } from '../src/db/query.ts';
import { DAY, REPLAY_VENUES, startVenueReplay } from '../dev/venues/replay.ts';

export async function benchBackfill(sql: Sql) {
  const coins = Number(process.env.BENCH_BACKFILL_COINS ?? 10);
  const days = Number(process.env.BENCH_BACKFILL_DAYS ?? 2);
  const intervals = (process.env.BENCH_BACKFILL_INTERVALS ?? 'hourly,minutely').split(',') as BackfillInterval[];
  if (intervals.some((interval) => !BACKFILL_INTERVALS.includes(interval))) throw new Error('BENCH_BACKFILL_INTERVALS: daily, hourly, minutely');
  const now = Date.now();
  const symbols = Array.from({ length: coins }, (_, i) => `BB${i}`);
  const replay = await startVenueReplay({
    coins: [
      ...symbols.map((symbol, i) => ({ symbol, price: 1 + i * 10, volumeUsd: 1e8, firstTradeAt: now - 400 * DAY })),
      { symbol: 'USDT', price: 1, volumeUsd: 1e10, volatility: 0.01, firstTradeAt: now - 400 * DAY },
    ],
    // every coin on every venue against USDT, and USDT itself against USD where the venue has it
    venues: Object.fromEntries(REPLAY_VENUES.map((venue) => [venue, { markets: [...symbols.map((symbol) => `${symbol}/USDT`), 'USDT/USD'] }])),
  });
  try {
    // Until the catalogue lands (issue 13), market.venue_coin needs these; harmless once it has.
    await sql`create table if not exists market.venue_symbol_overrides (exchange text not null, symbol text not null, coin_id int, primary key (exchange, symbol))`;
    await sql`alter table market.coins add column if not exists catalogue_rank int`;
    await sql`insert into market.coins (slug, symbol, name, type, circulating_supply, source)
      select lower(s), s, 'Bench ' || s, 'token', 1000000, 'exchanges' from unnest(${[...symbols, 'USDT']}::text[]) s
      on conflict (slug) do nothing`;
    const source = new ExchangesSource({ venues: [...REPLAY_VENUES], urls: Object.fromEntries(REPLAY_VENUES.map((id) => [id, replay.baseUrl(id)])) });
    let estimate: Extract<BackfillEvent, { type: 'estimate' }> | undefined;
    const result = await withReservedQuery(sql, (query) =>
      backfill(query, source, {
        coins: symbols.map((symbol) => symbol.toLowerCase()),
        since: new Date(now - days * DAY),
        intervals,
        onProgress: (event) => void (event.type === 'estimate' && (estimate = event)),
      }),
    );
    const seconds = result.ms / 1000;
    // bars written counts rebuilds (each venue's page rebuilds its window); distinct is what is kept
    const [{ n: kept }] = (await sql`select count(*)::int as n from market.coin_bars_1m b join market.coins c on c.id = b.coin_id
      where c.slug = any(${[...symbols, 'USDT'].map((symbol) => symbol.toLowerCase())})`) as unknown as [{ n: number }];
    console.log(`\nbackfill from the replay server: ${coins} coins × ${REPLAY_VENUES.length} venues, ${intervals.join('+')} over ${days} days\n`);
    console.log(`  ${result.candles} candles, ${kept} bars (${result.bars} written with rebuilds), ${result.requests} requests in ${seconds.toFixed(1)} s`);
    console.log(`  ${Math.round(kept / seconds)} bars/s, ${Math.round(result.candles / seconds)} candles/s, ${(result.requests / seconds).toFixed(1)} requests/s`);
    // the estimate counts candle requests at the venues' pacing; the run also loads markets and writes
    if (estimate) console.log(`  estimated up front: ${estimateLine(estimate).replace(/^backfill: /, '')}`);
    for (const [id, venue] of Object.entries(result.venues)) {
      console.log(`  ${id.padEnd(9)} ${venue.state.padEnd(5)} ${String(venue.requests).padStart(5)} requests ${String(venue.candles).padStart(8)} candles${venue.error ? `  ${venue.error}` : ''}`);
    }
  } finally {
    await replay.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [{ loadConfig }, { silentLogger }, { startService }] = await Promise.all([
    import('../src/config.ts'),
    import('../src/log.ts'),
    import('../src/service.ts'),
  ]);
  const dataDir = mkdtempSync(join(tmpdir(), 'mdapi-bench-backfill-'));
  const service = await startService(
    loadConfig({ ...process.env, DATA_DIR: dataDir, EMBEDDED_DB_PORT: '0', PORT: '0', WORKER: 'off', LOG_REQUESTS: 'false', MARKET_SOURCE: 'none' }),
    silentLogger,
  );
  try {
    await benchBackfill(service.sql);
  } finally {
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
