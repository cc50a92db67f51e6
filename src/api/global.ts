// Global Market group: the market overview, the top-100 heatmap and the total marketcap/volume
// history. SQL: sql/functions/470_api_global.sql.
import { z } from 'zod';
import { defineRoute } from '../http/routes.ts';

const tag = 'Global Market';
const PERIODS = ['24h', '7d', '30d', 'all'] as const;

export const globalRoutes = [
  defineRoute({
    method: 'get', path: '/global', operationId: 'globalMarketSnapshot', tag, plan: 'free',
    summary: 'Market overview: total marketcap and 24h volume, counts of cryptocurrencies, tokens, exchanges, pairs and markets, BTC/ETH dominance with the rank-based top 3, and the market Fear & Greed reading.',
    handler: async ({ deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select api.global_market() as data`;
      return { data: row!.data, meta: {} };
    },
  }),
  defineRoute({
    method: 'get', path: '/global/heatmap', operationId: 'marketHeatmap', tag, plan: 'free',
    summary: 'The coins ranked 1-100 for a treemap, with total marketcap and volume, dominance and the market Fear & Greed index (meta.fear_greed, 0-100).',
    handler: async ({ deps: { sql } }) => {
      const [row] = await sql<{ body: unknown }[]>`select api.market_heatmap() as body`;
      return row!.body;
    },
  }),
  defineRoute({
    method: 'get', path: '/global/history/{metric}', operationId: 'globalMarketcapVolumeHistory', tag, plan: 'free',
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
