// The 19 read-only MCP tools. A tool is a typed argument schema for agents in front of one Data API
// route: its arguments are handed to that route's own query/params schemas (the endpoint's bounds
// and messages) and its own handler (the same api.* function or calculator), so no query exists twice.
import type { Context } from 'koa';
import { z } from 'zod';
import { apiRoutes } from '../api/index.ts';
import { ApiError, perPageOverCap } from '../http/errors.ts';
import { completeEnvelope } from '../http/envelope.ts';
import { serialiseBody } from '../http/logos.ts';
import { responseSchema } from '../http/openapi.ts';
import { publicBase } from '../http/base.ts';
import { API_PREFIX, routePlan, type Deps, type RouteSpec } from '../http/routes.ts';
import { collectingParser, queryTextErrors } from '../http/validation.ts';
import { admitMcp, mcpPlan } from './auth.ts';
import { date, slug as slugOf } from '../validators.ts';

type Args = Record<string, unknown>;
type Scalar = string | number | boolean;

export interface McpTool {
  name: string;
  title: string;
  description: string;
  input: z.ZodRawShape;
  /** the route that answers: its response schema is the tool's outputSchema, its body the structuredContent */
  operationId: string;
  /**
   * The arguments as the route's path and query take them; `operationId` when another route of the
   * same response schema answers these arguments (losers beside gainers).
   */
  request: (args: Args) => { operationId?: string; params?: Record<string, Scalar | undefined>; query?: Record<string, Scalar | Scalar[] | undefined> };
  /** a one-line summary, the first text block (the JSON follows it) */
  text: (body: any, args: Args) => string;
}

// Argument building blocks, with the bounds of the matching query parameters.
const slug = slugOf('coin').describe('The coin\'s slug, e.g. bitcoin; any case.');
const exchangeSlug = slugOf('exchange').describe('The exchange\'s slug, e.g. binance; any case.');
const pageArgs = {
  page: z.number().int().min(1).max(1_000_000).optional().describe('Page number, default 1.'),
  per_page: z.number().int().min(1).max(250, perPageOverCap(250)).optional().describe('Rows per page (the plan caps it), default 100.'),
};
const isoDate = z.string().max(40).describe('ISO 8601 date (YYYY-MM-DD) or date-time.');
const currency = z.string().regex(/^[A-Za-z]{3}$/).optional().describe('Fiat currency code (USD, EUR, …); default USD.');

const count = (body: { data: unknown[] }) => body.data.length;
const total = (body: { data: unknown[]; meta: { total: number } }, what: string) => `${body.meta.total} ${what} in all; this page has ${body.data.length}.`;

