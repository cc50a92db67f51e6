// Sentiment group: Fear & Greed and Bull/Bear (15-minute snapshots, market-wide or per coin),
// altseason with its daily history, the market-wide indicator tally (Pro) and community votes.
// Everything is computed in SQL from the project's own data: sql/functions/450..480, docs/sentiment.md.
import { z } from 'zod';
import { defineRoute } from '../http/routes.ts';
import { query } from '../http/validation.ts';

const tag = 'Sentiment';
const slugParams = z.object({ slug: z.string().min(1).max(200).describe('The coin slug.') });
const scopeQuery = z.object({
  coin: z.string().regex(/^[a-z0-9-]{1,120}$/, 'Must be a coin slug.').optional().describe('Coin slug for a per-coin reading; omit for the market.'),
});

export const sentimentRoutes = [
  defineRoute({
    method: 'get', path: '/sentiment/fear-greed', operationId: 'fearGreedIndex', tag, plan: 'free', query: scopeQuery,
    summary: 'The current Fear & Greed reading (15-minute snapshot, no history): score -100..+100, index 0-100 with its band (regime), and the 7d/30d/90d intervals with their component breakdown (volatility, momentum, volume, dominance, breadth).',
    handler: async ({ query: q, deps: { sql } }) => {
      const [row] = await sql<{ data: Record<string, unknown> }[]>`select api.fear_greed(${q.coin ?? null}) as data`;
      return { data: row!.data, meta: { scope: row!.data.scope, updated_at: row!.data.updated_at } };
    },
  }),
  defineRoute({
    method: 'get', path: '/sentiment/bull-bear', operationId: 'bullBearIndex', tag, plan: 'free', query: scopeQuery,
    summary: 'The current Bull/Bear reading (15-minute snapshot, no history): bull and bear percentages, score = bull - bear and regime, for the market or a coin.',
    handler: async ({ query: q, deps: { sql } }) => {
      const [row] = await sql<{ data: Record<string, unknown> }[]>`select api.bull_bear(${q.coin ?? null}) as data`;
      return { data: row!.data, meta: { scope: row!.data.scope, updated_at: row!.data.updated_at } };
    },
  }),
  defineRoute({
    method: 'get', path: '/sentiment/altseason', operationId: 'altseasonIndex', tag, plan: 'free',
    query: z.object({
      days: query.int(0, 365).optional().default(0).describe('Days of daily history to include (1-365; 0 or omitted: current reading only).'),
    }),
    summary: 'The altseason index (how many of the top-100 altcoins outperformed bitcoin over 90 days) of the latest day, with `days` of daily history.',
    handler: async ({ query: q, deps: { sql } }) => {
      const [row] = await sql<{ data: { history: unknown[] } }[]>`select api.altseason(${q.days}) as data`;
      return { data: row!.data, meta: { days: q.days, count: row!.data.history.length } };
    },
  }),
  defineRoute({
    method: 'get', path: '/sentiment/indicators', operationId: 'marketIndicatorTally', tag, plan: 'pro',
    summary: 'The market-wide technical tally (15-minute snapshot): 25 indicator categories over the coins ranked 1-100, each with state, score (-100..+100) and data, and a summary.',
    handler: async ({ deps: { sql } }) => {
      const [row] = await sql<{ data: { categories: unknown[]; summary: unknown; coins: number; updated_at: string } }[]>`
        select api.market_indicator_tally() as data`;
      const { categories, ...meta } = row!.data;
      return { data: categories, meta };
    },
  }),
  defineRoute({
    method: 'get', path: '/coins/{slug}/votes', operationId: 'communityVoteTallies', tag, plan: 'free', params: slugParams,
    // a vote just cast shows in the tally: read where it was written
    reads: 'primary',
    summary: "The coin's bullish/bearish community vote tallies over the rolling 24 hours.",
    handler: async ({ params: { slug }, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select api.coin_votes(${slug}) as data`;
      return { data: row!.data, meta: { window: '24h' } };
    },
  }),
  defineRoute({
    method: 'post', path: '/coins/{slug}/votes', operationId: 'castASentimentVote', tag, plan: 'free', params: slugParams,
    body: z.object({ vote: z.enum(['bullish', 'bearish']).describe('Your sentiment: bullish or bearish.') }),
    summary: "Casts the key owner's vote on the coin: one per owner and coin per rolling 24 hours; voting again inside the window changes that vote.",
    handler: async ({ params: { slug }, body: { vote }, key, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select app.cast_coin_vote(${key.owner}, ${slug}, ${vote}) as data`;
      return { data: row!.data, meta: { window: '24h' } };
    },
  }),
];
