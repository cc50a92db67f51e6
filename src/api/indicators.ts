// Indicators group: the multi-indicator snapshot and thirteen daily series. The series endpoints
// differ only in their SQL function, period rules and row columns, so they are declared by one
// table (INDICATORS) and one route builder. SQL: sql/functions/300..390 (docs/indicators.md).
import { MARKET_CACHE } from '../http/cache.ts';
import { z } from 'zod';
import { ApiError } from '../http/errors.ts';
import { defineRoute, type PlanName } from '../http/routes.ts';
import { day, decimal, envelope, int, number, resource, text } from '../http/schemas.ts';
import { query, slugParams } from '../http/validation.ts';

interface Periods {
  allowed: number[];
  default: number;
  /** periods open only from this plan on (the endpoint's own plan still applies) */
  higher?: { periods: number[]; plan: PlanName };
}

interface Indicator {
  /** path segment and meta.indicator */
  name: string;
  /** the api.* function (sql/functions/3xx) */
  fn: string;
  operationId: string;
  summary: string;
  plan: PlanName;
  /** query `period`, when the endpoint has one */
  periods?: Periods;
  /** the window the SQL function gets when the endpoint has no `period` (meta.period is then null) */
  fixedPeriod?: number;
  /** the columns of a row besides `date`, with their JSON type */
  columns: Record<string, z.ZodType>;
}

// The spec: price-scale families (SMA, VWAP, MACD, OBV) are decimal strings, bounded oscillators
// numbers; both are null in the warm-up rows of a young series.
const oscillator = () => number().nullable();
const priceScale = () => decimal().nullable();

const starterFor = (...periods: number[]) => ({ periods, plan: 'starter' as const });

// Plans and periods: the specification's table; cmf, adx and vwap (which it does not list) take the
// reference contract's shape (no period parameter) and, like the other no-window families macd and
// obv, the Pro plan.
const INDICATORS: Indicator[] = [
  { name: 'rsi', fn: 'rsi', operationId: 'rSIRelativeStrengthIndex', plan: 'starter', columns: { value: oscillator() },
    summary: 'Daily RSI (TA-Lib, Wilder smoothing), 0-100: above 70 overbought, below 30 oversold.',
    periods: { allowed: [7, 14, 21, 28], default: 14, higher: starterFor(21, 28) } },
  { name: 'stoch-rsi', fn: 'stoch_rsi', operationId: 'stochasticRSI', plan: 'pro', columns: { k: oscillator(), d: oscillator() },
    summary: 'Daily Stochastic RSI (TA-Lib STOCHRSI, %K over `period` RSI values, %D its 3-day SMA), 0-100.',
    periods: { allowed: [7, 14, 21, 28], default: 14, higher: starterFor(21, 28) } },
  { name: 'sma', fn: 'sma', operationId: 'sMASimpleMovingAverage', plan: 'starter', columns: { value: priceScale() },
    summary: 'Daily simple moving average of the close, as decimal strings (USD).',
    periods: { allowed: [50, 100, 200], default: 50 } },
  { name: 'cci', fn: 'cci', operationId: 'cCICommodityChannelIndex', plan: 'starter', columns: { value: oscillator() },
    summary: 'Daily Commodity Channel Index (TA-Lib, mean deviation); beyond +/-100 marks a strong trend.',
    periods: { allowed: [20, 50, 100], default: 20 } },
  { name: 'mfi', fn: 'mfi', operationId: 'mFIMoneyFlowIndex', plan: 'pro', columns: { value: oscillator() },
    summary: 'Daily Money Flow Index (TA-Lib), 0-100: above 80 overbought, below 20 oversold.',
    periods: { allowed: [7, 14, 28], default: 14 } },
  { name: 'williams-r', fn: 'williams_r', operationId: 'williamsR', plan: 'pro', columns: { value: oscillator() },
    summary: 'Daily Williams %R (TA-Lib WILLR), -100-0: above -20 overbought, below -80 oversold.',
    periods: { allowed: [14, 20, 50], default: 14 } },
  { name: 'price-volatility', fn: 'price_volatility', operationId: 'priceVolatility', plan: 'pro', columns: { value: oscillator() },
    summary: 'Daily price volatility: sample standard deviation of daily log returns over the window, percent, not annualized.',
    periods: { allowed: [7, 14, 30], default: 7, higher: starterFor(30) } },
  { name: 'volume-volatility', fn: 'volume_volatility', operationId: 'volumeVolatility', plan: 'starter', columns: { value: oscillator() },
    summary: 'Daily volume volatility: sample standard deviation of daily log volume changes over the window, percent.',
    periods: { allowed: [7, 14, 30], default: 7, higher: starterFor(30) } },
  { name: 'macd', fn: 'macd', operationId: 'mACD', plan: 'pro', columns: { macd: priceScale(), signal: priceScale(), histogram: priceScale() },
    summary: 'Daily MACD 12/26/9 (TA-Lib): macd, signal and histogram as decimal strings.' },
  { name: 'obv', fn: 'obv', operationId: 'oBVOnBalanceVolume', plan: 'pro', columns: { value: priceScale() },
    summary: 'Daily on-balance volume (TA-Lib OBV, USD volume) as decimal strings.' },
  { name: 'cmf', fn: 'cmf', operationId: 'cMFChaikinMoneyFlow', plan: 'pro', columns: { value: oscillator() }, fixedPeriod: 20,
    summary: 'Daily Chaikin Money Flow over 20 days, -1 to 1: positive is buying pressure.' },
  { name: 'adx', fn: 'adx', operationId: 'aDXAverageDirectionalIndex', plan: 'pro', columns: { adx: oscillator(), plus_di: oscillator(), minus_di: oscillator() }, fixedPeriod: 14,
    summary: 'Daily ADX with +DI and -DI over 14 days (TA-Lib ADX, PLUS_DI, MINUS_DI).' },
  { name: 'vwap', fn: 'vwap', operationId: 'vWAPVolumeWeightedAveragePrice', plan: 'pro', columns: { value: priceScale() }, fixedPeriod: 20,
    summary: 'Daily rolling 20-day volume-weighted average price as decimal strings (USD).' },
];

