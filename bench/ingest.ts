// Ingest through the live path, at the scale of the largest public catalogues: BENCH_INGEST_COINS
// coins (default 20 000) get BENCH_INGEST_MINUTES minutes of 1-minute bars as a source writes them
// (one multi-row statement per minute, prices as decimal text), then one more minute is timed as a
// whole tick: its bars, the coin state with alarm evaluation (market.refresh_coin_state), and the
// 30-minute aggregate's refresh that its policy makes. Runs on the benchmark's own database.
import type { Sql } from '../src/db/client.ts';
import postgres from 'postgres';
import { measure, printColumns, printTable } from './harness.ts';

const minuteOf = (date: Date) => new Date(Math.floor(date.getTime() / 60_000) * 60_000);

export async function benchIngest(sql: Sql, url: string) {
  const coins = Number(process.env.BENCH_INGEST_COINS ?? 20_000);
  const minutes = Number(process.env.BENCH_INGEST_MINUTES ?? 10);
  await sql`insert into market.data_sources (name, kind, description) values ('bench-ingest', 'import', 'benchmark coins (bench/ingest.ts)')
            on conflict (name) do nothing`;
  const ids = (await sql<{ id: number }[]>`
    insert into market.coins (slug, symbol, name, type, circulating_supply, source)
    select 'bench-coin-' || g, 'BC' || g, 'Bench coin ' || g, 'token', 1000000, 'bench-ingest' from generate_series(1, ${coins}) g
    on conflict (slug) do update set source = excluded.source
    returning id`).map((row) => row.id);

  // Prices as a source has them: decimal strings, one per coin, walking a little every minute.
  const price = ids.map((_, i) => 1 + (i % 997) / 10);
  const barsOf = (minute: number) => {
    const open: string[] = [], high: string[] = [], low: string[] = [], close: string[] = [], volume: string[] = [];
    ids.forEach((_, i) => {
      const from = price[i]!;
      const to = Math.max(0.01, from * (1 + (((i * 7919 + minute * 104_729) % 201) - 100) / 100_000));
      price[i] = to;
      open.push(from.toFixed(6));
      close.push(to.toFixed(6));
      high.push((Math.max(from, to) * 1.0005).toFixed(6));
      low.push((Math.min(from, to) * 0.9995).toFixed(6));
      volume.push(((i % 1000) * 13.5).toFixed(2));
    });
    return { open, high, low, close, volume };
  };
  const writeMinute = async (time: Date, minute: number) => {
    const bars = barsOf(minute);
    await sql`
      insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume, marketcap)
      select ${time}, b.coin_id, b.open, b.high, b.low, b.close, b.volume, b.close * c.circulating_supply
      from unnest(${ids}::int[], ${bars.open}::numeric[], ${bars.high}::numeric[], ${bars.low}::numeric[], ${bars.close}::numeric[], ${bars.volume}::numeric[])
        as b (coin_id, open, high, low, close, volume)
      join market.coins c on c.id = b.coin_id
      on conflict (coin_id, time) do update set open = excluded.open, high = excluded.high, low = excluded.low,
        close = excluded.close, volume = excluded.volume, marketcap = excluded.marketcap`;
  };

  const now = minuteOf(new Date());
  const first = new Date(now.getTime() - (minutes + 1) * 60_000);
  let started = performance.now();
  for (let m = 0; m < minutes; m++) await writeMinute(new Date(first.getTime() + m * 60_000), m);
  const bulkSeconds = (performance.now() - started) / 1000;

  // The service's start: one full refresh up to the minute before.
  const tickMinute = new Date(now.getTime() - 60_000);
  await sql`select market.refresh_coin_state(${tickMinute}, true)`;

  // The minute that just closed, phase by phase as the minute job runs them (src/sources/exchanges,
  // TICK_PHASES): its bars, the 30-minute aggregate its policy refreshes, the coin state and the
  // alarms (one transaction), the venue state. The coin state is timed twice: fully recomputed (as
  // at the start, on a new UTC day or after retention; rolled back) and incrementally (committed).
  const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
    const started = performance.now();
    const result = await work();
    return [result, performance.now() - started];
  };
  const [, barsMs] = await timed(() => writeMinute(tickMinute, minutes));
  const [, aggregateMs] = await timed(
    () => sql`call refresh_continuous_aggregate('market.coin_bars_30m', ${new Date(now.getTime() - 60 * 60_000)}::timestamptz, ${now}::timestamptz)`,
  );
  const [full] = await timed(() => fullRecomputation(sql, now));
  const [[state]] = await timed(() => sql`select coins, coin_state_ms, alarms_ms from market.refresh_coin_state_timed(${now})`);
  const [, venueMs] = await timed(() => sql`select market.refresh_exchange_state(${now})`);

  console.log(`\ningest through the live path, ${coins.toLocaleString('en')} coins`);
  console.log(`  ${minutes} minutes of bars, one statement a minute: ${(coins * minutes).toLocaleString('en')} bars in ${bulkSeconds.toFixed(1)} s = ${Math.round((coins * minutes) / bulkSeconds).toLocaleString('en')} bars/s`);
  const phases: [string, number, number][] = [
    ['bars', barsMs, barsMs],
    ['30-minute aggregate', aggregateMs, aggregateMs],
    [`coin state (${Number(full.coins).toLocaleString('en')} / ${Number(state!.coins).toLocaleString('en')} coins computed)`, full.coin_state_ms, Number(state!.coin_state_ms)],
    ['alarms', Number(state!.alarms_ms), Number(state!.alarms_ms)],
    ['venue state', venueMs, venueMs],
  ];
  const total = (column: 1 | 2) => phases.reduce((sum, phase) => sum + phase[column], 0);
  console.log(`\nthe minute's work, ${coins.toLocaleString('en')} coins (ms)`);
  printColumns(
    ['phase', 'full recomputation', 'incremental'],
    [...phases, ['the minute', total(1), total(2)] as [string, number, number]].map(([name, before, after]) => [name, before.toFixed(0), after.toFixed(0)]),
  );

  if (process.env.BENCH_EXPLAIN === 'on') await explainMinute(sql, url, now, (time) => writeMinute(time, minutes + 1));

  // The coin list's cold path at this size: every matching coin ranked, one page formatted.
  const lists = [
    await measure('  api.coin_list_page, 100 by rank', () => sql`select * from api.coin_list_page(p_per_page => 100)`, { requests: 20, concurrency: 1, warmup: 3 }),
    await measure('  api.coin_list_page, page 50 by -change_24h', () => sql`select * from api.coin_list_page(p_sort => ${['-change_24h']}::text[], p_page => 50, p_per_page => 100)`, { requests: 20, concurrency: 1, warmup: 3 }),
    await measure('  api.coin_list_page, gainers', () => sql`select * from api.coin_list_page(p_list => 'gainers', p_per_page => 100)`, { requests: 20, concurrency: 1, warmup: 3 }),
  ];
  console.log(`\nthe coin list with ${(state!.coins as number).toLocaleString('en')} coins (one call at a time)`);
  printTable(lists);
}

