// Exchanges group: the ranked venue list, a venue's detail, trust score, history, sparkline, markets
// and listed coins. SQL: sql/functions/420_api_exchanges.sql, 430_api_markets.sql.
import { MARKET_CACHE } from '../http/cache.ts';
import { z } from 'zod';
import { pageAnswer, paginationQuery } from '../http/envelope.ts';
import { defineRoute } from '../http/routes.ts';
import { day, decimal, envelope, int, number, pageOf, resource, text, timestamp, url } from '../http/schemas.ts';
import { capCombined, query, slugParams } from '../http/validation.ts';
import { coinListPage, coinRow, listQuery as coinListQuery, listOrNull } from './coins.ts';
import { tickerHandler, tickerPage, tickerQuery } from './markets.ts';

// The Markets group travels with this one (they share the ticker list): one import for src/api/index.ts.
export { marketRoutes } from './markets.ts';

const SORTABLE = ['volume', 'rank', 'volume_dominance', 'change_24h', 'change_7d', 'pairs', 'assets'] as const;
const PERIODS = ['24h', '7d', '30d', '60d', '90d', '180d', '365d'] as const;
const DEFAULT_PER_PAGE = 100;

const count = () => query.int(0, 1_000_000_000);
const listQuery = z
  .object({
    ...paginationQuery,
    type: z.enum(['cex', 'dex']).optional().describe('cex or dex, as derived from the venue taxonomy; venues of unknown type match neither.'),
    search: z.string().max(100).optional().describe('Case-insensitive substring of the venue name or slug.'),
    min_pairs: count().optional(),
    max_pairs: count().optional(),
    min_assets: count().optional(),
    max_assets: count().optional(),
    min_volume: query.decimal().optional().describe('Inclusive lower bound of the 24h USD volume.'),
    max_volume: query.decimal().optional(),
    ids: query.intList(1000).optional().describe('CSV of exchange ids; ids and slugs take at most 100 selectors combined.'),
    slugs: query.slugList('exchange', 2000).optional().describe('CSV of exchange slugs.'),
    sort: query.sort(SORTABLE, 100).optional().describe(`Comma-separated fields, - for descending, nulls last: ${SORTABLE.join(', ')}. Default: rank.`),
  })
  .superRefine(capCombined(['ids', 'slugs'], 100));

// Response shapes (api.exchange_rows / exchange_detail / exchange_trust_score / exchange_history /
// exchange_sparkline). An unranked venue (inactive, or no volume in 24 hours) has no rank,
// dominance or changes: null, never an invented 0.
const pct = (what: string) => number(`${what}, percent.`).nullable();
const exchangeFields = {
  id: int(),
  slug: text(),
  name: text(),
  type: z.enum(['cex', 'dex']).nullable().describe('Derived from the taxonomy; null when unknown or hybrid.'),
  rank: int('By 24h USD volume; null for an unranked venue.').nullable(),
  volume_24h: number('24h USD volume (0 without markets).'),
  volume_dominance: pct('Share of the 24h volume of all venues'),
  change_24h: pct('Change of the 24h volume over 24 hours'),
  change_7d: pct('Change of the 24h volume over 7 days'),
  change_rank_24h: int('Places gained in 24 hours.').nullable(),
  change_rank_7d: int('Places gained in 7 days.').nullable(),
  pairs: int(),
  assets: int(),
  logo: url(),
  last_updated: timestamp().nullable(),
};
const exchangeRow = resource('ExchangeListItem', z.object(exchangeFields));
const exchangeDetail = resource('Exchange', z.object({
  ...exchangeFields,
  status: z.enum(['active', 'inactive']),
  tickers: int(),
  established: day('Founding date, year-accurate.').nullable(),
  location: text().nullable(),
  website: url().nullable(),
  taxonomy: z.array(text()).describe('Classification terms, e.g. centralized, spot, derivatives.'),
  verified: z.boolean().describe('false: a venue read through a ccxt id beyond the supported ten, whose formats were never verified on the replay (unverified); true otherwise.'),
}));
// The reference's 13 factors, each 0-10 (weights: market.exchange_trust_score).
const factor = () => number().min(0).max(10);
const trustBreakdown = z.object({
  rank: factor(), volume: factor(), age: factor(), volume_trend: factor(), stability: factor(), rank_stability: factor(),
  ticker_health: factor(), pairs: factor(), community: factor(), assets: factor(), dominance: factor(),
  market_breadth: factor(), transparency: factor(),
});
const trustScore = resource('ExchangeTrustScore', z.object({
  exchange: text('The venue slug.'),
  score: number('0-10; null for an unranked venue.').min(0).max(10).nullable(),
  breakdown: trustBreakdown.nullable().describe('The factors of the score, each 0-10; null for an unranked venue.'),
}));
const historyRow = z.object({
  time: timestamp(),
  volume_24h: number('24h USD volume.').nullable(),
  volume_dominance: pct('Share of the 24h volume of all venues'),
  rank: int().nullable(),
  pairs: int().nullable(),
  assets: int().nullable(),
});
const sparkline = z.object({
  points: z.array(z.object({ time: timestamp(), volume: number('24h USD volume.') })).max(480),
  low: number().nullable(),
  high: number().nullable(),
  change: number('Percent from the first to the last reading.').nullable(),
});

