// Global Market group: the market overview, the top-100 heatmap and the total marketcap/volume
// history. SQL: sql/functions/470_api_global.sql.
import { MARKET_CACHE } from '../http/cache.ts';
import { z } from 'zod';
import { defineRoute } from '../http/routes.ts';
import { decimal, envelope, int, number, resource, text, timestamp, url } from '../http/schemas.ts';

const tag = 'Global Market';
const PERIODS = ['24h', '7d', '30d', 'all'] as const;

// Response shapes (api.global_market, api.market_heatmap, api.global_history). Totals are sums over
// the ranked coins: null before any coin has a price (an unknown value is null, never 0).
const usd = (description: string) => number(`${description}, USD.`).nullable();
const dominancePct = (coin: string) => number(`${coin} share of the total marketcap, percent.`).nullable();
const fearGreedIndex = int('The market Fear & Greed index 0-100; null before the first refresh.').min(0).max(100);
const globalMarket = resource('GlobalMarket', z.object({
  total_marketcap: usd('Total marketcap'),
  total_volume_24h: usd('Total 24h volume'),
  total_cryptocurrencies: int('Active coins and tokens.'),
  total_tokens: int('Active tokens.'),
  total_exchanges: int(), total_pairs: int(), total_markets: int(),
  dominance: z.object({
    btc: dominancePct('Bitcoin'), eth: dominancePct('Ethereum'),
    top3: z.array(z.object({ symbol: text(), domination: number('Percent; null for a coin without circulating supply.').nullable() }))
      .max(3).describe('The coins ranked 1-3, by rank.'),
  }),
  fear_greed: z.object({
    score: int('-100..+100.').min(-100).max(100), index: fearGreedIndex, regime: text('Band of the index.'),
  }).nullable().describe('The market reading; null before the first refresh.'),
  last_updated: timestamp('The newest price time.').nullable(),
}));
const heatmapTile = resource('HeatmapTile', z.object({
  slug: text(), name: text(), symbol: text(), rank: int(), price: decimal(),
  marketcap: number('USD; coins without one are left out.'), volume_24h: number().nullable(),
  change_24h: number('Percent.').nullable(), change_7d: number('Percent; null with less than 7 days of history.').nullable(),
  dominance: number('Percent.').nullable(), logo: url(),
}));
const heatmap = envelope(z.array(heatmapTile).max(100), z.object({
  total_marketcap: usd('Total marketcap'),
  total_volume_24h: usd('Total 24h volume'),
  dominance: z.object({ btc: dominancePct('Bitcoin'), eth: dominancePct('Ethereum'), top3: number('Sum of the top three, percent.').nullable() }),
  fear_greed: fearGreedIndex.nullable(),
}));
const historyRow = (metric: 'marketcap' | 'volume') => z.object({ time: timestamp(), [metric]: number(`Total ${metric}, USD.`) });

export const globalRoutes = [
  defineRoute({
    method: 'get', path: '/global', cache: MARKET_CACHE, operationId: 'globalMarketSnapshot', tag, plan: 'free',
    response: envelope(globalMarket, z.object({})),
    summary: 'Market overview: total marketcap and 24h volume, counts of cryptocurrencies, tokens, exchanges, pairs and markets, BTC/ETH dominance with the rank-based top 3, and the market Fear & Greed reading.',
    handler: async ({ deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select api.global_market() as data`;
      return { data: row!.data, meta: {} };
    },
  }),
  defineRoute({
    method: 'get', path: '/global/heatmap', cache: MARKET_CACHE, operationId: 'marketHeatmap', tag, plan: 'free', response: heatmap,
    summary: 'The coins ranked 1-100 for a treemap, with total marketcap and volume, dominance and the market Fear & Greed index (meta.fear_greed, 0-100).',
    handler: async ({ deps: { sql } }) => {
      const [row] = await sql<{ body: unknown }[]>`select api.market_heatmap() as body`;
      return row!.body;
    },
  }),
  defineRoute({
    method: 'get', path: '/global/history/{metric}', cache: MARKET_CACHE, operationId: 'globalMarketcapVolumeHistory', tag, plan: 'free',
    response: envelope(
      z.array(z.union([historyRow('marketcap'), historyRow('volume')])),
      z.object({ metric: z.enum(['marketcap', 'volume']), period: z.enum(PERIODS), count: int() }),
    ),
    params: z.object({ metric: z.enum(['marketcap', 'volume']).describe('marketcap or volume.') }),
    query: z.object({
      period: z.enum(PERIODS).optional().default('24h').describe('24h (half-hourly), 7d (hourly), 30d or all (daily); default 24h.'),
    }),
    summary: 'Total-market series of marketcap or volume (USD) over the period, oldest first: 24h half-hourly, 7d hourly, 30d and all daily.',
    handler: async ({ params: { metric }, query: { period }, deps: { sql } }) => {
      const rows = await sql`select time, ${sql(metric)} from api.global_history(${period})`;
      return { data: [...rows], meta: { metric, period, count: rows.length } };
    },
  }),
];
