// Coins group: the four paginated coin lists, trending coins, the coin detail and its time series.
// SQL: sql/functions/200_api_coins.sql, 210_api_coin_history.sql.
import { MARKET_CACHE } from '../http/cache.ts';
import type postgres from 'postgres';
import { z } from 'zod';
import { JsonRows, pageAnswer, paginationQuery } from '../http/envelope.ts';
import { defineRoute, type HandlerInput } from '../http/routes.ts';
import { day, decimal, envelope, int, number, pageOf, resource, text, timestamp, url } from '../http/schemas.ts';
import { capCombined, query, slugParams } from '../http/validation.ts';

const STATUSES = ['active', 'delisted', 'untracked', 'progressing', 'awaiting', 'preparing'] as const;
const SORTABLE = ['marketcap', 'rank', 'price', 'volume_24h', 'change_24h', 'change_7d'] as const;
const INTERVALS = ['minutely', 'half-hourly', 'hourly', 'daily'] as const;
const PERIODS = ['24h', '7d', '30d', '60d', '90d', '180d', '365d'] as const;
const DEFAULT_PER_PAGE = 100;

/** The coin selectors shared with the Prices group: ids, slugs and symbols, at most 100 combined. */
export const selectorFields = {
  ids: query.intList(1000).optional().describe('CSV of coin ids; ids, slugs and symbols take at most 100 selectors combined.'),
  slugs: query.slugList('coin', 2000).optional().describe('CSV of coin slugs.'),
  symbols: query.csv(1000).optional().describe('CSV of symbols, case-insensitive; a symbol shared by several coins selects the best-ranked active one.'),
};
export const capSelectors = capCombined(['ids', 'slugs', 'symbols'], 100);
/** An empty list (ids=) selects nothing in particular: the same as leaving the parameter out. */
export const listOrNull = <T>(list: T[] | undefined) => (list?.length ? list : null);

const listFields = {
  ...paginationQuery,
  type: z.enum(['coin', 'token']).optional(),
  status: z.enum(STATUSES).optional().describe('One listing status; default: all public statuses (active, delisted, untracked).'),
  search: z.string().max(100).optional().describe('Case-insensitive substring of the name, symbol or slug. Without `sort`, the ranked list shows an exact symbol, slug or name first, then prefixes, then other matches, each by rank.'),
  min_price: query.decimal().optional(),
  max_price: query.decimal().optional(),
  min_marketcap: query.decimal().optional(),
  max_marketcap: query.decimal().optional(),
  min_volume: query.decimal().optional(),
  max_volume: query.decimal().optional(),
  ...selectorFields,
  sort: query.sort(SORTABLE, 100).optional().describe(`Comma-separated fields, - for descending, nulls last: ${SORTABLE.join(', ')}.`),
};
/** The query of /coins, shared by every list in the coin row shape. */
export const listQuery = z.object(listFields).superRefine(capSelectors);
const moversQuery = z
  .object({ ...listFields, interval: z.enum(['24h', '7d']).optional().default('24h') })
  .superRefine(capSelectors);
/** A content language such as en, de or pt-BR (default en), normalised to the stored spelling; shared with the Editorial group. */
export const localeQuery = z
  .string()
  .regex(/^[A-Za-z]{2}([-_][A-Za-z]{2})?$/, 'Must be a locale such as en, de or pt-BR.')
  .transform((value) => (value.length === 2 ? value.toLowerCase() : `${value.slice(0, 2).toLowerCase()}-${value.slice(3).toUpperCase()}`))
  .optional()
  .default('en');

// Response shapes. Prices and supplies are decimal strings; marketcap, volumes, changes and dominance
// numbers (the spec's coin row); null where the figure is unknown (sql/functions/200_api_coins.sql).


const percent = (description: string) => number(description).nullable();

