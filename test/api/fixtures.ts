// A small market for the Coins and Prices tests: coins with known supplies and statuses, three bars
// each (7 days ago, 24 hours ago, a minute ago), and what the API must make of them, computed here
// from the same numbers with decimal.js rather than copied from a run.
import { Decimal } from 'decimal.js';
import type { TestDatabase } from '../helpers/database.ts';

export const STATUSES = ['active', 'delisted', 'untracked', 'progressing', 'awaiting', 'preparing'] as const;
export const PUBLIC_STATUSES = ['active', 'delisted', 'untracked'];

export interface FixtureCoin {
  id: number;
  slug: string;
  symbol: string;
  name: string;
  type: 'coin' | 'token';
  status: (typeof STATUSES)[number];
  circulating: string | null;
  total: string | null;
  max: string | null;
  /** closes 7 days ago, 24 hours ago and a minute ago; null: no bars at all */
  prices: [string, string, string] | null;
  /** USD volume of the latest bar (the older bars trade 10 each) */
  volume: number;
  /** hours before now of status_updated_at */
  listedHoursAgo: number;
}

const coin = (
  id: number, slug: string, symbol: string, type: 'coin' | 'token', status: FixtureCoin['status'],
  supply: [string | null, string | null, string | null], prices: FixtureCoin['prices'], volume: number, listedHoursAgo: number,
): FixtureCoin => ({
  id, slug, symbol, name: slug[0]!.toUpperCase() + slug.slice(1), type, status,
  circulating: supply[0], total: supply[1], max: supply[2], prices, volume, listedHoursAgo,
});

export const COINS: FixtureCoin[] = [
  coin(101, 'alpha', 'ALP', 'coin', 'active', ['1000', '2000', '3000'], ['80', '100', '110'], 500, 30),
  coin(102, 'beta', 'BET', 'token', 'active', ['100000', '100000', null], ['50', '40', '30'], 300, 20),
  coin(103, 'gamma', 'GAM', 'coin', 'active', [null, null, null], ['2', '2', '2.5'], 50, 10),
  coin(104, 'delta', 'DEL', 'coin', 'delisted', ['500', '500', '500'], ['1', '1', '1'], 10, 40),
  coin(105, 'epsilon', 'EPS', 'token', 'preparing', [null, '1000', '1000'], null, 0, 1),
  // shares ALP with alpha, ranked below it
  coin(106, 'zeta', 'ALP', 'token', 'active', ['10', '10', '10'], ['5', '5', '5'], 20, 50),
  // shares BET with beta, with a larger marketcap but delisted
  coin(107, 'eta', 'BET', 'coin', 'delisted', ['1000000000', null, null], ['1', '1', '1'], 5, 60),
  coin(108, 'theta', 'THE', 'coin', 'untracked', ['100', null, null], ['3', '3', '3'], 15, 70),
  coin(109, 'iota', 'IOT', 'token', 'awaiting', [null, null, null], null, 0, 2),
  // -0.003 %: shows as 0.00, so neither a loser nor a gainer
  coin(110, 'kappa', 'KAP', 'token', 'active', ['1000', null, null], ['100', '100', '99.997'], 70, 80),
  // -0.01 %: the smallest loser
  coin(111, 'lambda', 'LAM', 'coin', 'active', ['2000', '2000', null], ['100', '100', '99.99'], 40, 90),
  // +25 % in 24 hours like gamma
  coin(112, 'mu', 'MU', 'token', 'active', ['10000', null, '20000'], ['10', '12', '15'], 1000, 5),
  coin(113, 'nu', 'NU', 'coin', 'progressing', [null, null, null], null, 0, 3),
];

export const byId = (id: number) => COINS.find((c) => c.id === id)!;
export const bySlug = (slug: string) => COINS.find((c) => c.slug === slug)!;

