// Venues and markets for the Markets and Exchanges tests, on top of the coin fixture: five venues
// (a CEX, a DEX, one of unknown type, an inactive one and an active one without markets), six
// tickers with known figures, and venue history 24 hours and 7 days back. What the API must make
// of them is computed here from the same numbers.
import { Decimal } from 'decimal.js';
import type { TestDatabase } from '../helpers/database.ts';
import { iso, loadCoinFixture, type Fixture } from './fixtures.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export interface FixtureVenue {
  id: number;
  slug: string;
  name: string;
  taxonomy: string[];
  type: 'cex' | 'dex' | null;
  status: 'active' | 'inactive';
}

export const VENUES: FixtureVenue[] = [
  { id: 201, slug: 'big-cex', name: 'Big CEX', taxonomy: ['centralized', 'spot'], type: 'cex', status: 'active' },
  { id: 202, slug: 'amm-dex', name: 'AMM Swap', taxonomy: ['amm', 'ethereum'], type: 'dex', status: 'active' },
  { id: 203, slug: 'mystery', name: 'Mystery Desk', taxonomy: ['otc'], type: null, status: 'active' },
  { id: 204, slug: 'closed', name: 'Closed Exchange', taxonomy: ['centralized'], type: 'cex', status: 'inactive' },
  { id: 205, slug: 'idle-dex', name: 'Idle DEX', taxonomy: ['dex'], type: 'dex', status: 'active' },
];

export interface FixtureTicker {
  id: number;
  exchange: number;
  base: number;
  quote: string;
  quoteCoin: number | null;
  instrument: string;
  symbol: string;
  price: string;
  priceUsd: string;
  bid: string;
  ask: string;
  spread: number;
  volume: string;
  volumeUsd: string;
  change: number | null;
}

const ticker = (
  id: number, exchange: number, base: number, quote: string, quoteCoin: number | null, instrument: string, symbol: string,
  price: string, priceUsd: string, spread: number, volumeUsd: string, change: number | null,
): FixtureTicker => ({
  id, exchange, base, quote, quoteCoin, instrument, symbol, price, priceUsd,
  bid: new Decimal(price).mul(0.999).toFixed(), ask: new Decimal(price).mul(1.001).toFixed(), spread,
  volume: new Decimal(volumeUsd).div(priceUsd).toDecimalPlaces(8).toFixed(), volumeUsd, change,
});

// coins (./fixtures.ts): 101 alpha ALP, 102 beta BET, 103 gamma GAM, 112 mu MU
export const TICKERS: FixtureTicker[] = [
  ticker(301, 201, 101, 'USD', null, 'spot', 'ALPUSD', '110', '110', 0.2, '1000000', 10),
  ticker(302, 201, 101, 'USD', null, 'swap', 'ALP-USD-SWAP', '110.5', '110.5', 0.05, '2000000', 9),
  ticker(303, 201, 112, 'BET', 102, 'spot', 'MUBET', '0.5', '15', 0.4, '50000', -2),
  ticker(304, 202, 101, 'USD', null, 'spot', 'ALP/USD', '109', '109', 0.5, '300000', 11),
  ticker(305, 202, 103, 'USD', null, 'spot', 'GAM/USD', '2.5', '2.5', 1.2, '100', null),
  ticker(306, 203, 102, 'USD', null, 'spot', 'BET_USD', '30', '30', 0.3, '7000', -25),
];

/** pair ids: one per base and quote */
export const PAIRS = [
  { id: 401, base: 101, quote: 'USD', quoteCoin: null, symbol: 'ALP/USD' },
  { id: 402, base: 112, quote: 'BET', quoteCoin: 102, symbol: 'MU/BET' },
  { id: 403, base: 103, quote: 'USD', quoteCoin: null, symbol: 'GAM/USD' },
  { id: 404, base: 102, quote: 'USD', quoteCoin: null, symbol: 'BET/USD' },
];
export const pairOf = (t: FixtureTicker) => PAIRS.find((p) => p.base === t.base && p.quote === t.quote)!;

/** venue snapshots written into the past: [venue, hours ago, 24h volume, rank] */
export const HISTORY: [number, number, string, number][] = [
  [201, 24, '2000000', 1],
  [202, 24, '400000', 3],
  [201, 24 * 7, '6100000', 2],
];

export interface VenueFixture extends Fixture {}