/** A row of the coin lists (api.coin_rows): /coins, recently-added, gainers, losers, and the exchange and wallet coin lists. */
export const coinRow = resource('Coin', z.object({
  id: int(), slug: text(), name: text(), symbol: text(),
  type: z.enum(['coin', 'token']),
  status: z.enum(STATUSES),
  rank: int('Rank by marketcap among active priced coins; null for others.').nullable(),
  price: decimal('USD price; null before the first price.').nullable(),
  marketcap: number('USD; null without a circulating supply.').nullable(),
  volume_24h: number('USD traded in the last 24 hours.'),
  change_24h: percent('Percent change over 24 hours; null without a price 24 hours old.'),
  change_7d: percent('Percent change over 7 days; null without a price 7 days old.'),
  change_rank_24h: int().nullable(),
  change_rank_7d: int().nullable(),
  dominance: percent('Percent share of the total marketcap of ranked coins; null without marketcap or rank.'),
  circulating_supply: decimal().nullable(),
  logo: url('The coin\'s logo (the catalogue image, else a generated monogram).'),
  listed_at: timestamp('Listing time of an active coin; null for other statuses.').nullable(),
  last_updated: timestamp('Time of the latest price.').nullable(),
}), 'A coin as the coin lists return it.');

const trendingCoin = resource('TrendingCoin', z.object({
  id: int(), slug: text(), name: text(), symbol: text(), rank: int(),
  price: decimal(), marketcap: number().nullable(), logo: url(),
  score: int('0-100: 24h volume surge over the usual daily volume, and the size of the 24h move.').min(0).max(100),
}), 'A trending coin with its score.');

const ohlc = (nullable: boolean) => {
  const price = nullable ? decimal().nullable() : decimal();
  return z.object({ open: price, high: price, low: price, close: price });
};
const extreme = z.object({
  price: decimal().nullable(), date: day().nullable(),
  percent_from: percent('Percent distance of the current price from this price.'),
});
const coinDetail = resource('CoinDetail', coinRow.extend({
  fully_diluted_valuation: number('Price times max supply, else total supply; null when neither is known.').nullable(),
  supply: z.object({ circulating: decimal().nullable(), total: decimal().nullable(), max: decimal().nullable() }),
  today: ohlc(true).describe('OHLC of the current UTC day.'),
  all_time_high: extreme,
  all_time_low: extreme,
  counts: z.object({ exchanges: int(), pairs: int(), tickers: int(), wallets: int() }),
  decimals: int().nullable(),
  genesis_date: day().nullable(),
  description: text('Localized HTML; null when the coin has none in any language.').nullable(),
  description_locale: text('The language the description is in.').nullable(),
  links: z.array(z.object({ type: text(), url: text() })),
  contracts: z.array(z.object({ chain: text(), address: text(), decimals: int().nullable() })),
}), 'One coin with supply, today, extremes, counts, links, contracts and description.');

const historyMeta = z.object({ coin: text(), interval: z.enum(INTERVALS), count: int(), retention: text() });
const candle = resource('CoinCandle', ohlc(false).extend({
  time: timestamp('Start of the bar.'),
  price: decimal('The close.'),
  volume: number('USD traded in the bar.'),
  volume_24h: number('USD traded in the 24 hours ending with the bar.'),
  marketcap: number('At the close; null without a circulating supply.').nullable(),
}), 'A bar of the coin history.');

const sparkline = resource('CoinSparkline', z.object({
  points: z.array(z.object({ time: timestamp(), price: decimal() })),
  low: decimal().nullable(), high: decimal().nullable(),
  change: percent('Percent move from the first open to the last close; null without bars.'),
}), 'A light price series with its low, high and change.');

type ListQuery = z.output<typeof listQuery> & { interval?: '24h' | '7d' };
type CoinList = 'all' | 'recent' | 'gainers' | 'losers';

/**
 * One page of a coin list with the list's filters, selectors and sort. `within` restricts it to a set of
 * coin ids computed in SQL (an exchange's or a wallet's coins), so those lists keep the coin list's shape.
 */