// The snapshot's raw data per indicator (sql/functions/390_indicator_snapshot.sql): null in warm-up.
const snapshotItem = (indicators: [string, ...string[]], data: z.ZodRawShape) =>
  z.object({
    indicator: z.enum(indicators),
    state: z.enum(['bullish', 'bearish', 'neutral', 'overbought', 'oversold']),
    score: int('+1 bullish or oversold, -1 bearish or overbought, 0 neutral.'),
    data: z.object(data),
  });
const IndicatorReading = resource('IndicatorReading', z.union([
  snapshotItem(['rsi', 'mfi', 'williams-r', 'cci', 'cmf', 'price-volatility', 'volume-volatility'], { value: oscillator(), period: int() }),
  snapshotItem(['stoch-rsi'], { k: oscillator(), d: oscillator(), period: int() }),
  snapshotItem(['macd'], { value: priceScale(), signal: priceScale(), histogram: priceScale() }),
  snapshotItem(['sma', 'vwap'], { value: priceScale(), close: decimal('The latest daily close.'), period: int() }),
  snapshotItem(['obv'], { value: priceScale(), change: priceScale().describe('OBV minus its value `window` days earlier.'), window: int() }),
  snapshotItem(['adx'], { value: oscillator(), plus_di: oscillator(), minus_di: oscillator(), period: int() }),
]));


const windowFields = {
  start: query.date().optional().describe('ISO date (YYYY-MM-DD) lower bound, inclusive.'),
  end: query.date().optional().describe('ISO date (YYYY-MM-DD) upper bound, inclusive.'),
  limit: query.int(1, 1000).optional().default(365).describe('The most recent N rows of the window (1-1000), returned oldest first.'),
};