export const TOOLS: McpTool[] = [
  {
    name: 'search_coins', title: 'Search coins',
    description: 'Finds coins by a case-insensitive substring of name, symbol or slug: an exact symbol, slug or name first, then prefix matches, then other matches, each by market cap rank, with price, market cap, volume and changes. Use it to find a coin\'s slug for the other tools.',
    input: { query: z.string().min(1).max(100).describe('Part of the name, symbol or slug, e.g. "bit" or "ETH".'), ...pageArgs },
    operationId: 'listCoins',
    request: ({ query, page, per_page }) => ({ query: { search: query as string, page: page as number, per_page: per_page as number } }),
    text: (body) => total(body, 'matching coins') + ' ' + body.data.slice(0, 10).map((c: any) => `${c.name} (${c.symbol}, ${c.slug}): ${c.price ?? 'n/a'} USD`).join('; '),
  },
  {
    name: 'get_coin', title: 'Coin detail',
    description: 'One coin in detail: price, supply, market cap, fully diluted valuation, all-time high and low, links, contracts and description.',
    input: { slug, locale: z.string().regex(/^[A-Za-z]{2}([-_][A-Za-z]{2})?$/).optional().describe('Language of the description, default en.') },
    operationId: 'getCoinDetail',
    request: ({ slug, locale }) => ({ params: { slug: slug as string }, query: { locale: locale as string } }),
    text: (body) => `${body.data.name} (${body.data.symbol}): price ${body.data.price ?? 'n/a'} USD.`,
  },
  {
    name: 'get_prices', title: 'Current prices',
    description: 'Current price, market cap, 24h volume and changes of up to 100 coins chosen by ids, slugs or symbols, optionally in a fiat currency.',
    input: {
      ids: z.array(z.number().int().min(1).max(999_999_999)).max(100).optional().describe('Coin ids.'),
      slugs: z.array(slugOf('coin')).max(100).optional().describe('Coin slugs.'),
      symbols: z.array(z.string().min(1).max(20)).max(100).optional().describe('Symbols, case-insensitive.'),
      convert: currency,
    },
    operationId: 'getPrices',
    request: ({ ids, slugs, symbols, convert }) => ({ query: { ids: ids as number[], slugs: slugs as string[], symbols: symbols as string[], convert: convert as string } }),
    text: (body) => body.data.map((c: any) => `${c.slug}: ${c.price ?? 'n/a'} ${body.meta.currency}`).join('; ') || 'No coin matched.',
  },
  {
    name: 'get_price_history', title: 'Price history (OHLCV)',
    description: 'OHLC, volume and market cap bars of one coin over a date range, oldest first. Retention: minutely 8 days, half-hourly 3 months, hourly 6 months, daily forever.',
    input: {
      slug,
      interval: z.enum(['minutely', 'half-hourly', 'hourly', 'daily']).optional().describe('Bar size, default daily.'),
      start: isoDate.optional().describe('Lower bound (ISO 8601 date or date-time, UTC unless an offset is given).'),
      end: isoDate.optional().describe('Upper bound; a date alone means through that day.'),
      limit: z.number().int().min(1).max(2000).optional().describe('The most recent N bars of the range, default 1000.'),
    },
    operationId: 'candleHistory',
    request: ({ slug, ...query }) => ({ params: { slug: slug as string }, query: query as Record<string, Scalar> }),
    text: (body) => `${count(body)} ${body.meta.interval} bars of ${body.meta.coin}` + (body.data.length ? ` from ${body.data[0].time} to ${body.data.at(-1).time}.` : '.'),
  },
  {
    name: 'get_historical_price', title: 'Price on a past date',
    description: "One coin's USD close on a past date (UTC), or the nearest day's within 3 days (meta.price_date says which).",
    input: { slug, date: date().describe('YYYY-MM-DD, after 2008-12-31, not in the future.') },
    operationId: 'historicalPrice',
    request: ({ slug, date }) => ({ query: { slug: slug as string, date: date as string } }),
    text: (body) => `${body.data.symbol} closed at ${body.data.price} USD on ${body.meta.price_date} (asked for ${body.data.date}).`,
  },
  {
    name: 'get_top_movers', title: 'Top gainers or losers',
    description: 'The coins that gained (or lost) the most over 24 hours or 7 days, largest move first.',
    input: {
      direction: z.enum(['gainers', 'losers']).describe('gainers or losers.'),
      interval: z.enum(['24h', '7d']).optional().describe('Window of the change, default 24h.'),
      ...pageArgs,
    },
    operationId: 'topGainers',
    request: ({ direction, interval, page, per_page }) => ({
      operationId: direction === 'losers' ? 'topLosers' : 'topGainers', query: { interval: interval as string, page: page as number, per_page: per_page as number },
    }),
    // the change over the window asked for, as the list is ordered by it
    text: (body, { interval }) => {
      const change = interval === '7d' ? 'change_7d' : 'change_24h';
      return `${total(body, 'coins')} Change over ${interval ?? '24h'}: ` + body.data.slice(0, 10).map((c: any) => `${c.symbol} ${c[change] ?? 'n/a'}%`).join(', ');
    },
  },
  {
    name: 'get_trending_coins', title: 'Trending coins',
    description: 'Trending coins by a 0-100 score from the surge of 24h volume over the usual and the size of the 24h move.',
    input: { limit: z.number().int().min(1).max(20).optional().describe('How many, default 10.') },
    operationId: 'trendingCoins',
    request: ({ limit }) => ({ query: { limit: limit as number } }),
    text: (body) => `${count(body)} trending: ` + body.data.map((c: any) => c.slug).join(', '),
  },
  {
    name: 'get_global_market', title: 'Global market overview',
    description: 'Total crypto market cap and 24h volume, counts of coins, exchanges and markets, BTC/ETH dominance and the Fear & Greed reading.',
    input: {},
    operationId: 'globalMarketSnapshot',
    request: () => ({}),
    text: (body) => `Total market cap ${body.data.total_marketcap ?? 'n/a'} USD, 24h volume ${body.data.total_volume_24h ?? 'n/a'} USD.`,
  },
  {
    name: 'get_global_history', title: 'Global market history',
    description: 'Total market cap or volume (USD) over 24h (half-hourly), 7d (hourly), 30d or all (daily), oldest first.',
    input: { metric: z.enum(['marketcap', 'volume']).describe('marketcap or volume.'), period: z.enum(['24h', '7d', '30d', 'all']).optional().describe('Default 24h.') },
    operationId: 'globalMarketcapVolumeHistory',
    request: ({ metric, period }) => ({ params: { metric: metric as string }, query: { period: period as string } }),
    text: (body) => `${count(body)} points of total ${body.meta.metric} over ${body.meta.period}.`,
  },
  {
    name: 'get_fear_greed', title: 'Fear & Greed index',
    description: 'The current Fear & Greed reading (0-100 with its band, and its components) for the whole market or one coin.',
    input: { coin: slugOf('coin').optional().describe('Coin slug; omit for the whole market.') },
    operationId: 'fearGreedIndex',
    request: ({ coin }) => ({ query: { coin: coin as string } }),
    text: (body) => `Fear & Greed (${body.data.scope}): ${body.data.index ?? 'n/a'} ${body.data.regime ?? ''}`.trim(),
  },
  {
    name: 'get_altseason_index', title: 'Altseason index',
    description: 'How many of the top-100 altcoins outperformed bitcoin over 90 days, with optional daily history.',
    input: { days: z.number().int().min(0).max(365).optional().describe('Days of daily history, 0-365 (default 0: current only).') },
    operationId: 'altseasonIndex',
    request: ({ days }) => ({ query: { days: days as number } }),
    text: (body) => `Altseason index: ${body.data.index ?? 'n/a'} (${body.data.season ?? 'n/a'}).`,
  },
  {
    name: 'convert_currency', title: 'Convert between assets',
    description: 'Converts an amount of a coin or fiat currency into up to ten others through USD; values are decimal strings, the echoed amount a number.',
    input: {
      from: slugOf('asset').describe('Source asset: coin slug (bitcoin) or fiat code (usd).'),
      to: z.array(slugOf('asset')).min(1).max(10).describe('Target assets: coin slugs or fiat codes.'),
      amount: z.string().max(40).regex(/^\d+(\.\d+)?$/).optional().describe('Non-negative decimal string, default "1".'),
    },
    operationId: 'convertBetweenAssets',
    request: ({ from, to, amount }) => ({ query: { from: from as string, to: to as string[], amount: amount as string } }),
    text: (body) => `${body.data.amount} ${body.data.from.symbol} = ` + body.data.results.map((r: any) => `${r.value} ${r.symbol}`).join(', '),
  },
  {
    name: 'list_exchanges', title: 'List exchanges',
    description: 'Ranked exchanges with 24h USD volume, dominance, changes and pair and asset counts; optional search and type.',
    input: {
      search: z.string().max(100).optional().describe('Part of the name or slug.'),
      type: z.enum(['cex', 'dex']).optional(),
      ...pageArgs,
    },
    operationId: 'listExchanges',
    request: (args) => ({ query: args as Record<string, Scalar> }),
    text: (body) => total(body, 'exchanges') + ' ' + body.data.slice(0, 10).map((e: any) => e.name).join(', '),
  },
  {
    name: 'get_exchange', title: 'Exchange detail',
    description: 'One exchange: type, rank, 24h volume and dominance, changes, pairs, assets, established, location, website.',
    input: { slug: exchangeSlug },
    operationId: 'getExchangeDetail',
    request: ({ slug }) => ({ params: { slug: slug as string } }),
    text: (body) => `${body.data.name}: rank ${body.data.rank ?? 'n/a'}, 24h volume ${body.data.volume_24h ?? 'n/a'} USD.`,
  },
  {
    name: 'get_exchange_trust_score', title: 'Exchange trust score',
    description: 'Trust score 0-10 of an exchange with its 13-factor breakdown (rank, volume, age, volume trend, stability, rank stability, ticker health, pairs, community, assets, dominance, market breadth, transparency), each 0-10.',
    input: { slug: exchangeSlug },
    operationId: 'getExchangeTrustScore',
    request: ({ slug }) => ({ params: { slug: slug as string } }),
    text: (body) => `Trust score: ${body.data.score ?? 'n/a'} of 10.`,
  },
  {
    name: 'get_coin_markets', title: 'Markets of a coin',
    description: 'The tickers (exchange, pair, price, 24h volume) trading a coin as base or quote, by volume.',
    input: { slug, exchange: slugOf('exchange').optional().describe('Only this exchange (slug).'), ...pageArgs },
    operationId: 'coinMarkets',
    request: ({ slug, ...query }) => ({ params: { slug: slug as string }, query: query as Record<string, Scalar> }),
    text: (body) => total(body, 'markets'),
  },
  {
    name: 'get_coin_technicals', title: 'Technical indicators snapshot',
    description: "Every indicator's latest daily reading for a coin (RSI, MACD, SMA, ADX, MFI, CCI, OBV, VWAP, …) with a state (bullish, bearish, neutral, overbought, oversold) and a score. Needs the mcp-pro plan.",
    input: { slug },
    operationId: 'indicatorSnapshot',
    request: ({ slug }) => ({ params: { slug: slug as string } }),
    text: (body) => body.data.map((r: any) => `${r.indicator}: ${r.state}`).join(', '),
  },
  {
    name: 'get_liquidations_summary', title: "Today's liquidations",
    description: "Today's (UTC) liquidations so far: total, long and short USD, counts and long-vs-short dominance; null before the day's first.",
    input: {},
    operationId: 'todaysLiquidationSummary',
    request: () => ({}),
    text: (body) => (body.data ? `Liquidations today: ${body.data.total_usd} USD (long ${body.data.long_usd}, short ${body.data.short_usd}).` : 'No liquidations today yet.'),
  },
  {
    name: 'calculate_dca', title: 'Dollar-cost averaging calculator',
    description: 'Simulates buying a coin for a fixed USD amount at each interval from start to end at the daily close: total invested, quantity, average price, value, profit and ROI.',
    input: {
      slug,
      amount: z.string().regex(/^\d+(\.\d+)?$/).describe('USD per buy, 0.01-1,000,000,000, as a decimal string.'),
      interval: z.enum(['daily', 'weekly', 'monthly', 'quarterly', 'annually', 'yearly']),
      start: date().describe('First buy, YYYY-MM-DD.'),
      end: date().optional().describe('Last possible buy, default today.'),
      series: z.boolean().optional().describe('Also return one row per buy.'),
    },
    operationId: 'dCACalculator',
    request: (args) => ({ query: args as Record<string, Scalar> }),
    text: (body) => `Invested ${body.data.summary.invested} USD, worth ${body.data.summary.final_value} USD now (ROI ${body.data.summary.roi}%).`,
  },
];

