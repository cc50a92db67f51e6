// Venues in SQL: the taxonomy's type, the 13-factor trust score formula at its edges, market.venue_counts(),
// and the simulated venues (catalogue, determinism, history backfill into the aggregates).
import test from 'ava';
import { ensureExchangeCatalogue, exchangeTick } from '../../src/sources/simulated/exchanges.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
let now: string;

// demo-like coins, so that the catalogue's quotes (USDT, USDC, BTC, ETH, fiat) resolve
const COINS: [number, string, string, string][] = [
  [501, 'bitcoin', 'BTC', '100000'],
  [502, 'ethereum', 'ETH', '4000'],
  [503, 'tether', 'USDT', '1'],
  [504, 'usd-coin', 'USDC', '1'],
  [505, 'solana', 'SOL', '200'],
  [506, 'dogecoin', 'DOGE', '0.2'],
];

test.before(async () => {
  db = await testDatabase();
  now = (await db.sql`select date_trunc('minute', now())::text as now`)[0]!.now as string;
  await db.sql`insert into market.data_sources (name, kind, description) values ('test', 'import', 'test coins')`;
  for (const [id, slug, symbol, price] of COINS) {
    await db.sql`insert into market.coins (id, slug, symbol, name, type, status, circulating_supply, source)
      values (${id}, ${slug}, ${symbol}, ${slug}, 'coin', 'active', 1000000, 'test')`;
    await db.sql`insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
      values (${now}::timestamptz - interval '1 minute', ${id}, ${price}::numeric, ${price}::numeric, ${price}::numeric, ${price}::numeric, 1000000)`;
  }
  await db.sql`select market.refresh_coin_state(${now}::timestamptz)`;
});
test.after.always(async () => db?.close());

test('exchange type: cex or dex from the taxonomy, null when neither or both', async (t) => {
  const cases: [string[], string | null][] = [
    [['centralized', 'spot'], 'cex'],
    [['custodial'], 'cex'],
    [['amm', 'ethereum'], 'dex'],
    [['on-chain-orderbook'], 'dex'],
    [['otc'], null],
    [[], null],
    [['centralized', 'dex'], null],
  ];
  for (const [terms, type] of cases) {
    const [row] = await db.sql`select market.exchange_type(${terms}::text[]) as type`;
    t.is(row!.type, type, terms.join(','));
  }
});

const FACTORS = ['rank', 'volume', 'age', 'volume_trend', 'stability', 'rank_stability', 'ticker_health', 'pairs', 'community',
  'assets', 'dominance', 'market_breadth', 'transparency'] as const;

