// Sentiment group: Fear & Greed and Bull/Bear (15-minute snapshots, market-wide or per coin),
// altseason with its daily history, the market-wide indicator tally (Pro) and community votes.
// Everything is computed in SQL from the project's own data: sql/functions/450..480, docs/sentiment.md.
import { INDICATORS_CACHE, SENTIMENT_CACHE } from '../http/cache.ts';
import { z } from 'zod';
import { defineRoute } from '../http/routes.ts';
import { day, envelope, int, number, resource, text, timestamp } from '../http/schemas.ts';
import { query, slugParams } from '../http/validation.ts';
import { slug } from '../validators.ts';

const tag = 'Sentiment';
const scopeQuery = z.object({
  coin: slug('coin').optional().describe('Coin slug for a per-coin reading; omit for the market.'),
});


// Response shapes: sql/functions/450_sentiment.sql builds the readings, 455/460/480 serve them.
const score = () => int('-100..+100.');
const fearGreedRegime = z.enum(['extreme fear', 'fear', 'neutral', 'greed', 'extreme greed']);
// a component is null when the data does not allow one (market.fear_greed_components)
const component = () => int().nullable();
const fearGreedInterval = z.object({
  score: score(),
  index: int('0-100.'),
  regime: fearGreedRegime,
  breakdown: z.object({ volatility: component(), momentum: component(), volume: component(), dominance: component(), breadth: component() }),
  score_normalized: score(),
});
const FearGreedReading = resource('FearGreedReading', z.object({
  scope: text('market, or the coin slug.'),
  score: score(),
  index: int('0-100, for display.'),
  regime: fearGreedRegime,
  // a window without any component has no interval; the 7-day one is the main reading
  intervals: z.object({ '7d': fearGreedInterval, '30d': fearGreedInterval.optional(), '90d': fearGreedInterval.optional() }),
  updated_at: timestamp(),
}));
const BullBearReading = resource('BullBearReading', z.object({
  scope: text('market, or the coin slug.'),
  bull: int('Percent.'),
  bear: int('Percent.'),
  score: score(),
  regime: z.enum(['bull', 'bear', 'neutral']),
  window_days: int(),
  coins: int('Coins weighed (market scope); null for a coin.').nullable(),
  updated_at: timestamp(),
}));
const snapshotMeta = z.object({ scope: text(), updated_at: timestamp() });
const season = z.enum(['altcoin season', 'bitcoin season', 'neutral']);
const altseasonDay = { date: day(), index: int('0-100.'), season, outperformers: int(), coins: int() };
const Altseason = resource('Altseason', z.object({
  ...altseasonDay,
  look_back_days: int(),
  updated_at: timestamp(),
  history: z.array(z.object(altseasonDay)),
}));
const tallyState = z.enum(['bullish', 'bearish', 'neutral', 'overbought', 'oversold']);
// market.indicator_tally: the data of a category depends on what it counts or reads
const tallyCategory = <C extends [string, ...string[]]>(categories: C, data: z.ZodRawShape) =>
  z.object({ category: z.enum(categories), state: tallyState, score: score().nullable(), data: z.object(data) });
const TallyCategory = resource('IndicatorTallyCategory', z.union([
  tallyCategory(['rsi', 'stoch-rsi', 'mfi', 'williams-r', 'cci', 'macd', 'sma', 'vwap', 'obv', 'cmf', 'adx', 'price-volatility',
    'volume-volatility', 'sma-200', 'golden-cross', 'breadth-24h', 'breadth-7d', 'highs-lows'], {
    coins: int(), bullish: int(), bearish: int(), neutral: int(), overbought: int(), oversold: int(),
    median: number('Median of the coins’ values; null without any.').nullable(),
  }),
  tallyCategory(['market-momentum', 'market-volatility', 'market-volume', 'btc-dominance'], { value: component(), window_days: int() }),
  tallyCategory(['fear-greed'], { score: score(), index: int(), regime: fearGreedRegime }),
  tallyCategory(['bull-bear'], { bull: int(), bear: int(), regime: z.enum(['bull', 'bear', 'neutral']) }),
  tallyCategory(['altseason'], { index: int(), season, date: day() }),
]));
const votes = { coin: text('The coin slug.'), bullish: int(), bearish: int(), total: int() };
const voteMeta = z.object({ window: z.literal('24h') });