export async function coinListPage(
  { query: q, ctx, deps: { sql } }: HandlerInput<ListQuery, unknown, unknown>,
  list: CoinList = 'all',
  within: postgres.PendingQuery<postgres.Row[]> | null = null,
) {
  const perPage = q.per_page ?? DEFAULT_PER_PAGE;
  const [row] = await sql<{ total: string; returned: number; data: string }[]>`
    select total, returned, data::text from api.coin_list_page(
      p_list => ${list},
      p_type => ${q.type ?? null},
      p_status => ${q.status ?? null},
      p_search => ${q.search ?? null},
      p_min_price => ${q.min_price ?? null}::numeric,
      p_max_price => ${q.max_price ?? null}::numeric,
      p_min_marketcap => ${q.min_marketcap ?? null}::numeric,
      p_max_marketcap => ${q.max_marketcap ?? null}::numeric,
      p_min_volume => ${q.min_volume ?? null}::numeric,
      p_max_volume => ${q.max_volume ?? null}::numeric,
      p_ids => ${listOrNull(q.ids)}::int[],
      p_slugs => ${listOrNull(q.slugs)}::text[],
      p_symbols => ${listOrNull(q.symbols)}::text[],
      p_sort => ${listOrNull(q.sort)}::text[],
      p_interval => ${q.interval ?? '24h'},
      p_page => ${q.page},
      p_per_page => ${perPage},
      p_within => ${within ?? sql`null`}
    )`;
  return pageAnswer(ctx, q.page, perPage, { total: Number(row!.total), data: new JsonRows(row!.data, row!.returned) });
}

const listHandler = (list: CoinList) => (input: HandlerInput<ListQuery, unknown, unknown>) => coinListPage(input, list);

const historyQuery = (endHelp: string) =>
  z.object({
    interval: z.enum(INTERVALS).optional().default('daily'),
    start: query.instant().optional().describe('ISO 8601 date or date-time lower bound (UTC unless an offset is given).'),
    end: query.instant({ endOfDay: true }).optional().describe(endHelp),
    limit: query.int(1, 2000).optional().default(1000).describe('The most recent N rows of the window, returned oldest first.'),
  });
const END_HELP = 'ISO 8601 date or date-time upper bound; a date-only value means through the end of that day.';