export interface Fixture {
  /** the minute the bars are placed relative to (ms) */
  now: number;
  /** start times (ms) of each coin's three bars: 7 days, 24 hours and 1 minute before now */
  barTimes: [number, number, number];
  eurRate: string;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');
export const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export async function loadCoinFixture(db: TestDatabase): Promise<Fixture> {
  const { sql } = db;
  const [{ now }] = (await sql`select extract(epoch from date_trunc('minute', now())) * 1000 as now`) as unknown as [{ now: string }];
  const nowMs = Number(now);
  const barTimes: [number, number, number] = [nowMs - 7 * DAY, nowMs - DAY, nowMs - MINUTE];
  await sql`insert into market.data_sources (name, kind, description) values ('api-test', 'import', 'API test fixture')`;
  for (const c of COINS) {
    await sql`
      insert into market.coins (id, slug, symbol, name, type, status, status_updated_at, created_at,
        circulating_supply, total_supply, max_supply, decimals, genesis_date, logo, source)
      values (${c.id}, ${c.slug}, ${c.symbol}, ${c.name}, ${c.type}, ${c.status},
        ${iso(nowMs - c.listedHoursAgo * HOUR)}::timestamptz, ${iso(nowMs - 1000 * DAY)}::timestamptz,
        ${c.circulating}::numeric, ${c.total}::numeric, ${c.max}::numeric, 8, '2020-02-29',
        ${`https://example.com/${c.slug}.png`}, 'api-test')`;
    if (!c.prices) continue;
    const volumes = [10, 10, c.volume];
    for (const [i, price] of c.prices.entries()) {
      const marketcap = c.circulating === null ? null : new Decimal(price).mul(c.circulating).toFixed();
      await sql`
        insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume, marketcap)
        values (${iso(barTimes[i]!)}::timestamptz, ${c.id}, ${price}::numeric, ${price}::numeric, ${price}::numeric, ${price}::numeric,
          ${volumes[i]!}, ${marketcap}::numeric)`;
    }
  }
  await sql`
    insert into market.coin_links (coin_id, type, url, position) values
      (101, 'whitepaper', 'https://alpha.example/paper.pdf', 2),
      (101, 'website', 'https://alpha.example', 1),
      (101, 'twitter', 'https://x.com/alpha', 3)`;
  await sql`
    insert into market.coin_contracts (coin_id, chain, address, decimals) values
      (102, 'ethereum', '0xbeta', null),
      (102, 'solana', 'BetaMint111', 9)`;
  await sql`
    insert into market.coin_descriptions (coin_id, locale, html) values
      (101, 'en', '<p>Alpha</p>'), (101, 'de', '<p>Alpha (de)</p>'), (101, 'pt', '<p>Alpha (pt)</p>')`;
  // a rate newer than the template's seed, so the test knows the rate it converts with
  const eurRate = '0.9';
  await sql`insert into market.fx_rates (time, currency, rate, source) values (now(), 'EUR', ${eurRate}::numeric, 'fx-seed')`;
  for (const aggregate of ['market.coin_bars_30m', 'market.coin_bars_1h', 'market.coin_bars_1d']) {
    await sql`call refresh_continuous_aggregate(${aggregate}::regclass, null, null)`;
  }
  await sql`select market.refresh_coin_state()`;
  return { now: nowMs, barTimes, eurRate };
}

/** What market.coin_state holds for a coin, worked out from the fixture. */
export interface Expected {
  coin: FixtureCoin;
  price: string | null;
  marketcap: number | null;
  volume_24h: number;
  change_24h: number | null;
  change_7d: number | null;
  rank: number | null;
  change_rank_24h: number | null;
  change_rank_7d: number | null;
  dominance: number | null;
  fdv: number | null;
}

const percent = (now: string, then: string) => new Decimal(now).div(then).minus(1).mul(100).toDecimalPlaces(4).toNumber();

export function expected(): Map<number, Expected> {
  const rows = COINS.map((c): Expected => {
    const price = c.prices?.[2] ?? null;
    return {
      coin: c,
      price,
      marketcap: price !== null && c.circulating !== null ? new Decimal(price).mul(c.circulating).toDecimalPlaces(2).toNumber() : null,
      volume_24h: c.prices ? c.volume : 0,
      change_24h: c.prices ? percent(c.prices[2], c.prices[1]) : null,
      change_7d: c.prices ? percent(c.prices[2], c.prices[0]) : null,
      rank: null,
      change_rank_24h: null,
      change_rank_7d: null,
      dominance: null,
      fdv: price !== null && (c.max ?? c.total) !== null ? new Decimal(price).mul((c.max ?? c.total)!).toDecimalPlaces(2).toNumber() : null,
    };
  });
  const ranked = rows
    .filter((r) => r.coin.status === 'active' && r.price !== null)
    .sort((a, b) => descNullsLast(a.marketcap, b.marketcap) || b.volume_24h - a.volume_24h || a.coin.id - b.coin.id);
  const total = ranked.reduce((sum, r) => sum.plus(r.marketcap ?? 0), new Decimal(0));
  ranked.forEach((r, i) => {
    r.rank = i + 1;
    r.dominance = r.marketcap === null ? null : new Decimal(r.marketcap).mul(100).div(total).toDecimalPlaces(6).toNumber();
  });
  for (const key of ['change_24h', 'change_7d'] as const) {
    [...ranked]
      .sort((a, b) => descNullsLast(a[key], b[key]) || a.rank! - b.rank!)
      .forEach((r, i) => (r[key === 'change_24h' ? 'change_rank_24h' : 'change_rank_7d'] = i + 1));
  }
  return new Map(rows.map((r) => [r.coin.id, r]));
}

/** Compares two nullable numbers ascending with nulls last (a negative result puts a first). */
export function nullsLast(a: number | null, b: number | null) {
  if (a === null && b === null) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a - b;
}

/** Compares two nullable numbers descending with nulls last. */
export function descNullsLast(a: number | null, b: number | null) {
  if (a === null || b === null) return nullsLast(a, b);
  return b - a;
}

const SORT_VALUE = {
  marketcap: (e: Expected) => e.marketcap,
  rank: (e: Expected) => e.rank,
  price: (e: Expected) => (e.price === null ? null : Number(e.price)),
  volume_24h: (e: Expected) => e.volume_24h,
  change_24h: (e: Expected) => e.change_24h,
  change_7d: (e: Expected) => e.change_7d,
};

/** The order of the coin lists: the sort fields (nulls last both ways), then rank, marketcap desc and id. */
export function listOrder(rows: Expected[], sort: string[] = []) {
  return [...rows].sort((a, b) => {
    for (const token of sort) {
      const desc = token.startsWith('-');
      const value = SORT_VALUE[token.replace(/^-/, '') as keyof typeof SORT_VALUE];
      const [x, y] = [value(a), value(b)];
      const order = desc ? descNullsLast(x, y) : nullsLast(x, y);
      if (order) return order;
    }
    return nullsLast(a.rank, b.rank) || descNullsLast(a.marketcap, b.marketcap) || a.coin.id - b.coin.id;
  });
}

/** The list row the API must return for a coin. */
export function listRow(e: Expected, fixture: Fixture) {
  const c = e.coin;
  return {
    id: c.id,
    slug: c.slug,
    name: c.name,
    symbol: c.symbol,
    type: c.type,
    status: c.status,
    rank: e.rank,
    price: e.price,
    marketcap: e.marketcap,
    volume_24h: e.volume_24h,
    change_24h: e.change_24h,
    change_7d: e.change_7d,
    change_rank_24h: e.change_rank_24h,
    change_rank_7d: e.change_rank_7d,
    dominance: e.dominance,
    circulating_supply: c.circulating,
    logo: `https://example.com/${c.slug}.png`,
    listed_at: c.status === 'active' ? iso(fixture.now - c.listedHoursAgo * HOUR) : null,
    last_updated: c.prices ? iso(fixture.barTimes[2]) : null,
  };
}

export { DAY, HOUR, MINUTE };