test('trust score: 13 factors at their bounds, neutral defaults, the weights, null when unranked', async (t) => {
  type Inputs = Record<'rank' | 'volume' | 'age' | 'change7d' | 'cv' | 'rankRange' | 'spread' | 'fresh' | 'anomalies' | 'pairs'
    | 'assets' | 'dominance' | 'top' | 'topBase' | 'quoted' | 'metadata', number | null>;
  const score = async (inputs: Inputs) =>
    (await db.sql`select market.exchange_trust_score(
      p_rank => ${inputs.rank}::int, p_volume_24h => ${inputs.volume}::numeric, p_age_years => ${inputs.age}::float8,
      p_volume_change_7d => ${inputs.change7d}::float8, p_volume_cv => ${inputs.cv}::float8, p_rank_range_7d => ${inputs.rankRange}::int,
      p_spread => ${inputs.spread}::float8, p_fresh_share => ${inputs.fresh}::float8, p_anomaly_share => ${inputs.anomalies}::float8,
      p_pairs => ${inputs.pairs}::int, p_assets => ${inputs.assets}::int, p_dominance => ${inputs.dominance}::float8,
      p_top_coins_listed => ${inputs.top}::int, p_top_coins => ${inputs.topBase}::int,
      p_quoted_share => ${inputs.quoted}::float8, p_metadata_share => ${inputs.metadata}::float8) as s`)[0]!.s;
  const best: Inputs = {
    rank: 1, volume: 1e11, age: 12, change7d: 80, cv: 0, rankRange: 0, spread: 0, fresh: 1, anomalies: 0,
    pairs: 2000, assets: 900, dominance: 40, top: 100, topBase: 100, quoted: 1, metadata: 1,
  };
  const top = await score(best);
  t.deepEqual(Object.keys(top.breakdown).sort(), [...FACTORS].sort());
  // community is a neutral constant weighted 0: the best venue still scores 10
  t.deepEqual(top, { score: 10, breakdown: { ...Object.fromEntries(FACTORS.map((f) => [f, 10])), community: 5 } });
  const worst = await score({
    rank: 500, volume: 10, age: 0, change7d: -90, cv: 2, rankRange: 40, spread: 5, fresh: 0, anomalies: 1,
    pairs: 1, assets: 1, dominance: 0.001, top: 0, topBase: 100, quoted: 0, metadata: 0,
  });
  t.deepEqual(worst, { score: 0, breakdown: { ...Object.fromEntries(FACTORS.map((f) => [f, 0])), community: 5 } });
  // no history and no spread: the neutral values, documented in the function's comment
  const unknown = await score({ ...best, change7d: null, cv: null, rankRange: null, spread: null });
  t.like(unknown.breakdown, { volume_trend: 5, stability: 5, rank_stability: 5, ticker_health: 7.5 });
  // midpoints: rank 51, $10M, 2.5 years, +-0, cv 0.25, 5 places, 0.5 %, 31.6 pairs, 1 % share, half the top coins
  const mid = await score({
    rank: 51, volume: 1e7, age: 2.5, change7d: 0, cv: 0.25, rankRange: 5, spread: 0.5, fresh: 0.5, anomalies: 0.5,
    pairs: 1000, assets: 500, dominance: 1, top: 25, topBase: 50, quoted: 0.5, metadata: 1 / 3,
  });
  t.deepEqual(mid.breakdown, {
    rank: 5, volume: 4, age: 5, volume_trend: 5, stability: 5, rank_stability: 5, ticker_health: 5, pairs: 10, community: 5,
    assets: 10, dominance: 6.7, market_breadth: 5, transparency: 4.2,
  });
  const weights = { rank: 0.1, volume: 0.15, age: 0.08, volume_trend: 0.05, stability: 0.1, rank_stability: 0.05, ticker_health: 0.15,
    pairs: 0.07, community: 0, assets: 0.07, dominance: 0.05, market_breadth: 0.08, transparency: 0.05 };
  const mean = FACTORS.reduce((sum, f) => sum + weights[f] * mid.breakdown[f], 0);
  t.is(mid.score, Math.round(mean * 10) / 10, 'the score is the weighted mean of the factors as shown, to one decimal');
  t.is(await score({ ...best, rank: null }), null, 'an unranked venue has no score');
});

test.serial('simulated venues: a labelled demo source, at least 15 venues of every type, deterministic tickers', async (t) => {
  t.true(await ensureExchangeCatalogue(db.query));
  t.false(await ensureExchangeCatalogue(db.query), 'the same catalogue is not loaded twice');
  const [source] = await db.sql`select kind, demo from market.data_sources where name = 'simulated-exchanges'`;
  t.deepEqual({ ...source }, { kind: 'simulated', demo: true });
  const types = await db.sql`select type, count(*)::int as n from market.exchanges group by type`;
  const byType = Object.fromEntries(types.map((r) => [String(r.type), r.n as number]));
  t.true(Object.values(byType).reduce((a, b) => a + b, 0) >= 15);
  t.true(byType.cex! > 0 && byType.dex! > 0 && byType.null! > 0, JSON.stringify(byType));

  const first = await db.sql`select * from market.simulated_tickers(${now}::timestamptz) order by exchange_id, base_coin_id, quote_symbol, instrument`;
  const again = await db.sql`select * from market.simulated_tickers(${now}::timestamptz) order by exchange_id, base_coin_id, quote_symbol, instrument`;
  t.true(first.length > 0);
  t.deepEqual([...again], [...first], 'the same instant gives the same tickers');
  const later = await db.sql`select * from market.simulated_tickers(${now}::timestamptz + interval '1 minute') order by exchange_id, base_coin_id, quote_symbol, instrument`;
  t.notDeepEqual(later.map((r) => r.price), first.map((r) => r.price), 'the next minute moves');
  for (const row of first) {
    t.true(Number(row.bid) <= Number(row.price) && Number(row.price) <= Number(row.ask), 'bid <= price <= ask');
  }
  // bitcoin is listed on every active venue with markets
  const venuesWithBitcoin = new Set(first.filter((r) => r.base_coin_id === 501).map((r) => r.exchange_id));
  const activeVenues = await db.sql`select e.id from market.exchanges e join market.simulated_exchanges x on x.exchange_id = e.id where e.status = 'active' and x.coverage > 0`;
  t.is(venuesWithBitcoin.size, activeVenues.length);
});

