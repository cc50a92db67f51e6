// A small market with 200 days of daily history for the Sentiment and Global tests: one bar per
// coin at each UTC midnight up to today's, with closes from a seeded formula, so that the tests
// can recompute every figure from the same strings.
import type { Sql } from '../../src/db/client.ts';

export interface SentimentCoin {
  id: number;
  slug: string;
  symbol: string;
  type: 'coin' | 'token';
  /** null: no circulating supply (no marketcap, no dominance) */
  supply: string | null;
  /** the close of day d (0 = the oldest day) */
  close: (d: number) => number;
}

export const DAYS = 200;
const wave = (base: number, trend: number, amplitude: number, phase: number) => (d: number) =>
  Number((base * Math.exp(trend * d) * (1 + amplitude * Math.sin(d / 6 + phase))).toFixed(4));

export const SENTIMENT_COINS: SentimentCoin[] = [
  { id: 301, slug: 'bitcoin', symbol: 'BTC', type: 'coin', supply: '19900000', close: wave(60000, 0.002, 0.05, 0) },
  { id: 302, slug: 'ethereum', symbol: 'ETH', type: 'coin', supply: '120000000', close: wave(3000, 0.003, 0.08, 1) },
  { id: 303, slug: 'tether', symbol: 'USDT', type: 'token', supply: '150000000000', close: () => 1 },
  { id: 304, slug: 'solana', symbol: 'SOL', type: 'coin', supply: '500000000', close: wave(150, -0.001, 0.1, 2) },
  { id: 305, slug: 'dogecoin', symbol: 'DOGE', type: 'coin', supply: '140000000000', close: wave(0.2, 0.004, 0.15, 3) },
  { id: 306, slug: 'chainlink', symbol: 'LINK', type: 'token', supply: '600000000', close: wave(15, -0.002, 0.12, 4) },
  // no circulating supply: ranked after every coin with a marketcap, dominance null
  { id: 307, slug: 'mystery', symbol: 'MYS', type: 'coin', supply: null, close: wave(2, 0.001, 0.2, 5) },
];

export const volumeOf = (coin: SentimentCoin, d: number) => 1_000_000 * (coin.id - 300) * (1 + 0.5 * Math.cos(d / 4 + coin.id));

/** Loads the coins and their bars, refreshes the aggregates and the coin state; returns today's date. */
export async function loadSentimentMarket(sql: Sql): Promise<{ today: string }> {
  const [{ today }] = (await sql`select (now() at time zone 'UTC')::date::text as today`) as unknown as [{ today: string }];
  await sql`insert into market.data_sources (name, kind, description) values ('sentiment-test', 'import', 'sentiment fixture')`;
  for (const coin of SENTIMENT_COINS) {
    await sql`insert into market.coins (id, slug, symbol, name, type, circulating_supply, logo, source)
      values (${coin.id}, ${coin.slug}, ${coin.symbol}, ${coin.slug}, ${coin.type}, ${coin.supply}::numeric,
        ${`https://example.com/${coin.slug}.png`}, 'sentiment-test')`;
    const days = Array.from({ length: DAYS }, (_, d) => d);
    const closes = days.map((d) => coin.close(d).toFixed(4));
    const volumes = days.map((d) => volumeOf(coin, d).toFixed(2));
    await sql`
      insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume, marketcap)
      select (${today}::date - ${DAYS - 1}::int + u.d)::timestamp at time zone 'UTC', ${coin.id}, u.c, u.c, u.c, u.c, u.v,
        round(u.c * ${coin.supply}::numeric, 2)
      from unnest(${days}::int[], ${closes}::numeric[], ${volumes}::numeric[]) as u (d, c, v)`;
  }
  for (const level of ['market.coin_bars_30m', 'market.coin_bars_1h', 'market.coin_bars_1d']) {
    await sql.unsafe(`call refresh_continuous_aggregate('${level}', null, null)`);
  }
  await sql`select market.refresh_coin_state()`;
  return { today };
}

/** Day index of today (the last bar). */
export const TODAY = DAYS - 1;
