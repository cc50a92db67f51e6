// Prices group: current prices of a requested set of coins, one coin's price (both optionally in
// a fiat currency) and a coin's price on a past date. SQL: sql/functions/220_api_prices.sql.
import { MARKET_CACHE } from '../http/cache.ts';
import { z } from 'zod';
import { defineRoute } from '../http/routes.ts';
import { query, slugParams } from '../http/validation.ts';
import { day, decimal, envelope, int, number, resource, text, timestamp } from '../http/schemas.ts';
import { capSelectors, listOrNull, selectorFields } from './coins.ts';
import { slug } from '../validators.ts';

// Which currencies exist is the database's business (market.fx_rates): the format is checked here,
// an unknown code by market.fx_rate, whose MD422 names the convert parameter.
export const convert = z
  .string()
  .regex(/^[A-Za-z]{3}$/, 'Must be a three-letter currency code such as USD or EUR.')
  .transform((value) => value.toUpperCase())
  .optional()
  .default('USD')
  .describe('Fiat currency of prices, marketcap and volume (a code with a rate in market.fx_rates, e.g. EUR, GBP, JPY); default USD.');


// The spec: on the price endpoints prices and marketcap are decimal strings (in the convert currency).
const priceRow = resource('CoinPrice', z.object({
  id: int(), slug: text(), symbol: text(), name: text(),
  rank: int().nullable(),
  price: decimal('In the convert currency; null before the first price.').nullable(),
  marketcap: decimal('In the convert currency; null without a circulating supply.').nullable(),
  volume_24h: number('24h volume in the convert currency.'),
  change_24h: number('Percent; null without a price 24 hours old.').nullable(),
  change_7d: number('Percent; null without a price 7 days old.').nullable(),
  change_rank_24h: int().nullable(),
  change_rank_7d: int().nullable(),
  last_updated: timestamp('Time of the latest price.').nullable(),
}), 'The current price row of a coin.');
const priceMeta = z.object({ currency: text('The convert currency, upper case.'), count: int() });

const historicalPrice = resource('HistoricalPrice', z.object({
  slug: text(), symbol: text(),
  date: day('The requested date.'),
  price: decimal('USD close of price_date.'),
  currency: z.literal('USD'),
}), 'A coin\'s USD close on a past date.');


export const priceRoutes = [
  defineRoute({
    method: 'get', path: '/prices', cache: MARKET_CACHE, operationId: 'getPrices', tag: 'Prices', plan: 'free',
    query: z
      .object({ ...selectorFields, convert })
      .superRefine(capSelectors)
      .superRefine((value, ctx) => {
        if (!value.ids?.length && !value.slugs?.length && !value.symbols?.length) {
          ctx.addIssue({ code: 'custom', path: ['ids'], message: 'Pass at least one selector: ids, slugs or symbols.' });
        }
      }),
    response: envelope(z.array(priceRow), priceMeta),
    summary: 'Current price, marketcap, 24h volume and changes of the selected coins (ids, slugs or symbols), optionally converted into a fiat currency.',
    handler: async ({ query: q, deps: { sql } }) => {
      const rows = await sql`
        select * from api.prices(${listOrNull(q.ids)}::int[], ${listOrNull(q.slugs)}::text[], ${listOrNull(q.symbols)}::text[], ${q.convert})`;
      return { data: [...rows], meta: { currency: q.convert, count: rows.length } };
    },
  }),
  defineRoute({
    method: 'get', path: '/prices/{slug}', cache: MARKET_CACHE, operationId: 'getACoinPrice', tag: 'Prices', plan: 'free',
    params: slugParams('coin'),
    query: z.object({ convert }),
    response: envelope(priceRow, priceMeta),
    summary: 'The current price row of one coin, optionally converted into a fiat currency.',
    handler: async ({ params: { slug }, query: q, deps: { sql } }) => {
      const [row] = await sql`select * from api.coin_price(${slug}, ${q.convert})`;
      return { data: row, meta: { currency: q.convert, count: 1 } };
    },
  }),
  defineRoute({
    method: 'get', path: '/historical-price', cache: MARKET_CACHE, operationId: 'historicalPrice', tag: 'Prices', plan: 'free',
    query: z.object({
      slug: slug('coin').describe('Coin slug, e.g. bitcoin; any case.'),
      date: query.historyDate().describe('YYYY-MM-DD, after 2008-12-31 and not in the future (UTC).'),
    }),
    response: envelope(historicalPrice, z.object({ price_date: day('The day whose close it is: the date, else the nearest within 3 days.') })),
    summary: "The coin's USD close on the date from the daily history, else the nearest day's within 3 days (meta.price_date).",
    handler: async ({ query: q, deps: { sql } }) => {
      const [row] = await sql<{ price_date: string }[]>`select * from api.historical_price(${q.slug}, ${q.date}::text::date)`;
      const { price_date, ...data } = row!;
      return { data, meta: { price_date } };
    },
  }),
];
