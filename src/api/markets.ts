// Markets group: tickers (per-venue markets), a coin's markets, pairs (venue-aggregated) and a
// coin's raw per-venue trading symbols. All snapshot data. SQL: sql/functions/430_api_markets.sql.
import { MARKET_CACHE } from '../http/cache.ts';
import { z } from 'zod';
import { JsonRows, pageAnswer, paginationQuery } from '../http/envelope.ts';
import { defineRoute, type HandlerInput } from '../http/routes.ts';
import { decimal, envelope, int, number, pageOf, resource, text, timestamp } from '../http/schemas.ts';
import { query, slugParams } from '../http/validation.ts';
import { listOrNull } from './coins.ts';
import { slug } from '../validators.ts';

const TICKER_SORTABLE = ['volume_usd', 'change_24h', 'price_usd', 'updated'] as const;
const INSTRUMENTS = ['future', 'option', 'swap', 'spot', 'margin'] as const;
const DEFAULT_PER_PAGE = 100;

// Response shapes (api.ticker_rows, api.pair_rows, api.coin_symbols). Prices in quote units are
// decimal strings.
const instrument = z.enum(INSTRUMENTS);
const tickerRow = resource('Ticker', z.object({
  id: int(), exchange_id: int(), exchange: text('Venue slug.'), exchange_name: text(), pair_id: int(),
  symbol: text('BASE/QUOTE.'), exchange_symbol: text('As the venue spells it.'),
  base: text(), base_slug: text(), quote: text(), quote_slug: text('Null for a fiat quote.').nullable(),
  instrument,
  price: decimal('In quote units.'), price_usd: decimal(), bid: decimal().nullable(), ask: decimal().nullable(),
  spread: number('Percent.').nullable(), volume: decimal('24h, base units.'), volume_usd: number('24h USD volume.'),
  change_24h: number('Percent.').nullable(), last_trade_at: timestamp().nullable(), updated: timestamp(),
}));
/** The ticker lists' page: /tickers, /exchanges/{slug}/tickers, /coins/{slug}/markets. */
export const tickerPage = pageOf(tickerRow);
const pairFields = {
  id: int(), symbol: text('BASE/QUOTE.'), base: text(), base_slug: text(), quote: text(), quote_slug: text('Null for a fiat quote.').nullable(),
  exchanges: int('Venues listing the pair.'), tickers: int(),
  price: decimal('Volume-weighted, quote units.').nullable(), price_usd: decimal().nullable(),
  volume_usd: number('24h USD volume, summed over venues.').nullable(), spread: number('Volume-weighted, percent.').nullable(),
  updated: timestamp(),
};
const pairRow = resource('Pair', z.object(pairFields));
const pairDetail = resource('PairDetail', z.object({ ...pairFields, markets: z.array(tickerRow).describe('Every ticker of the pair, largest volume first.') }));
const symbolRow = z.object({
  exchange: text('Venue slug.'), exchange_name: text(), exchange_symbol: text('As the venue spells it.'),
  symbol: text('BASE/QUOTE.'), quote: text(), instrument,
});

/** The ticker lists' query (the reference's set Q2): /tickers, /exchanges/{slug}/tickers, /coins/{slug}/markets. */
export const tickerQuery = z.object({
  ...paginationQuery,
  exchange: slug('exchange').optional().describe('Only the tickers of this venue (slug).'),
  pair: query.int(1, 2_147_483_647).optional().describe('Only the tickers of this pair id.'),
  instrument: z
    .string()
    .transform((value) => value.toLowerCase().replace(/s$/, ''))
    .pipe(z.enum(INSTRUMENTS))
    .optional()
    .describe('future, option, swap, spot or margin (plurals accepted).'),
  search: z.string().max(50).optional().describe('Case-insensitive substring of the pair symbol (BTC/USDT) or the raw venue symbol.'),
  min_volume: query.decimal().optional().describe('Inclusive lower bound of the 24h USD volume.'),
  max_volume: query.decimal().optional(),
  min_change: query.signedDecimal().optional().describe('Inclusive lower bound of the 24h percent change.'),
  max_change: query.signedDecimal().optional(),
  sort: query.sort(TICKER_SORTABLE, 100).optional().describe(`Fields ${TICKER_SORTABLE.join(', ')}, - for descending, nulls last; default -volume_usd.`),
});
type TickerQuery = z.output<typeof tickerQuery>;

