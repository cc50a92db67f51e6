// Conversion group: an amount of one asset in up to ten others (crypto and fiat, through USD), the
// fiat currencies with their USD rates, and every currency usable as a conversion leg. Amounts and
// values are computed in numeric; values leave as decimal strings, the echoed amount as a JSON number (the reference's type). SQL: sql/functions/530_api_conversion.sql.
import { MARKET_CACHE } from '../http/cache.ts';
import { z } from 'zod';
import { defineRoute } from '../http/routes.ts';
import { decimal, envelope, int, number, resource, text, timestamp } from '../http/schemas.ts';
import { query } from '../http/validation.ts';
import { slug } from '../validators.ts';

const tag = 'Conversion';

const legType = z.enum(['fiat', 'coin', 'token']);
const leg = { slug: text('A coin slug or a lowercase fiat code.'), symbol: text(), name: text(), type: legType };
const conversion = resource('Conversion', z.object({
  from: z.object(leg),
  amount: number('The amount converted, as a JSON number (the reference\'s type).'),
  results: z.array(z.object({ ...leg, value: decimal('The amount in this asset, to 15 significant digits.') })),
}), 'An amount of one asset in others.');
const usdMeta = z.object({ base: z.literal('USD') });
const countedMeta = usdMeta.extend({ count: int() });

const fiat = resource('FiatCurrency', z.object({
  slug: text(), symbol: text(), name: text(), sign: text().nullable(),
  rate_per_usd: decimal('Units per 1 USD.'),
  usd_value: decimal('USD per unit.'),
  updated_at: timestamp('Time of the rate.'),
  source: text('Where the rate comes from.'),
  demo: z.boolean().describe('True for a placeholder rate.'),
}), 'A fiat currency with its USD rate.');

const rate = resource('ConversionRate', z.object({
  slug: text(), symbol: text(), name: text(), type: legType,
  usd_value: decimal('USD per unit.'),
  updated_at: timestamp('Time of the rate or price.').nullable(),
}), 'A currency usable as a conversion leg, with its USD value.');

export const conversionRoutes = [
  defineRoute({
    method: 'get', path: '/convert', cache: MARKET_CACHE, operationId: 'convertBetweenAssets', tag, plan: 'free',
    query: z.object({
      from: slug('asset')
        .describe('Source asset: a coin slug (bitcoin) or a fiat code (usd, EUR).'),
      to: query.slugList('asset', 1300)
        .refine((items) => items.length >= 1 && items.length <= 10, 'Must name 1 to 10 assets.')
        .describe('Target assets, comma-separated (up to 10): coin slugs or fiat codes.'),
      amount: query.decimal().refine((value) => value.length <= 40, 'At most 40 characters.').optional().default('1')
        .describe('Amount of the source asset (non-negative decimal, default 1).'),
    }),
    response: envelope(conversion, usdMeta),
    summary: 'Converts an amount of one active asset (coin or fiat) into up to ten others through USD; amount is echoed as a JSON number, values are decimal strings. Unknown asset: 404.',
    handler: async ({ query: q, deps: { sql } }) => {
      const [row] = await sql<{ result: unknown }[]>`select api.convert(${q.from}, ${q.to}::text[], ${q.amount}::numeric) as result`;
      return { data: row!.result, meta: { base: 'USD' } };
    },
  }),
  defineRoute({
    method: 'get', path: '/fiats', cache: MARKET_CACHE, operationId: 'listFiatCurrencies', tag, plan: 'free',
    response: envelope(z.array(fiat), countedMeta),
    summary: 'The active fiat currencies with their USD rate (rate_per_usd, units per USD) and its inverse usd_value, as decimal strings; FX rates refresh about twice daily.',
    handler: async ({ deps: { sql } }) => {
      const rows = await sql`select * from api.fiats()`;
      return { data: [...rows], meta: { base: 'USD', count: rows.length } };
    },
  }),
  defineRoute({
    method: 'get', path: '/rates', cache: MARKET_CACHE, operationId: 'listConversionRates', tag, plan: 'free',
    response: envelope(z.array(rate), countedMeta),
    summary: 'Every vs-currency usable as a conversion leg (the fiats, then the top 100 coins and tokens by rank), each with usd_value, USD per one unit, as a decimal string.',
    handler: async ({ deps: { sql } }) => {
      const rows = await sql`select * from api.conversion_rates()`;
      return { data: [...rows], meta: { base: 'USD', count: rows.length } };
    },
  }),
];
