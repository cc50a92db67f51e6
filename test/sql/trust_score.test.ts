// The 13-factor trust score on crafted venues, through market.refresh_exchange_state(): each
// factor reads the input it documents (spreads, freshness and price anomalies of the tickers,
// pairs, assets, top coins listed, age, curated metadata, the 7-day hourly volume and rank history).
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
let now: string;
type Breakdown = Record<string, number>;
const trust = new Map<string, { score: number | null; breakdown: Breakdown | null }>();

const COINS = [601, 602, 603, 604];
// [venue id, slug, status, established (years ago, null: unknown), location and website known]
const VENUES: [number, string, string, number | null, boolean][] = [
  [701, 'old-tight', 'active', 11, true],
  [702, 'young-wide', 'active', 1, false],
  [703, 'stale-bare', 'active', null, false],
  [704, 'shut', 'inactive', 11, true],
];
// [venue, coin (pair with USD), USD price, spread % (null: no bid or ask), 24h USD volume, minutes since the update]
const TICKERS: [number, number, number, number | null, number, number][] = [
  [701, 601, 100, 0.1, 1e6, 1],
  [701, 602, 10, 0.1, 1e6, 1],
  [701, 603, 1, 0.1, 1e6, 1],
  [702, 601, 130, 0.8, 1e6, 1], // 30 % off the median of 601/USD (100): anomalous
  [703, 601, 100, null, 1e5, 180], // stale: 3 hours old
  [704, 601, 100, 0.1, 1e6, 1],
];

test.before(async () => {
  db = await testDatabase();
  const { sql } = db;
  now = (await sql`select date_trunc('minute', now())::text as now`)[0]!.now as string;
  await sql`insert into market.data_sources (name, kind, description) values ('test', 'import', 'test data')`;
  for (const id of COINS) {
    await sql`insert into market.coins (id, slug, symbol, name, type, status, circulating_supply, source)
      values (${id}, ${`coin-${id}`}, ${`C${id}`}, ${`Coin ${id}`}, 'coin', 'active', 1000000, 'test')`;
    await sql`insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
      values (${now}::timestamptz - interval '1 minute', ${id}, 1, 1, 1, 1, 1000)`;
    await sql`insert into market.pair_keys (id, base_coin_id, quote_symbol) values (${id}, ${id}, 'USD')`;
  }
  await sql`select market.refresh_coin_state(${now}::timestamptz)`;
  for (const [id, slug, status, years, known] of VENUES) {
    await sql`insert into market.exchanges (id, slug, name, status, established, location, website, source)
      values (${id}, ${slug}, ${slug}, ${status},
        (${now}::timestamptz - make_interval(days => round(${years}::float8 * 365.25)::int))::date,
        ${known ? 'Testland' : null}, ${known ? `https://${slug}.example` : null}, 'test')`;
  }
  for (const [venue, coin, price, spread, volume, minutes] of TICKERS) {
    const quoted = spread !== null;
    await sql`insert into market.tickers (exchange_id, pair_id, base_coin_id, quote_symbol, exchange_symbol, price, price_usd,
        bid, ask, spread, volume_base, volume_usd, updated_at)
      values (${venue}, ${coin}, ${coin}, 'USD', ${`C${coin}USD`}, ${price}, ${price},
        ${quoted ? price * 0.999 : null}, ${quoted ? price * 1.001 : null}, ${spread}, ${volume / price}, ${volume},
        ${now}::timestamptz - make_interval(mins => ${minutes}))`;
  }
  // 7 days of hourly history: old-tight steady at rank 1 and doubling over the week; young-wide
  // swinging between $0.5M and $1.5M and between ranks 2 and 12, halving over the week
  await sql`insert into market.exchange_volumes (time, exchange_id, volume_24h, rank)
    select ${now}::timestamptz - make_interval(hours => h), 701, 3000000, 1 from generate_series(1, 167) h
    union all select ${now}::timestamptz - make_interval(hours => h), 702, case when h % 2 = 0 then 500000 else 1500000 end,
      case when h % 2 = 0 then 2 else 12 end from generate_series(1, 167) h
    union all select ${now}::timestamptz - interval '7 days 30 minutes', 701, 1500000, 1
    union all select ${now}::timestamptz - interval '7 days 30 minutes', 702, 2000000, 2`;
  await sql`select market.refresh_exchange_state(${now}::timestamptz)`;
  for (const row of await sql`select e.slug, s.trust_score, s.trust_breakdown from market.exchange_state s join market.exchanges e on e.id = s.exchange_id`) {
    trust.set(row.slug as string, { score: row.trust_score as number | null, breakdown: row.trust_breakdown as Breakdown | null });
  }
});
test.after.always(async () => db?.close());

test('each factor of the crafted venues, as documented', async (t) => {
  // $3M; 11 years; +100 % over 7 days; steady volume and rank; 0.1 % spreads, fresh, in line with the
  // median; 3 pairs and coins; 73 % of the volume; 3 of the 4 ranked coins; quoted, metadata complete
  t.deepEqual(trust.get('old-tight')!.breakdown, {
    rank: 10, volume: 3, age: 10, volume_trend: 10, stability: 10, rank_stability: 10, ticker_health: 9.5, pairs: 1.6,
    community: 5, assets: 1.8, dominance: 10, market_breadth: 8, transparency: 10,
  });
  // $1M; 1 year; -50 %; cv 0.5 and 10 places of rank movement; 0.8 % spread and an anomalous price;
  // 1 pair and coin; 24 % of the volume; 1 of 4 top coins; quoted, 1 of 3 metadata fields
  t.deepEqual(trust.get('young-wide')!.breakdown, {
    rank: 10, volume: 2, age: 2, volume_trend: 0, stability: 0, rank_stability: 0, ticker_health: 3.5, pairs: 0,
    community: 5, assets: 0, dominance: 10, market_breadth: 3, transparency: 6.7,
  });
  // $100k; first seen now; no history (neutral); unknown spread, stale ticker; 2.4 % of the volume; nothing published
  t.deepEqual(trust.get('stale-bare')!.breakdown, {
    rank: 10, volume: 0, age: 0, volume_trend: 5, stability: 5, rank_stability: 5, ticker_health: 5, pairs: 0,
    community: 5, assets: 0, dominance: 8, market_breadth: 3, transparency: 0,
  });
});

test('comparisons: wider spreads, a younger venue, fewer pairs each score lower; the score follows', async (t) => {
  const [old, young] = [trust.get('old-tight')!, trust.get('young-wide')!];
  t.true(young.breakdown!.ticker_health! < old.breakdown!.ticker_health!);
  t.true(young.breakdown!.age! < old.breakdown!.age!);
  t.true(young.breakdown!.pairs! < old.breakdown!.pairs!);
  t.true(young.score! < old.score!);
  for (const { score, breakdown } of [old, young, trust.get('stale-bare')!]) {
    t.true(score! >= 0 && score! <= 10 && Number.isInteger(score! * 10), `score ${score}`);
    for (const value of Object.values(breakdown!)) t.true(value >= 0 && value <= 10);
  }
});

test('an inactive venue is unranked: null score and breakdown', async (t) => {
  t.deepEqual(trust.get('shut'), { score: null, breakdown: null });
});