const startNotAfterEnd = (value: { start?: string; end?: string }, ctx: z.RefinementCtx) => {
  if (value.start && value.end && value.start > value.end) ctx.addIssue({ code: 'custom', path: ['end'], message: 'Must not be before start.' });
};

function seriesQuery(periods: Periods | undefined) {
  if (!periods) return z.object(windowFields).superRefine(startNotAfterEnd);
  const period = z
    .string()
    .refine((value) => periods.allowed.map(String).includes(value), `Must be one of ${periods.allowed.join(', ')}.`)
    .transform(Number)
    .optional()
    .default(periods.default)
    .describe(`Window in days: one of ${periods.allowed.join(', ')} (default ${periods.default}).`);
  return z.object({ period, ...windowFields }).superRefine(startNotAfterEnd);
}


/** The longer periods' own plan, as the refusal names them: 'The 28-day rsi window requires …'. */
const higherWindow = (name: string, higher: NonNullable<Periods['higher']>) => ({
  plan: higher.plan,
  of: (q: { period?: number }) => (higher.periods.includes(q.period!) ? `${q.period}-day ${name}` : undefined),
  described: `the ${higher.periods.join('- and ')}-day ${higher.periods.length > 1 ? 'windows need' : 'window needs'} ${higher.plan}`,
});

function seriesRoute(indicator: Indicator) {
  const { periods } = indicator;
  return defineRoute({
    method: 'get',
    path: `/coins/{slug}/indicators/${indicator.name}`,
    cache: MARKET_CACHE,
    operationId: indicator.operationId,
    tag: 'Indicators',
    summary: indicator.summary,
    plan: indicator.plan,
    ...(periods?.higher ? { window: higherWindow(indicator.name, periods.higher) } : {}),
    params: slugParams('coin'),
    response: envelope(z.array(z.object({ date: day(), ...indicator.columns })), z.object({
      coin: text('The coin slug.'),
      indicator: z.literal(indicator.name),
      // null: the endpoint has no period parameter
      period: periods ? int('Window in days.') : z.null(),
      count: int(),
    })),
    query: seriesQuery(periods) as z.ZodType<{ period?: number; start?: string; end?: string; limit: number }, Record<string, unknown>>,
    handler: async ({ params, query: q, deps: { sql } }) => {
      const period = q.period ?? indicator.fixedPeriod;
      const rows = await sql`
        select date::text as date, ${sql(Object.keys(indicator.columns))}
        from api.${sql(indicator.fn)}(
          p_slug => ${params.slug},
          ${period === undefined ? sql`` : sql`p_period => ${period}::int,`}
          p_start => ${q.start ?? null}::date,
          p_end => ${q.end ?? null}::date,
          p_limit => ${q.limit}::int)`;
      return {
        data: rows,
        meta: { coin: params.slug, indicator: indicator.name, period: q.period ?? null, count: rows.length },
      };
    },
  });
}

export const indicatorRoutes = [
  defineRoute({
    method: 'get',
    path: '/coins/{slug}/indicators',
    cache: MARKET_CACHE,
    operationId: 'indicatorSnapshot',
    tag: 'Indicators',
    summary: 'Every indicator’s latest reading with a state (bullish, bearish, neutral, overbought, oversold), a score and the raw data.',
    plan: 'pro',
    params: slugParams('coin'),
    query: z.object({}),
    response: envelope(z.array(IndicatorReading), z.object({ coin: text('The coin slug.'), date: day('The latest daily bar.') })),
    handler: async ({ params, deps: { sql } }) => {
      const rows = await sql<{ indicator: string; state: string; score: number; data: unknown; date: string }[]>`
        select indicator, state, score, data, date::text as date from api.coin_indicators(${params.slug})`;
      if (rows.length === 0) throw new ApiError(404, 'not_found', 'No indicator data for this coin yet.');
      return {
        data: rows.map(({ date: _date, ...reading }) => reading),
        meta: { coin: params.slug, date: rows[0]!.date },
      };
    },
  }),
  ...INDICATORS.map(seriesRoute),
];
