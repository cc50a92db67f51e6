// Liquidations group: the raw feed (48 hours), hourly totals, daily totals, today's summary, the
// daily long/short netflow and the most liquidated coins. Source coverage is OKX swap markets and
// every response says so in meta.note. SQL: sql/functions/500_api_liquidations.sql. The raw-feed
// routes are cached until the next ingest; the daily ones read market.liquidations_1d, refreshed by
// TimescaleDB's scheduler without a data version, so they run their (small) query every time.
import { z } from 'zod';
import { pageAnswer, paginationQuery } from '../http/envelope.ts';
import { LIQUIDATIONS_CACHE } from '../http/cache.ts';
import { defineRoute } from '../http/routes.ts';
import { day, decimal, envelope, int, number, pageOf, resource, text, timestamp, url } from '../http/schemas.ts';
import { query } from '../http/validation.ts';
import { slug } from '../validators.ts';

const DEFAULT_PER_PAGE = 50;
export const LIQUIDATION_NOTE = 'Source coverage: OKX swap markets.';
const PARTIAL_NOTE = `${LIQUIDATION_NOTE} Today's figures are partial and update every ~15 minutes.`;
const RETENTION = '~48 hours (raw feed is pruned)';

const hours = query.int(1, 48).optional().default(24).describe('Look-back window in hours (1-48, default 24).');
const tag = 'Liquidations';

// Response shapes (sql/functions/500_api_liquidations.sql): USD values are numbers rounded to the cent.
const usd = () => number('USD.');
const Liquidation = resource('Liquidation', z.object({
  symbol: text('The venue’s instrument id, e.g. BTC-USDT-SWAP.'),
  exchange: z.object({ id: int('Null for a venue not in the exchange directory.').nullable(), slug: text(), name: text() }),
  instrument: z.enum(['future', 'option', 'swap', 'spot', 'margin']),
  position: z.enum(['long', 'short']),
  order: z.enum(['buy', 'sell']),
  price: decimal(),
  value_usd: usd(),
  quantity: number(),
  liquidated_at: timestamp(),
}));
const noteMeta = (fields: z.ZodRawShape = {}) => z.object({ ...fields, note: text('Source coverage.') });
const dayTotals = { date: day('UTC day.'), total_usd: usd(), long_usd: usd(), short_usd: usd(), longs: int(), shorts: int() };