const ROUTES = new Map(apiRoutes.map((route) => [route.operationId, route]));

/** The route a tool's answers come from; checked when the module loads, so a renamed operation fails at start-up. */
const routeOf = (operationId: string): RouteSpec => {
  const route = ROUTES.get(operationId);
  if (!route?.response) throw new Error(`MCP tools: no operation ${operationId} with a response schema`);
  return route;
};
for (const tool of TOOLS) routeOf(tool.operationId);

/** A tool's outputSchema: the JSON Schema of its operation's success body, as the OpenAPI document has it. */
export const outputSchema = (tool: McpTool) => responseSchema(routeOf(tool.operationId))!;

const asParam = (value: Scalar | Scalar[]) => (Array.isArray(value) ? value.join(',') : String(value));
const strings = (values: Record<string, Scalar | Scalar[] | undefined> = {}) =>
  Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined).map(([name, value]) => [name, asParam(value!)]));

/**
 * Runs a tool as its endpoint would: the route's schemas, admission with the MCP plan the route's plan
 * maps to (a tool call costs one request; a bad argument costs none), then the route's handler.
 */
export async function runTool(tool: McpTool, args: Args, ctx: Context, deps: Deps): Promise<{ body: Record<string, unknown>; json: string }> {
  const { operationId = tool.operationId, params: rawParams, query: rawQuery } = tool.request(args);
  const route = routeOf(operationId);
  const search = new URLSearchParams(strings(rawQuery));
  const params = strings(rawParams);
  const errors = queryTextErrors(search.toString());
  const parse = collectingParser(errors);
  const query = parse(route.query, Object.fromEntries(search));
  const pathParams = parse(route.params, params);
  const valid = Object.keys(errors).length === 0;
  const perPage = valid ? (query as { per_page?: unknown }).per_page : undefined;
  const key = await admitMcp(ctx, deps, `TOOL ${tool.name}`, mcpPlan(routePlan(route, query, valid)), valid, typeof perPage === 'number' ? perPage : undefined);
  if (!valid) throw ApiError.validation(errors);
  // Paginated answers link to the same page of the Data API endpoint.
  const path = API_PREFIX + route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  const href = new URL(`${path}${search.size ? `?${search}` : ''}`, `${ctx.protocol}://${ctx.host}`).href;
  const answer = await route.handler({ query: query as never, params: pathParams as never, body: undefined as never, key, deps, ctx: { href } as Context, routes: apiRoutes });
  // the body the endpoint answers, byte for byte (meta completed, logos absolute): the text block's JSON
  const json = serialiseBody(completeEnvelope(answer, deps.config), publicBase(ctx, deps.config));
  return { body: JSON.parse(json) as Record<string, unknown>, json };
}