/** One handler for the three ticker lists; `scope` says which path parameter, if any, scopes it. */
export const tickerHandler =
  (scope: 'none' | 'exchange' | 'coin') =>
  async ({ query: q, params, ctx, deps: { sql } }: HandlerInput<TickerQuery, { slug?: string }, unknown>) => {
    const perPage = q.per_page ?? DEFAULT_PER_PAGE;
    const [row] = await sql<{ total: string; returned: number; data: string }[]>`
      select total, returned, data::text from api.ticker_list_page(
        p_scope_exchange => ${scope === 'exchange' ? params.slug! : null},
        p_scope_coin => ${scope === 'coin' ? params.slug! : null},
        p_exchange => ${q.exchange ?? null},
        p_pair => ${q.pair ?? null}::int,
        p_instrument => ${q.instrument ?? null},
        p_search => ${q.search ?? null},
        p_min_volume => ${q.min_volume ?? null}::numeric,
        p_max_volume => ${q.max_volume ?? null}::numeric,
        p_min_change => ${q.min_change ?? null}::double precision,
        p_max_change => ${q.max_change ?? null}::double precision,
        p_sort => ${listOrNull(q.sort)}::text[],
        p_page => ${q.page},
        p_per_page => ${perPage}
      )`;
    // the rows' JSON text as PostgreSQL wrote it, compact: never parsed here
    return pageAnswer(ctx, q.page, perPage, { total: Number(row!.total), data: new JsonRows(row!.data, row!.returned) });
  };


export const marketRoutes = [
  defineRoute({
    method: 'get', path: '/coins/{slug}/markets', cache: MARKET_CACHE, operationId: 'coinMarkets', tag: 'Markets', plan: 'free',
    params: slugParams('coin'), query: tickerQuery, response: tickerPage,
    summary: 'Every ticker whose pair has the coin as base or quote, with the ticker list\'s filters and sort, paginated.',
    handler: tickerHandler('coin'),
  }),
  defineRoute({
    method: 'get', path: '/coins/{slug}/symbols', cache: MARKET_CACHE, operationId: 'coinTradingSymbols', tag: 'Markets', plan: 'free', params: slugParams('coin'),
    response: envelope(z.array(symbolRow), z.object({ coin: text(), count: int() })),
    summary: 'The coin\'s raw trading symbols per venue (e.g. XBT/USD, BTC-USDT-SWAP), with pair, quote and instrument.',
    handler: async ({ params: { slug: coin }, deps: { sql } }) => {
      const rows = await sql`select * from api.coin_symbols(${coin})`;
      return { data: [...rows], meta: { coin, count: rows.length } };
    },
  }),
  defineRoute({
    method: 'get', path: '/tickers', cache: MARKET_CACHE, operationId: 'listTickers', tag: 'Markets', plan: 'free', query: tickerQuery, response: tickerPage,
    summary: 'Per-venue markets (tickers): price, bid/ask, spread, 24h USD volume, last trade; filters by venue, pair, instrument, volume and change, paginated.',
    handler: tickerHandler('none'),
  }),
  defineRoute({
    method: 'get', path: '/pairs', cache: MARKET_CACHE, operationId: 'listPairs', tag: 'Markets', plan: 'free', response: pageOf(pairRow),
    query: z.object({
      ...paginationQuery,
      search: z.string().max(50).optional().describe('Case-insensitive substring of the pair symbol (BTC/USDT).'),
      coin: slug('coin').optional().describe('Only pairs with this coin (slug) as base or quote.'),
      min_volume: query.decimal().optional(),
      max_volume: query.decimal().optional(),
      sort: z.enum(['volume_usd', '-volume_usd', 'updated', '-updated']).optional().default('-volume_usd'),
    }),
    summary: 'Venue-aggregated pairs: venues and tickers listing each, volume-weighted price and spread, summed 24h USD volume, paginated.',
    handler: async ({ query: q, ctx, deps: { sql } }) => {
      const perPage = q.per_page ?? DEFAULT_PER_PAGE;
      const [row] = await sql<{ page: { total: number; data: unknown[] } }[]>`
        select api.pair_list(
          p_search => ${q.search ?? null},
          p_coin => ${q.coin ?? null},
          p_min_volume => ${q.min_volume ?? null}::numeric,
          p_max_volume => ${q.max_volume ?? null}::numeric,
          p_sort => ${q.sort},
          p_page => ${q.page},
          p_per_page => ${perPage}
        ) as page`;
      return pageAnswer(ctx, q.page, perPage, row!.page);
    },
  }),
  defineRoute({
    method: 'get', path: '/pairs/{id}', cache: MARKET_CACHE, operationId: 'getPairDetail', tag: 'Markets', plan: 'free', response: envelope(pairDetail),
    params: z.object({ id: query.int(1, 2_147_483_647) }),
    summary: 'One pair plus every venue ticker listing it, largest volume first.',
    handler: async ({ params: { id }, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select api.pair_detail(${id}) as data`;
      return { data: row!.data };
    },
  }),
];
