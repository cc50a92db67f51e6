// Editorial group: articles (list, detail, feedback), videos (a coin's, one by id) and insights
// (list, one by id, a coin's timeline). Published (ACTIVE) content only; `locale` picks the texts
// with per-field English fallback and each item's `locale` says which won; reads never change view
// counts. SQL: sql/functions/750_api_editorial.sql.
import { CONTENT_CACHE } from '../http/cache.ts';
import { z } from 'zod';
import { pageAnswer, paginationQuery } from '../http/envelope.ts';
import { defineRoute } from '../http/routes.ts';
import { envelope, int, pageOf, resource, text, timestamp, url } from '../http/schemas.ts';
import { query, slugParams } from '../http/validation.ts';
import { localeQuery } from './coins.ts';
import { slug } from '../validators.ts';

const tag = 'Editorial';
const ARTICLE_TAGS = ['news', 'guide', 'tutorial', 'explainer', 'analysis', 'review', 'trading', 'overview', 'information'] as const;
const VIDEO_TYPES = ['overview', 'tutorial', 'explainer', 'review', 'analysis', 'news'] as const;
const INSIGHT_TYPES = ['per_asset', 'market_overview', 'narrative'] as const;

const locale = localeQuery.describe('Language of the texts (en, de, pt-BR ...); each field falls back to the base language, then English. Each item\'s locale says which won.');
const relatedSlug = (what: 'coin' | 'exchange' | 'wallet') => slug(what).optional().describe(`Only content related to this ${what} (slug).`);
const search = z.string().max(100).optional();
/** page and per_page of the Editorial lists: per_page 1-50 with the list's own default */
const pageFields = (defaultPerPage: number) => ({
  page: paginationQuery.page,
  per_page: query.int(1, 50).optional().default(defaultPerPage).describe(`1-50, default ${defaultPerPage}.`),
});
const idParams = z.object({ id: query.int(1, 2_147_483_647) });

interface Page { total: number; data: unknown[] }

// Response shapes (market.article_json, market.video_json, market.insight_json).
const entity = z.object({
  type: z.enum(['coin', 'exchange', 'wallet']),
  slug: text(),
  name: text('Null while no coin, exchange or published wallet has the slug.').nullable(),
});
/** What market.localize adds: the locale that won and the fields taken from another locale. */
const localized = {
  locale: text('The locale whose texts were served (the most specific one with a translation).'),
  fallback_fields: z.array(text()).describe('Fields that came from another locale (sorted).'),
};
const articleFields = {
  id: int(), slug: text(), title: text(), subtitle: text().nullable(), ...localized,
  tags: z.array(z.enum(ARTICLE_TAGS)),
  reading_time_minutes: int('At 200 words a minute, at least 1.'),
  hero_image: url().nullable(),
  entities: z.array(entity),
  published_at: timestamp(), updated_at: timestamp(),
};
const ArticleSummary = resource('ArticleSummary', z.object(articleFields), 'An article in a list (no body).');
const Article = resource('Article', z.object({
  ...articleFields, body: text('HTML.'), views: int(), helpful_yes: int(), helpful_no: int(),
}), 'A published article with its HTML body.');
const Video = resource('Video', z.object({
  id: int(), type: z.enum(VIDEO_TYPES), title: text(), description: text().nullable(), url: url(),
  thumbnail: url().nullable(), duration_seconds: int().nullable(), channel: text().nullable(),
  entities: z.array(entity), published_at: timestamp(),
}), 'A published video.');
const VideoDetail = resource('VideoDetail', Video.extend({ views: int() }), 'A published video with its views.');
const insightFields = {
  id: int(), type: z.enum(INSIGHT_TYPES), sentiment: z.enum(['bullish', 'bearish', 'neutral']).nullable(),
  title: text(), summary: text().nullable(), ...localized,
  entities: z.array(entity), first_reported_at: timestamp(), last_updated_at: timestamp(),
};
const InsightSummary = resource('InsightSummary', z.object(insightFields), 'An insight in a list (no body).');
const Insight = resource('Insight', z.object({ ...insightFields, body: text().nullable(), views: int() }), 'A published insight with its body.');
const localeMeta = z.object({ requested_locale: text(), locale: text() });