export const coinRoutes = [
  defineRoute({
    method: 'get', path: '/coins', cache: MARKET_CACHE, operationId: 'listCoins', tag: 'Coins', plan: 'free', query: listQuery,
    response: pageOf(coinRow),
    summary: 'Ranked coin list with filters, selectors and a multi-field sort, paginated.',
    handler: listHandler('all'),
  }),
  defineRoute({
    method: 'get', path: '/coins/recently-added', cache: MARKET_CACHE, operationId: 'recentlyAddedCoins', tag: 'Coins', plan: 'free', query: listQuery,
    response: pageOf(coinRow),
    summary: 'Newest listings: active coins by status_updated_at (their listing time) descending, then the other statuses by their last change; `sort` replaces that order.',
    handler: listHandler('recent'),
  }),
  defineRoute({
    method: 'get', path: '/coins/gainers', cache: MARKET_CACHE, operationId: 'topGainers', tag: 'Coins', plan: 'free', query: moversQuery,
    response: pageOf(coinRow),
    summary: 'Coins whose change over `interval` (24h or 7d) is above 0, largest gain first; `sort` breaks ties.',
    handler: listHandler('gainers'),
  }),
  defineRoute({
    method: 'get', path: '/coins/losers', cache: MARKET_CACHE, operationId: 'topLosers', tag: 'Coins', plan: 'free', query: moversQuery,
    response: pageOf(coinRow),
    summary: 'Coins whose change over `interval` (24h or 7d) is below 0 (0.00 excluded), largest loss first; `sort` breaks ties.',
    handler: listHandler('losers'),
  }),
  defineRoute({
    method: 'get', path: '/coins/trending', cache: MARKET_CACHE, operationId: 'trendingCoins', tag: 'Coins', plan: 'free',
    query: z.object({ limit: query.int(1, 20).optional().default(10) }),
    response: envelope(z.array(trendingCoin), z.object({ count: int() })),
    summary: 'Trending coins by score (0-100): 24h volume surge over the usual daily volume, and the size of the 24h move.',
    handler: async ({ query: { limit }, deps: { sql } }) => {
      const rows = await sql`select * from api.trending_coins(${limit})`;
      return { data: [...rows], meta: { count: rows.length } };
    },
  }),
  defineRoute({
    method: 'get', path: '/coins/{slug}', cache: MARKET_CACHE, operationId: 'getCoinDetail', tag: 'Coins', plan: 'free', params: slugParams('coin'),
    query: z.object({ locale: localeQuery.describe('Language of the description; falls back to the base language, then English.') }),
    response: envelope(coinDetail, z.object({ locale: text().nullable() })),
    summary: 'Coin detail: supply, today, all-time high and low, fully diluted valuation, links, contracts, localized description.',
    handler: async ({ params: { slug }, query: { locale }, deps: { sql } }) => {
      const [row] = await sql<{ data: Record<string, unknown> }[]>`select api.coin_detail(${slug}, ${locale}) as data`;
      return { data: row!.data, meta: { locale: row!.data.description_locale ?? null } };
    },
  }),
  defineRoute({
    method: 'get', path: '/coins/{slug}/history', cache: MARKET_CACHE, operationId: 'candleHistory', tag: 'Coins', plan: 'free',
    params: slugParams('coin'), query: historyQuery(END_HELP),
    response: envelope(z.array(candle), historyMeta),
    summary: 'OHLC, volume and marketcap per bar at the interval; retention: minutely 8 days, half-hourly 3 months, hourly 6 months, daily forever.',
    handler: async ({ params: { slug }, query: q, deps: { sql } }) => {
      const [row] = await sql<{ data: string; count: number; retention: string }[]>`
        select coalesce(json_agg(h order by h.time), '[]')::text as data, count(*)::int as count,
          (select i.retention from api.coin_history_intervals i where i.name = ${q.interval}) as retention
        from api.coin_history(${slug}, ${q.interval}, ${q.start ?? null}::text::timestamptz, ${q.end ?? null}::text::timestamptz, ${q.limit}) h`;
      return { data: new JsonRows(row!.data, row!.count), meta: { coin: slug, interval: q.interval, count: row!.count, retention: row!.retention } };
    },
  }),
  defineRoute({
    method: 'get', path: '/coins/{slug}/marketcap-history', cache: MARKET_CACHE, operationId: 'marketcapHistory', tag: 'Coins', plan: 'free',
    params: slugParams('coin'), query: historyQuery(END_HELP),
    response: envelope(z.array(z.object({ time: timestamp(), marketcap: number().nullable() })), historyMeta),
    summary: 'The candle history projected to {time, marketcap}: same interval, window, limit and retention rules.',
    handler: async ({ params: { slug }, query: q, deps: { sql } }) => {
      const [row] = await sql<{ data: string; count: number; retention: string }[]>`
        select coalesce(json_agg(h order by h.time), '[]')::text as data, count(*)::int as count,
          (select i.retention from api.coin_history_intervals i where i.name = ${q.interval}) as retention
        from api.coin_marketcap_history(${slug}, ${q.interval}, ${q.start ?? null}::text::timestamptz, ${q.end ?? null}::text::timestamptz, ${q.limit}) h`;
      return { data: new JsonRows(row!.data, row!.count), meta: { coin: slug, interval: q.interval, count: row!.count, retention: row!.retention } };
    },
  }),
  defineRoute({
    method: 'get', path: '/coins/{slug}/sparkline', cache: MARKET_CACHE, operationId: 'coinSparkline', tag: 'Coins', plan: 'free',
    params: slugParams('coin'), query: z.object({ period: z.enum(PERIODS).optional().default('7d') }),
    response: envelope(sparkline, z.object({ coin: text(), period: z.enum(PERIODS), count: int() })),
    summary: 'A light price series over the period (at most 366 points, oldest first) with its true low, high and percent change.',
    handler: async ({ params: { slug }, query: { period }, deps: { sql } }) => {
      const [row] = await sql<{ data: { points: unknown[] } }[]>`select api.coin_sparkline(${slug}, ${period}) as data`;
      return { data: row!.data, meta: { coin: slug, period, count: row!.data.points.length } };
    },
  }),
];