export const sentimentRoutes = [
  defineRoute({
    method: 'get', path: '/sentiment/fear-greed', cache: SENTIMENT_CACHE, operationId: 'fearGreedIndex', tag, plan: 'free', query: scopeQuery,
    response: envelope(FearGreedReading, snapshotMeta),
    summary: 'The current Fear & Greed reading (15-minute snapshot, no history): score -100..+100, index 0-100 with its band (regime), and the 7d/30d/90d intervals with their component breakdown (volatility, momentum, volume, dominance, breadth).',
    handler: async ({ query: q, deps: { sql } }) => {
      const [row] = await sql<{ data: Record<string, unknown> }[]>`select api.fear_greed(${q.coin ?? null}) as data`;
      return { data: row!.data, meta: { scope: row!.data.scope, updated_at: row!.data.updated_at } };
    },
  }),
  defineRoute({
    method: 'get', path: '/sentiment/bull-bear', cache: SENTIMENT_CACHE, operationId: 'bullBearIndex', tag, plan: 'free', query: scopeQuery,
    response: envelope(BullBearReading, snapshotMeta),
    summary: 'The current Bull/Bear reading (15-minute snapshot, no history): bull and bear percentages, score = bull - bear and regime, for the market or a coin.',
    handler: async ({ query: q, deps: { sql } }) => {
      const [row] = await sql<{ data: Record<string, unknown> }[]>`select api.bull_bear(${q.coin ?? null}) as data`;
      return { data: row!.data, meta: { scope: row!.data.scope, updated_at: row!.data.updated_at } };
    },
  }),
  defineRoute({
    method: 'get', path: '/sentiment/altseason', cache: SENTIMENT_CACHE, operationId: 'altseasonIndex', tag, plan: 'free',
    query: z.object({
      days: query.int(0, 365).optional().default(0).describe('Days of daily history to include (1-365; 0 or omitted: current reading only).'),
    }),
    response: envelope(Altseason, z.object({ days: int(), count: int() })),
    summary: 'The altseason index (how many of the top-100 altcoins outperformed bitcoin over 90 days) of the latest day, with `days` of daily history.',
    handler: async ({ query: q, deps: { sql } }) => {
      const [row] = await sql<{ data: { history: unknown[] } }[]>`select api.altseason(${q.days}) as data`;
      return { data: row!.data, meta: { days: q.days, count: row!.data.history.length } };
    },
  }),
  defineRoute({
    method: 'get', path: '/sentiment/indicators', cache: INDICATORS_CACHE, operationId: 'marketIndicatorTally', tag, plan: 'pro',
    response: envelope(z.array(TallyCategory), z.object({
      summary: z.object({ score: score(), state: tallyState, bullish: int(), bearish: int(), neutral: int() }),
      coins: int('Coins ranked 1-100.'),
      updated_at: timestamp(),
    })),
    summary: 'The market-wide technical tally (15-minute snapshot): 25 indicator categories over the coins ranked 1-100, each with state, score (-100..+100) and data, and a summary.',
    handler: async ({ deps: { sql } }) => {
      const [row] = await sql<{ data: { categories: unknown[]; summary: unknown; coins: number; updated_at: string } }[]>`
        select api.market_indicator_tally() as data`;
      const { categories, ...meta } = row!.data;
      return { data: categories, meta };
    },
  }),
  defineRoute({
    method: 'get', path: '/coins/{slug}/votes', operationId: 'communityVoteTallies', tag, plan: 'free', params: slugParams('coin'),
    // a vote just cast shows in the tally: read where it was written
    reads: 'primary',
    response: envelope(resource('CoinVotes', z.object(votes)), voteMeta),
    summary: "The coin's bullish/bearish community vote tallies over the rolling 24 hours.",
    handler: async ({ params: { slug }, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select api.coin_votes(${slug}) as data`;
      return { data: row!.data, meta: { window: '24h' } };
    },
  }),
  defineRoute({
    method: 'post', path: '/coins/{slug}/votes', operationId: 'castASentimentVote', tag, plan: 'free', params: slugParams('coin'),
    body: z.object({ vote: z.enum(['bullish', 'bearish']).describe('Your sentiment: bullish or bearish.') }),
    response: envelope(z.object({ ...votes, your_vote: z.enum(['bullish', 'bearish']) }), voteMeta),
    summary: "Casts the key owner's vote on the coin: one per owner and coin per rolling 24 hours; voting again inside the window changes that vote.",
    handler: async ({ params: { slug }, body: { vote }, key, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select app.cast_coin_vote(${key.owner}, ${slug}, ${vote}) as data`;
      return { data: row!.data, meta: { window: '24h' } };
    },
  }),
];