export const editorialRoutes = [
  defineRoute({
    method: 'get', path: '/coins/{slug}/videos', cache: CONTENT_CACHE, operationId: 'coinVideos', tag, plan: 'free', params: slugParams('coin'),
    query: z.object({
      ...pageFields(10),
      type: z.enum(VIDEO_TYPES).optional(),
      search: search.describe('Case-insensitive substring of the title or description.'),
    }),
    response: pageOf(Video, { coin: text() }),
    summary: 'Published videos related to the coin, newest first, by type and search, paginated.',
    handler: async ({ params: { slug }, query: q, ctx, deps: { sql } }) => {
      const [row] = await sql<{ page: Page }[]>`
        select api.coin_videos(${slug}, ${q.type ?? null}, ${q.search ?? null}, ${q.page}, ${q.per_page}) as page`;
      return pageAnswer(ctx, q.page, q.per_page, row!.page, { coin: slug });
    },
  }),
  defineRoute({
    method: 'get', path: '/coins/{slug}/insights', cache: CONTENT_CACHE, operationId: 'coinInsightTimeline', tag, plan: 'free', params: slugParams('coin'),
    query: z.object({
      locale,
      offset: query.int(0, 500).optional().default(0).describe('Insights to skip (0-500).'),
      limit: query.int(1, 50).optional().default(5).describe('Insights to return (1-50, default 5).'),
    }),
    response: envelope(z.array(InsightSummary), z.object({ coin: text(), locale: text(), offset: int(), limit: int(), total: int() })),
    summary: 'The coin\'s insight timeline: published insights related to it, newest first reported first, by offset and limit.',
    handler: async ({ params: { slug }, query: q, deps: { sql } }) => {
      const [row] = await sql<{ page: Page }[]>`select api.coin_insights(${slug}, ${q.locale}, ${q.offset}, ${q.limit}) as page`;
      return { data: row!.page.data, meta: { coin: slug, locale: q.locale, offset: q.offset, limit: q.limit, total: row!.page.total } };
    },
  }),
  defineRoute({
    method: 'get', path: '/articles', cache: CONTENT_CACHE, operationId: 'listArticles', tag, plan: 'free',
    query: z.object({
      ...pageFields(20),
      locale,
      tag: z.enum(ARTICLE_TAGS).optional(),
      coin: relatedSlug('coin'),
      exchange: relatedSlug('exchange'),
      wallet: relatedSlug('wallet'),
      search: search.describe('Case-insensitive substring of the (localized) title or subtitle.'),
    }),
    response: pageOf(ArticleSummary),
    summary: 'Published articles, newest first, by tag, related coin, exchange or wallet, and search; texts in `locale` with per-field English fallback; paginated.',
    handler: async ({ query: q, ctx, deps: { sql } }) => {
      const [row] = await sql<{ page: Page }[]>`
        select api.article_list(${q.locale}, ${q.tag ?? null}, ${q.coin ?? null}, ${q.exchange ?? null}, ${q.wallet ?? null},
          ${q.search ?? null}, ${q.page}, ${q.per_page}) as page`;
      return pageAnswer(ctx, q.page, q.per_page, row!.page);
    },
  }),
  defineRoute({
    method: 'get', path: '/articles/{slug}', cache: CONTENT_CACHE, operationId: 'getAnArticle', tag, plan: 'free', params: slugParams('article', 200), query: z.object({ locale }),
    response: envelope(Article, localeMeta),
    summary: 'A published article with its HTML body, helpful counts and views, in `locale` with per-field English fallback (`locale` says which won, `fallback_fields` which fields came from elsewhere). Reading it does not count a view.',
    handler: async ({ params: { slug }, query: q, deps: { sql } }) => {
      const [row] = await sql<{ data: { locale: string } }[]>`select api.article_detail(${slug}, ${q.locale}) as data`;
      return { data: row!.data, meta: { requested_locale: q.locale, locale: row!.data.locale } };
    },
  }),
  defineRoute({
    method: 'post', path: '/articles/{slug}/feedback', operationId: 'submitArticleFeedback', tag, plan: 'free', params: slugParams('article', 200),
    body: z.object({ helpful: z.boolean({ error: 'Must be true or false.' }) }),
    response: envelope(z.object({ article: text('The article\'s slug.'), helpful_yes: int(), helpful_no: int() })),
    summary: 'Answers "was this article helpful?" (body {"helpful": true|false}) and returns the article\'s helpful_yes and helpful_no counts.',
    handler: async ({ params: { slug }, body, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select api.article_feedback(${slug}, ${body.helpful}) as data`;
      return { data: row!.data };
    },
  }),
  defineRoute({
    method: 'get', path: '/videos/{id}', cache: CONTENT_CACHE, operationId: 'getAVideo', tag, plan: 'free', params: idParams,
    response: envelope(VideoDetail),
    summary: 'A published video: type, title, description, url, thumbnail, duration, channel, related coins, exchanges and wallets, views. Reading it does not count a view.',
    handler: async ({ params: { id }, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select api.video_detail(${id}) as data`;
      return { data: row!.data };
    },
  }),
  defineRoute({
    method: 'get', path: '/insights', cache: CONTENT_CACHE, operationId: 'listInsights', tag, plan: 'free',
    query: z.object({
      ...pageFields(20),
      locale,
      type: z.enum(INSIGHT_TYPES).optional(),
      coin: relatedSlug('coin'),
      search: search.describe('Case-insensitive substring of the (localized) title or summary.'),
      sort: z.enum(['first_reported', 'last_updated']).optional().default('first_reported').describe('Newest first by first report (default) or by last update.'),
    }),
    response: pageOf(InsightSummary, { sort: z.enum(['first_reported', 'last_updated']) }),
    summary: 'Published insights, newest first, by type, related coin and search; texts in `locale` with per-field English fallback; paginated.',
    handler: async ({ query: q, ctx, deps: { sql } }) => {
      const [row] = await sql<{ page: Page }[]>`
        select api.insight_list(${q.locale}, ${q.type ?? null}, ${q.coin ?? null}, ${q.search ?? null}, ${q.sort}, ${q.page}, ${q.per_page}) as page`;
      return pageAnswer(ctx, q.page, q.per_page, row!.page, { sort: q.sort });
    },
  }),
  defineRoute({
    method: 'get', path: '/insights/{id}', cache: CONTENT_CACHE, operationId: 'getAnInsight', tag, plan: 'free', params: idParams, query: z.object({ locale }),
    response: envelope(Insight, localeMeta),
    summary: 'A published insight with its body and views, in `locale` with per-field English fallback. Reading it does not count a view.',
    handler: async ({ params: { id }, query: q, deps: { sql } }) => {
      const [row] = await sql<{ data: { locale: string } }[]>`select api.insight_detail(${id}, ${q.locale}) as data`;
      return { data: row!.data, meta: { requested_locale: q.locale, locale: row!.data.locale } };
    },
  }),
];
