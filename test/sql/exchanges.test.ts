// Venues in SQL: the taxonomy's type, the trust score formula at its edges, market.venue_counts(),
// and the simulated venues (catalogue, determinism, history backfill into the aggregates).
import test from 'ava';
import { ensureExchangeCatalogue, exchangeTick } from '../../src/sources/simulated/exchanges.ts';
import type { Query } from '../../src/sources/aggregates.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
let now: string;
const query: Query = async (text, values = []) => [...(await db.sql.unsafe(text, values as never[]))] as Record<string, unknown>[];

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

test('trust score: each component at its bounds, and the weights', async (t) => {
  const score = async (volume: string, spread: number | null, cv: number | null, assets: number, base: number) =>
    (await db.sql`select market.exchange_trust_score(${volume}::numeric, ${spread}::float8, ${cv}::float8, ${assets}, ${base}) as s`)[0]!.s;
  // $100k, zero spread, steady volume, full coverage
  t.deepEqual(await score('100000', 0, 0, 100, 100), { score: 6.5, breakdown: { liquidity: 0, spread: 10, volume_consistency: 10, coverage: 10 } });
  // $10B or more, 1 % spread or worse, unknown consistency (neutral 5), nothing listed
  t.deepEqual(await score('10000000000', 1, null, 0, 50), { score: 4.5, breakdown: { liquidity: 10, spread: 0, volume_consistency: 5, coverage: 0 } });
  t.deepEqual(await score('1000000000000', 3, 0.9, 0, 50), { score: 3.5, breakdown: { liquidity: 10, spread: 0, volume_consistency: 0, coverage: 0 } });
  // midpoints: $10M -> 4, 0.5 % -> 5, cv 0.25 -> 5, 30 of min(100, 300) -> 3
  t.deepEqual(await score('10000000', 0.5, 0.25, 30, 300), {
    score: Number((0.35 * 4 + 0.25 * 5 + 0.2 * 5 + 0.2 * 3).toFixed(1)),
    breakdown: { liquidity: 4, spread: 5, volume_consistency: 5, coverage: 3 },
  });
});

test.serial('simulated venues: a labelled demo source, at least 15 venues of every type, deterministic tickers', async (t) => {
  t.true(await ensureExchangeCatalogue(query));
  t.false(await ensureExchangeCatalogue(query), 'the same catalogue is not loaded twice');
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

test.serial('simulated tick: tickers, venue state, counts, history into the aggregates', async (t) => {
  await ensureExchangeCatalogue(query);
  // a short gap instead of the first run's year, to keep the test fast
  await db.sql`update market.data_sources set covered_until = ${now}::timestamptz - interval '10 minutes' where name = 'simulated-exchanges'`;
  const result = await exchangeTick(query, { now });
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
