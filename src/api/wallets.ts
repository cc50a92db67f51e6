// Wallets group: wallet reviews listed (filters, sort, pagination, meta.top_score over all
// wallets), the release timeline, compare, detail with the grouped tag taxonomy, and a wallet's
// supported coins in the coin list's shape. SQL: sql/functions/740_api_wallets.sql.
import { CONTENT_CACHE } from '../http/cache.ts';
import { z } from 'zod';
import { pageAnswer, paginationQuery } from '../http/envelope.ts';
import { defineRoute, type HandlerInput } from '../http/routes.ts';
import { day, envelope, int, number, pageOf, resource, text, url } from '../http/schemas.ts';
import { capCombined, query, slugParams } from '../http/validation.ts';
import { coinListPage, coinRow, listQuery as coinListQuery, listOrNull } from './coins.ts';

const SORTABLE = ['score', 'released_at', 'assets', 'pros', 'cons'] as const;
const DEFAULT_PER_PAGE = 100;
const tag = 'Wallets';

const score = () => query.int(0, 100);
const listQuery = z
  .object({
    ...paginationQuery,
    search: z.string().max(100).optional().describe('Case-insensitive substring of the wallet name or slug.'),
    min_score: score().optional().describe('Inclusive lower bound of the score (0-100).'),
    max_score: score().optional().describe('Inclusive upper bound of the score (0-100).'),
    tags: query.slugList('tag', 1000).optional().describe('CSV of tag slugs (see a wallet\'s categories); a wallet must carry all of them.'),
    ids: query.intList(1000).optional().describe('CSV of wallet ids; ids and slugs take at most 100 selectors combined.'),
    slugs: query.slugList('wallet', 2000).optional().describe('CSV of wallet slugs.'),
    sort: query.sort(SORTABLE, 100).optional().describe(`Comma-separated fields, - for descending, nulls last: ${SORTABLE.join(', ')}.`),
  })
  .superRefine(capCombined(['ids', 'slugs'], 100));
type ListQuery = z.output<typeof listQuery>;

// Response shapes (api.wallets, market.wallet_json). meta.top_score is null when no wallet is published.
const topScore = number('The highest score of all wallets, to normalise scores.').nullable();
const walletFields = {
  id: int(), slug: text(), name: text(),
  score: number('0-100.').min(0).max(100),
  assets: int('Supported coins in a public listing status.'), pros: int(), cons: int(),
  price_model: z.enum(['free', 'freemium', 'paid']),
  status: z.enum(['Active', 'Discontinued']),
  released_at: day().nullable(),
  logo: url(),
};
const walletRow = resource('WalletListItem', z.object(walletFields));
const wallet = resource('Wallet', z.object({
  ...walletFields,
  website: url().nullable(),
  description: text().nullable(),
  highlights: z.object({ pros: z.array(text()), cons: z.array(text()) }),
  categories: z.array(z.object({
    group: text('Taxonomy category slug.'), name: text(),
    tags: z.array(z.object({ slug: text(), name: text(), value: text().nullable() })),
  })).describe('Only the categories the wallet has tags in, in taxonomy order.'),
}));
const walletPage = pageOf(walletRow, { top_score: topScore });

const listHandler = (list: 'all' | 'timeline') => async ({ query: q, ctx, deps: { sql } }: HandlerInput<ListQuery, unknown, unknown>) => {
  const perPage = q.per_page ?? DEFAULT_PER_PAGE;
  const [row] = await sql<{ page: { total: number; top_score: number | null; data: unknown[] } }[]>`
    select api.wallet_list(
      p_list => ${list},
      p_search => ${q.search ?? null},
      p_min_score => ${q.min_score ?? null}::numeric,
      p_max_score => ${q.max_score ?? null}::numeric,
      p_tags => ${listOrNull(q.tags)}::text[],
      p_ids => ${listOrNull(q.ids)}::int[],
      p_slugs => ${listOrNull(q.slugs)}::text[],
      p_sort => ${listOrNull(q.sort)}::text[],
      p_page => ${q.page},
      p_per_page => ${perPage}
    ) as page`;
  return pageAnswer(ctx, q.page, perPage, row!.page, { top_score: row!.page.top_score });
};

export const walletRoutes = [
  defineRoute({
    method: 'get', path: '/wallets', cache: CONTENT_CACHE, operationId: 'listWallets', tag, plan: 'free', query: listQuery, response: walletPage,
    summary: 'Wallet reviews with score (0-100), supported-asset count, pros/cons counts, price model and release date; filters, selectors and a multi-field sort (default: highest score first), paginated. meta.top_score is the highest score of all wallets.',
    handler: listHandler('all'),
  }),
  defineRoute({
    method: 'get', path: '/wallets/timeline', cache: CONTENT_CACHE, operationId: 'walletReleaseTimeline', tag, plan: 'free', query: listQuery, response: walletPage,
    summary: 'Wallets by release date, newest first (unknown dates last); `sort` replaces that order. Same filters, rows and meta as /wallets.',
    handler: listHandler('timeline'),
  }),
  defineRoute({
    method: 'get', path: '/wallets/compare', cache: CONTENT_CACHE, operationId: 'compareWallets', tag, plan: 'free',
    response: envelope(z.array(wallet).min(2).max(4), z.object({ top_score: topScore, count: int() })),
    query: z.object({
      slugs: query
        .slugList('wallet', 1000)
        .refine((items) => items.length >= 2 && items.length <= 4, 'Give 2 to 4 wallet slugs.')
        .refine((items) => new Set(items).size === items.length, 'Each wallet may be given once.')
        .describe('CSV of 2 to 4 wallet slugs, compared in that order.'),
    }),
    summary: 'Two to four wallets side by side, in the order given, each with its detail fields and grouped tag categories.',
    handler: async ({ query: q, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown[]; top_score: number | null }[]>`
        select api.wallet_compare(${q.slugs}::text[]) as data, api.wallet_top_score() as top_score`;
      return { data: row!.data, meta: { top_score: row!.top_score, count: row!.data.length } };
    },
  }),
  defineRoute({
    method: 'get', path: '/wallets/{slug}', cache: CONTENT_CACHE, operationId: 'getWalletDetail', tag, plan: 'free', params: slugParams('wallet'),
    response: envelope(wallet, z.object({ top_score: topScore })),
    summary: 'Wallet detail: the list fields plus website, description, highlights (pros and cons texts) and its tags grouped by taxonomy category (`categories`: [{group, name, tags: [{slug, name, value}]}]); status is Active or Discontinued.',
    handler: async ({ params: { slug }, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown; top_score: number | null }[]>`
        select api.wallet_detail(${slug}) as data, api.wallet_top_score() as top_score`;
      return { data: row!.data, meta: { top_score: row!.top_score } };
    },
  }),
  defineRoute({
    method: 'get', path: '/wallets/{slug}/assets', cache: CONTENT_CACHE, operationId: 'walletSupportedCoins', tag, plan: 'free',
    params: slugParams('wallet'), query: coinListQuery, response: pageOf(coinRow),
    summary: 'Coins the wallet supports, in the coin list\'s row shape, filters and sort, paginated.',
    handler: (input) => coinListPage(input, 'all', input.deps.sql`market.wallet_coin_ids(${input.params.slug})`),
  }),
];