export const liquidationRoutes = [
  defineRoute({
    method: 'get', path: '/liquidations', operationId: 'liquidationFeed', tag, plan: 'free', cache: LIQUIDATIONS_CACHE,
    query: z.object({
      ...paginationQuery,
      exchange: slug('exchange').optional().describe('Exchange slug, e.g. okx.'),
      instrument: z.enum(['future', 'option', 'swap', 'spot', 'margin']).optional(),
      position: z.enum(['long', 'short']).optional().describe('Side of the liquidated position.'),
      order: z.enum(['buy', 'sell']).optional().describe('Side of the fill that closed the position.'),
      symbol: z.string().regex(/^[A-Za-z0-9$.-]{1,25}$/, 'Must be 1-25 letters, digits, $, . or -.').optional().describe('Case-insensitive prefix of the instrument id: BTC matches BTC-USDT-SWAP.'),
      min_usd: query.decimal().optional().describe('Only liquidations worth at least this many USD.'),
    }),
    response: pageOf(Liquidation, { retention: text(), note: text('Source coverage.') }),
    summary: 'The raw liquidation feed of the last ~48 hours (then pruned), newest first, filtered and paginated. Source coverage: OKX swap markets.',
    handler: async ({ query: q, ctx, deps: { sql } }) => {
      const perPage = q.per_page ?? DEFAULT_PER_PAGE;
      const [row] = await sql<{ page: { total: number; data: unknown[] } }[]>`
        select api.liquidation_feed(
          p_exchange => ${q.exchange ?? null}, p_instrument => ${q.instrument ?? null}, p_position => ${q.position ?? null},
          p_order => ${q.order ?? null}, p_symbol => ${q.symbol ?? null}, p_min_usd => ${q.min_usd ?? null}::numeric,
          p_page => ${q.page}, p_per_page => ${perPage}) as page`;
      return pageAnswer(ctx, q.page, perPage, row!.page, { retention: RETENTION, note: LIQUIDATION_NOTE });
    },
  }),
  defineRoute({
    method: 'get', path: '/liquidations/hourly', operationId: 'hourlyLiquidations', tag, plan: 'free', cache: LIQUIDATIONS_CACHE,
    query: z.object({ hours }),
    response: envelope(z.array(resource('LiquidationHour', z.object({
      hour: timestamp('Start of the UTC hour.'), liquidations: int(), total_usd: usd(), long_usd: usd(), short_usd: usd(),
    }))), noteMeta({ hours: int() })),
    summary: 'Liquidation count and total/long/short USD per UTC hour over the last `hours` hours (the raw feed is kept 48 hours), oldest first.',
    handler: async ({ query: q, deps: { sql } }) => {
      const rows = await sql`select * from api.liquidations_hourly(${q.hours})`;
      return { data: [...rows], meta: { hours: q.hours, note: LIQUIDATION_NOTE } };
    },
  }),
  defineRoute({
    method: 'get', path: '/liquidations/daily', operationId: 'dailyLiquidations', tag, plan: 'free',
    query: z.object({ days: query.int(1, 365).optional().default(30).describe('Calendar days including today (1-365, default 30).') }),
    response: envelope(z.array(resource('LiquidationDay', z.object(dayTotals))), noteMeta({ days: int() })),
    summary: "Daily totals (kept forever): total/long/short USD and long/short counts per UTC day, oldest first; today's row is partial and updates every ~15 minutes.",
    handler: async ({ query: q, deps: { sql } }) => {
      const rows = await sql`select * from api.liquidations_daily(${q.days})`;
      return { data: [...rows], meta: { days: q.days, note: PARTIAL_NOTE } };
    },
  }),
  defineRoute({
    method: 'get', path: '/liquidations/summary', operationId: 'todaysLiquidationSummary', tag, plan: 'free',
    response: envelope(resource('LiquidationSummary', z.object({
      ...dayTotals,
      dominance: z.object({ long: number('Percent of total_usd; null when it is 0.').nullable(), short: number('Percent of total_usd; null when it is 0.').nullable() }),
    })).nullable(), noteMeta()),
    summary: "Today so far (UTC): total/long/short USD, long/short counts and long-vs-short dominance; partial, updated every ~15 minutes; zeros (dominance null) before the day's first liquidation.",
    handler: async ({ deps: { sql } }) => {
      const [row] = await sql`select * from api.liquidation_summary()`;
      return { data: row ?? null, meta: { note: PARTIAL_NOTE } };
    },
  }),
  defineRoute({
    method: 'get', path: '/liquidations/netflow', operationId: 'liquidationNetflow', tag, plan: 'free',
    query: z.object({ days: query.int(1, 90).optional().default(30).describe('Calendar days including today (1-90, default 30).') }),
    response: envelope(z.array(resource('LiquidationNetflowDay', z.object({
      date: day('UTC day.'), long: usd(), short: usd(), total: usd(), net: number('long - short, USD.'), longs: int(), shorts: int(),
    }))), noteMeta({ days: int() })),
    summary: 'Long-vs-short liquidated USD per UTC day (long, short, total, net = long - short) with counts, oldest first.',
    handler: async ({ query: q, deps: { sql } }) => {
      const rows = await sql`select * from api.liquidation_netflow(${q.days})`;
      return { data: [...rows], meta: { days: q.days, note: LIQUIDATION_NOTE } };
    },
  }),
  defineRoute({
    method: 'get', path: '/liquidations/coins', operationId: 'topLiquidatedCoins', tag, plan: 'free', cache: LIQUIDATIONS_CACHE,
    query: z.object({ hours, limit: query.int(1, 20).optional().default(8).describe('Number of coins (1-20, default 8).') }),
    response: envelope(z.array(resource('LiquidatedCoin', z.object({
      symbol: text(), name: text(), slug: text(), logo: url(), long: usd(), short: usd(), total: usd(),
    }))), noteMeta({ hours: int(), limit: int() })),
    summary: 'The coins with the most liquidated USD over the last `hours` hours, with the long/short split, largest first.',
    handler: async ({ query: q, deps: { sql } }) => {
      const rows = await sql`select * from api.top_liquidated_coins(${q.hours}, ${q.limit})`;
      return { data: [...rows], meta: { hours: q.hours, limit: q.limit, note: LIQUIDATION_NOTE } };
    },
  }),
];