export async function loadVenueFixture(db: TestDatabase): Promise<VenueFixture> {
  const fixture = await loadCoinFixture(db);
  const { sql } = db;
  for (const v of VENUES) {
    await sql`
      insert into market.exchanges (id, slug, name, taxonomy, status, established, location, website, source)
      values (${v.id}, ${v.slug}, ${v.name}, ${v.taxonomy}::text[], ${v.status}, '2017-07-14', 'Testland',
        ${`https://${v.slug}.example`}, 'api-test')`;
  }
  for (const p of PAIRS) {
    await sql`insert into market.pair_keys (id, base_coin_id, quote_symbol, quote_coin_id) values (${p.id}, ${p.base}, ${p.quote}, ${p.quoteCoin})`;
  }
  for (const t of TICKERS) {
    await sql`
      insert into market.tickers (id, exchange_id, pair_id, base_coin_id, quote_symbol, quote_coin_id, instrument, exchange_symbol,
        price, price_usd, bid, ask, spread, volume_base, volume_usd, change_24h, last_trade_at, updated_at)
      values (${t.id}, ${t.exchange}, ${pairOf(t).id}, ${t.base}, ${t.quote}, ${t.quoteCoin}, ${t.instrument}, ${t.symbol},
        ${t.price}::numeric, ${t.priceUsd}::numeric, ${t.bid}::numeric, ${t.ask}::numeric, ${t.spread}, ${t.volume}::numeric,
        ${t.volumeUsd}::numeric, ${t.change}, ${iso(fixture.now - 30_000)}::timestamptz,
        ${iso(fixture.now - (t.id - 300) * MINUTE)}::timestamptz)`;
  }
  for (const [venue, hoursAgo, volume, rank] of HISTORY) {
    await sql`
      insert into market.exchange_volumes (time, exchange_id, volume_24h, volume_dominance, rank, pairs, assets)
      values (${iso(fixture.now - hoursAgo * HOUR)}::timestamptz, ${venue}, ${volume}::numeric, 50, ${rank}, 1, 1)`;
  }
  await sql`select market.refresh_exchange_state(${iso(fixture.now)}::timestamptz)`;
  return fixture;
}

/** What market.exchange_state holds for each venue, worked out from the fixture. */
export interface ExpectedVenue {
  venue: FixtureVenue;
  volume: Decimal;
  rank: number | null;
  dominance: number | null;
  pairs: number;
  assets: number;
  tickers: number;
  change24h: number | null;
  change7d: number | null;
  changeRank24h: number | null;
  changeRank7d: number | null;
}


export function expectedVenues(): Map<number, ExpectedVenue> {
  const rows = VENUES.map((venue) => {
    const own = TICKERS.filter((t) => t.exchange === venue.id);
    const volume = own.reduce((sum, t) => sum.plus(t.volumeUsd), new Decimal(0));
    const assets = new Set(own.flatMap((t) => [t.base, ...(t.quoteCoin === null ? [] : [t.quoteCoin])])).size;
    return { venue, volume, assets, pairs: new Set(own.map((t) => pairOf(t).id)).size, tickers: own.length };
  });
  const ranked = rows.filter((r) => r.venue.status === 'active' && r.volume.gt(0)).sort((a, b) => b.volume.comparedTo(a.volume) || a.venue.id - b.venue.id);
  const total = ranked.reduce((sum, r) => sum.plus(r.volume), new Decimal(0));
  const past = (venue: number, hours: number) => HISTORY.find(([v, h]) => v === venue && h === hours);
  return new Map(
    rows.map((r) => {
      const rank = ranked.indexOf(r) + 1 || null;
      const before = past(r.venue.id, 24);
      const weekBefore = past(r.venue.id, 24 * 7);
      const change = (then: string | undefined) =>
        then === undefined ? null : r.volume.div(then).minus(1).mul(100).toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toNumber();
      return [
        r.venue.id,
        {
          venue: r.venue, volume: r.volume, rank, pairs: r.pairs, assets: r.assets, tickers: r.tickers,
          dominance: rank === null ? null : r.volume.div(total).mul(100).toDecimalPlaces(4, Decimal.ROUND_HALF_UP).toNumber(),
          change24h: change(before?.[2]),
          change7d: change(weekBefore?.[2]),
          changeRank24h: before && rank !== null ? before[3] - rank : null,
          changeRank7d: weekBefore && rank !== null ? weekBefore[3] - rank : null,
        },
      ];
    }),
  );
}
