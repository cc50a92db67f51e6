// Ingest through the live path, at the scale of the largest public catalogues: BENCH_INGEST_COINS
// coins (default 20 000) get BENCH_INGEST_MINUTES minutes of 1-minute bars as a source writes them
// (one multi-row statement per minute, prices as decimal text), then one more minute is timed as a
// whole tick: its bars, the coin state with alarm evaluation (market.refresh_coin_state), and the
// 30-minute aggregate's refresh that its policy makes. Runs on the benchmark's own database.
import type { Sql } from '../src/db/client.ts';
import { measure, printTable } from './harness.ts';

const minuteOf = (date: Date) => new Date(Math.floor(date.getTime() / 60_000) * 60_000);

export async function benchIngest(sql: Sql) {
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

  // The tick of the minute that just closed.
  const tickMinute = new Date(now.getTime() - 60_000);
  started = performance.now();
  await writeMinute(tickMinute, minutes);
  const barsMs = performance.now() - started;
  started = performance.now();
  const [state] = await sql`select market.refresh_coin_state(${now}) as coins`;
  const stateMs = performance.now() - started;
  started = performance.now();
  await sql`call refresh_continuous_aggregate('market.coin_bars_30m', ${new Date(now.getTime() - 60 * 60_000)}::timestamptz, ${now}::timestamptz)`;
  const aggregateMs = performance.now() - started;

  console.log(`\ningest through the live path, ${coins.toLocaleString('en')} coins`);
  console.log(`  ${minutes} minutes of bars, one statement a minute: ${(coins * minutes).toLocaleString('en')} bars in ${bulkSeconds.toFixed(1)} s = ${Math.round((coins * minutes) / bulkSeconds).toLocaleString('en')} bars/s`);
  console.log(`  one minute's tick: ${(barsMs + stateMs + aggregateMs).toFixed(0)} ms = bars ${barsMs.toFixed(0)} ms + coin state and alarms (${state!.coins} coins) ${stateMs.toFixed(0)} ms + 30-minute aggregate ${aggregateMs.toFixed(0)} ms`);

  // The coin list's cold path at this size: every matching coin ranked, one page formatted.
  const lists = [
    await measure('  api.coin_list_page, 100 by rank', () => sql`select * from api.coin_list_page(p_per_page => 100)`, { requests: 20, concurrency: 1, warmup: 3 }),
    await measure('  api.coin_list_page, page 50 by -change_24h', () => sql`select * from api.coin_list_page(p_sort => ${['-change_24h']}::text[], p_page => 50, p_per_page => 100)`, { requests: 20, concurrency: 1, warmup: 3 }),
    await measure('  api.coin_list_page, gainers', () => sql`select * from api.coin_list_page(p_list => 'gainers', p_per_page => 100)`, { requests: 20, concurrency: 1, warmup: 3 }),
  ];
  console.log(`\nthe coin list with ${(state!.coins as number).toLocaleString('en')} coins (one call at a time)`);
  printTable(lists);
}