export const exchangeRoutes = [
  defineRoute({
    method: 'get', path: '/exchanges', cache: MARKET_CACHE, operationId: 'listExchanges', tag: 'Exchanges', plan: 'free', query: listQuery,
    response: pageOf(exchangeRow),
    summary: 'Ranked venues with 24h USD volume, volume dominance, volume and rank changes, pair and asset counts; filters, selectors and a multi-field sort, paginated.',
    handler: async ({ query: q, ctx, deps: { sql } }) => {
      const perPage = q.per_page ?? DEFAULT_PER_PAGE;
      const [row] = await sql<{ page: { total: number; data: unknown[] } }[]>`
        select api.exchange_list(
          p_type => ${q.type ?? null},
          p_search => ${q.search ?? null},
          p_min_pairs => ${q.min_pairs ?? null}::int,
          p_max_pairs => ${q.max_pairs ?? null}::int,
          p_min_assets => ${q.min_assets ?? null}::int,
          p_max_assets => ${q.max_assets ?? null}::int,
          p_min_volume => ${q.min_volume ?? null}::numeric,
          p_max_volume => ${q.max_volume ?? null}::numeric,
          p_ids => ${listOrNull(q.ids)}::int[],
          p_slugs => ${listOrNull(q.slugs)}::text[],
          p_sort => ${listOrNull(q.sort)}::text[],
          p_page => ${q.page},
          p_per_page => ${perPage}
        ) as page`;
      return pageAnswer(ctx, q.page, perPage, row!.page);
    },
  }),
  defineRoute({
    method: 'get', path: '/exchanges/{slug}', cache: MARKET_CACHE, operationId: 'getExchangeDetail', tag: 'Exchanges', plan: 'free', params: slugParams('exchange'),
    response: envelope(exchangeDetail),
    summary: 'Venue detail: type (cex, dex or null, from the taxonomy), rank, 24h volume and dominance, changes, pairs, assets, established, location, website, verified.',
    handler: async ({ params: { slug }, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select api.exchange_detail(${slug}) as data`;
      return { data: row!.data };
    },
  }),
  defineRoute({
    method: 'get', path: '/exchanges/{slug}/trust-score', cache: MARKET_CACHE, operationId: 'getExchangeTrustScore', tag: 'Exchanges', plan: 'free', params: slugParams('exchange'),
    response: envelope(trustScore),
    summary: 'Trust score 0-10, the weighted mean of a 13-factor breakdown (rank, volume, age, volume trend and stability, rank stability, ticker health, pairs, community, assets, dominance, market breadth, transparency), each 0-10; null for an unranked venue.',
    handler: async ({ params: { slug }, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select api.exchange_trust_score(${slug}) as data`;
      return { data: row!.data };
    },
  }),
  defineRoute({
    method: 'get', path: '/exchanges/{slug}/history', cache: MARKET_CACHE, operationId: 'exchangeHistory', tag: 'Exchanges', plan: 'free', params: slugParams('exchange'),
    response: envelope(z.array(historyRow), z.object({ exchange: text(), interval: z.enum(['minutely', 'hourly', 'daily']), count: int(), retention: text() })),
    query: z.object({
      interval: z.enum(['minutely', 'hourly', 'daily']).optional().default('daily'),
      start: query.instant().optional().describe('ISO 8601 date or date-time lower bound (UTC unless an offset is given).'),
      end: query.instant({ endOfDay: true }).optional().describe('ISO 8601 date or date-time upper bound; a date-only value means through the end of that day.'),
      limit: query.int(1, 2000).optional().default(1000).describe('The most recent N rows of the window, returned oldest first.'),
    }),
    summary: 'Venue snapshots (24h volume, dominance, rank, pairs, assets) at an interval; retention: minutely 8 days, hourly 6 months, daily forever.',
    handler: async ({ params: { slug }, query: q, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown[]; retention: string }[]>`
        select coalesce(json_agg(h order by h.time), '[]') as data,
          (select i.retention from api.exchange_history_intervals i where i.name = ${q.interval}) as retention
        from api.exchange_history(${slug}, ${q.interval}, ${q.start ?? null}::text::timestamptz, ${q.end ?? null}::text::timestamptz, ${q.limit}) h`;
      return { data: row!.data, meta: { exchange: slug, interval: q.interval, count: row!.data.length, retention: row!.retention } };
    },
  }),
  defineRoute({
    method: 'get', path: '/exchanges/{slug}/sparkline', cache: MARKET_CACHE, operationId: 'exchangeSparkline', tag: 'Exchanges', plan: 'free', params: slugParams('exchange'),
    response: envelope(sparkline, z.object({ exchange: text(), period: z.enum(PERIODS), count: int() })),
    query: z.object({ period: z.enum(PERIODS).optional().default('7d') }),
    summary: 'The venue\'s 24h-volume series over the period: at most 480 points, oldest first, with the true low, high and percent change.',
    handler: async ({ params: { slug }, query: { period }, deps: { sql } }) => {
      const [row] = await sql<{ data: { points: unknown[] } }[]>`select api.exchange_sparkline(${slug}, ${period}) as data`;
      return { data: row!.data, meta: { exchange: slug, period, count: row!.data.points.length } };
    },
  }),
  defineRoute({
    method: 'get', path: '/exchanges/{slug}/tickers', cache: MARKET_CACHE, operationId: 'exchangeMarkets', tag: 'Exchanges', plan: 'free',
    params: slugParams('exchange'), query: tickerQuery, response: tickerPage,
    summary: 'The venue\'s tickers (its markets), with the ticker list\'s filters and sort, paginated.',
    handler: tickerHandler('exchange'),
  }),
  defineRoute({
    method: 'get', path: '/exchanges/{slug}/assets', cache: MARKET_CACHE, operationId: 'exchangeCoins', tag: 'Exchanges', plan: 'free',
    params: slugParams('exchange'), query: coinListQuery, response: pageOf(coinRow),
    summary: 'Coins the venue lists (as base or quote), in the coin list\'s row shape, filters and sort, paginated.',
    handler: (input) => coinListPage(input, 'all', input.deps.sql`market.exchange_coin_ids(${input.params.slug})`),
  }),
];