/** The coin state of `now` computed for every coin, timed inside the database and rolled back. */
async function fullRecomputation(sql: Sql, now: Date): Promise<{ coins: number; coin_state_ms: number }> {
  let figures = { coins: 0, coin_state_ms: 0 };
  await sql
    .begin(async (tx) => {
      const [row] = await tx`
        select market.write_coin_state(${now}, false, false) as coins,
          extract(epoch from clock_timestamp() - statement_timestamp()) * 1000 as ms`;
      figures = { coins: Number(row!.coins), coin_state_ms: Number(row!.ms) };
      throw new Error('rollback');
    })
    .catch((error: Error) => {
      if (error.message !== 'rollback') throw error;
    });
  return figures;
}

/**
 * BENCH_EXPLAIN=on: one more minute, each phase's statements with EXPLAIN (ANALYZE, BUFFERS)
 * through auto_explain (nested statements too), each rolled back but the bars.
 */
async function explainMinute(sql: Sql, url: string, now: Date, writeBars: (time: Date) => Promise<unknown>) {
  const plans: string[] = [];
  const client = postgres(url, { max: 1, prepare: false, onnotice: (notice) => plans.push(notice.message ?? '') });
  try {
    try {
      await client.unsafe(`load 'auto_explain'`);
    } catch (error) {
      // the embedded database is built without it
      console.log(`\nno EXPLAIN of the minute: auto_explain is not available here (${(error as Error).message})`);
      return;
    }
    await client.unsafe(`set auto_explain.log_min_duration = 0; set auto_explain.log_analyze = on; set auto_explain.log_buffers = on;
      set auto_explain.log_nested_statements = on; set auto_explain.log_level = notice; set jit = off`);
    const next = new Date(now.getTime() + 60_000);
    const phase = async (name: string, work: (tx: postgres.TransactionSql) => Promise<unknown>) => {
      plans.length = 0;
      await client.begin(async (tx) => {
        await work(tx);
        throw new Error('rollback');
      }).catch((error: Error) => {
        if (error.message !== 'rollback') throw error;
      });
      console.log(`\n== EXPLAIN (ANALYZE, BUFFERS): ${name}\n${plans.join('\n')}`);
    };
    await writeBars(now);
    await phase('coin state, full recomputation', (tx) => tx`select market.write_coin_state(${next}, false, false)`);
    await phase('coin state and alarms, incremental', (tx) => tx`select * from market.refresh_coin_state_timed(${next})`);
    await phase('venue state', (tx) => tx`select market.refresh_exchange_state(${next})`);
  } finally {
    await client.end();
  }
}