test.serial('the present only (a first start, before the market\'s history): tickers and venue state, no venue history yet', async (t) => {
  await ensureExchangeCatalogue(db.query);
  const [before] = await db.sql`select covered_until from market.data_sources where name = 'simulated-exchanges'`;
  const result = await exchangeTick(db.query, { now, history: false });
  t.true(result.tickers > 0);
  t.is(result.historyRows, 0);
  const [binance] = await db.sql`select s.rank from market.exchange_state s join market.exchanges e on e.id = s.exchange_id where e.slug = 'binance'`;
  t.is(binance!.rank, 1);
  const [after] = await db.sql`select covered_until from market.data_sources where name = 'simulated-exchanges'`;
  t.deepEqual(after!.covered_until, before!.covered_until, 'the history is left for the next tick');
});

test.serial('simulated tick: tickers, venue state, counts, history into the aggregates', async (t) => {
  await ensureExchangeCatalogue(db.query);
  // a short gap instead of the first run's year, to keep the test fast
  await db.sql`update market.data_sources set covered_until = ${now}::timestamptz - interval '10 minutes' where name = 'simulated-exchanges'`;
  const result = await exchangeTick(db.query, { now });
  t.true(result.tickers > 0);
  t.is(result.historyRows > 0, true);
  const [counts] = await db.sql`select * from market.venue_counts()`;
  const [expected] = await db.sql`
    select (select count(distinct exchange_id) from market.tickers)::int as exchanges,
      (select count(*) from market.pairs)::int as pairs, (select count(*) from market.tickers)::int as markets`;
  t.deepEqual({ ...counts }, { ...expected });
  const [ftx] = await db.sql`select s.rank, s.trust_score, s.trust_breakdown from market.exchange_state s join market.exchanges e on e.id = s.exchange_id where e.slug = 'ftx'`;
  t.deepEqual({ ...ftx }, { rank: null, trust_score: null, trust_breakdown: null }, 'an inactive venue is unranked');
  const [binance] = await db.sql`select s.rank, s.trust_score from market.exchange_state s join market.exchanges e on e.id = s.exchange_id where e.slug = 'binance'`;
  t.is(binance!.rank, 1);
  t.true((binance!.trust_score as number) > 0);
  const [breakdown] = await db.sql`select s.trust_breakdown as b from market.exchange_state s where s.rank is not null order by s.rank limit 1`;
  t.deepEqual(Object.keys(breakdown!.b).sort(), [...FACTORS].sort(), 'the refresh stores all 13 factors');
  // every minute of the gap has a snapshot per ranked venue, and the aggregates see them
  const [history] = await db.sql`
    select count(distinct time)::int as minutes from market.exchange_volumes
    where time >= ${now}::timestamptz - interval '10 minutes' and time <= ${now}::timestamptz`;
  t.is(history!.minutes, 11);
  // an old window written directly lands in the daily aggregate once refreshed
  const [old] = await db.sql`select market.simulate_exchange_history(${now}::timestamptz - interval '200 days', ${now}::timestamptz - interval '198 days', ${now}::timestamptz) as n`;
  t.true(Number(old!.n) > 0);
  await db.sql`call refresh_continuous_aggregate('market.exchange_volumes_1h', ${now}::timestamptz - interval '201 days', ${now}::timestamptz - interval '197 days')`;
  await db.sql`call refresh_continuous_aggregate('market.exchange_volumes_1d', ${now}::timestamptz - interval '201 days', ${now}::timestamptz - interval '197 days')`;
  const [daily] = await db.sql`select count(*)::int as n from market.exchange_volumes_1d where time < ${now}::timestamptz - interval '190 days'`;
  t.is(daily!.n, Number(old!.n));
});
