// The content files of `mdapi import-content DIR`, version 1: one zod schema per file. What the
// schemas accept is what the SQL importers (sql/functions/725_import_wallets.sql,
// 730_import_editorial.sql) write; the database's checks stand behind them.
import { z } from 'zod';
import { date, locale, storedSlug } from '../validators.ts';

const slug = storedSlug();
const url = z.string().max(2000).regex(/^https?:\/\/\S+$/, 'Must be an http(s) URL.');
const instant = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/, 'Must be an ISO 8601 date-time with an offset, e.g. 2026-01-31T09:00:00Z.')
  .refine((value) => !Number.isNaN(Date.parse(value)), 'Must be a real date-time.');
const text = (max: number) => z.string().trim().min(1).max(max);
const status = z.enum(['ACTIVE', 'DRAFT', 'ARCHIVED']);
const uniqueSlugs = z.array(slug).max(500).refine((items) => new Set(items).size === items.length, 'Must not repeat a slug.');

/** The data source content is recorded under (market.data_sources); default content-import. */
const source = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9_-]*$/, 'Must be a source name (lowercase, digits, _ and -).'),
  demo: z.boolean().optional(),
  description: text(500).optional(),
});

/** Related coins, exchanges and wallets, by slug. */
const related = { coins: uniqueSlugs.optional(), exchanges: uniqueSlugs.optional(), wallets: uniqueSlugs.optional() };

/** A list whose items must not share a key: the error points at the repeated item. */
const keyedList = <T extends z.ZodType>(item: T, key: (value: z.output<T>) => string | number, what: string) =>
  z.array(item).superRefine((items, ctx) => {
    const seen = new Set<string | number>();
    items.forEach((value, index) => {
      const k = key(value);
      if (seen.has(k)) ctx.addIssue({ code: 'custom', path: [index], message: `Repeats the ${what} ${k}.` });
      seen.add(k);
    });
  });

const walletTag = z.strictObject({ slug, name: text(200) });
const wallet = z.strictObject({
  slug,
  name: text(200),
  status: z.enum(['ACTIVE', 'DISCONTINUED', 'DRAFT']).optional(),
  // a JSON number: PostgreSQL reads it from the jsonb as numeric, never through a float
  score: z.number().min(0).max(100).refine((value) => Math.round(value * 10) === value * 10, 'At most one decimal.'),
  price_model: z.enum(['free', 'freemium', 'paid']),
  released_at: date().optional(),
  description: text(5000).optional(),
  pros: z.array(text(300)).max(50).optional(),
  cons: z.array(text(300)).max(50).optional(),
  logo: url.optional(),
  website: url.optional(),
  tags: uniqueSlugs.optional(),
  coins: uniqueSlugs.optional(),
});

export const walletsFile = z
  .strictObject({
    version: z.literal(1),
    source: source.optional(),
    categories: keyedList(z.strictObject({ slug, name: text(200), tags: z.array(walletTag) }), (c) => c.slug, 'category'),
    wallets: keyedList(wallet, (w) => w.slug, 'wallet slug'),
  })
  .superRefine((file, ctx) => {
    const tags = file.categories.flatMap((category) => category.tags.map((tag) => tag.slug));
    const known = new Set(tags);
    if (known.size !== tags.length) ctx.addIssue({ code: 'custom', path: ['categories'], message: 'A tag slug appears in more than one place.' });
    file.wallets.forEach((w, index) =>
      w.tags?.forEach((tag, t) => {
        if (!known.has(tag)) ctx.addIssue({ code: 'custom', path: ['wallets', index, 'tags', t], message: `Unknown tag "${tag}": not in categories.` });
      }),
    );
  });

const articleText = { title: text(300), subtitle: text(500).optional(), body: text(200_000) };
export const articlesFile = z.strictObject({
  version: z.literal(1),
  source: source.optional(),
  articles: keyedList(
    z
      .strictObject({
        slug: storedSlug(200),
        status: status.optional(),
        tags: z.array(z.enum(['news', 'guide', 'tutorial', 'explainer', 'analysis', 'review', 'trading', 'overview', 'information'])).optional(),
        hero_image: url.optional(),
        published_at: instant,
        updated_at: instant.optional(),
        translations: translations({ title: articleText.title.optional(), subtitle: articleText.subtitle, body: articleText.body.optional() }, ['title', 'body']),
        ...related,
      })
      .superRefine(notBefore('updated_at', 'published_at')),
    (a) => a.slug,
    'article slug',
  ),
});

export const videosFile = z.strictObject({
  version: z.literal(1),
  source: source.optional(),
  videos: keyedList(
    z.strictObject({
      id: z.number().int().min(1).max(2_147_483_647),
      status: status.optional(),
      type: z.enum(['overview', 'tutorial', 'explainer', 'review', 'analysis', 'news']),
      title: text(300),
      description: text(5000).optional(),
      url,
      thumbnail: url.optional(),
      duration_seconds: z.number().int().min(1).max(86_400).optional(),
      channel: text(200).optional(),
      published_at: instant,
      ...related,
    }),
    (v) => v.id,
    'video id',
  ),
});

export const insightsFile = z.strictObject({
  version: z.literal(1),
  source: source.optional(),
  insights: keyedList(
    z
      .strictObject({
        id: z.number().int().min(1).max(2_147_483_647),
        status: status.optional(),
        type: z.enum(['per_asset', 'market_overview', 'narrative']),
        sentiment: z.enum(['bullish', 'bearish', 'neutral']).optional(),
        first_reported_at: instant,
        last_updated_at: instant.optional(),
        translations: translations({ title: text(300).optional(), summary: text(1000).optional(), body: text(50_000).optional() }, ['title']),
        ...related,
      })
      .superRefine(notBefore('last_updated_at', 'first_reported_at')),
    (i) => i.id,
    'insight id',
  ),
});

/** The files of a content directory, in import order, each with its schema. */
export const CONTENT_FILES = [
  { kind: 'wallets', file: 'wallets.json', schema: walletsFile, items: 'wallets' },
  { kind: 'articles', file: 'articles.json', schema: articlesFile, items: 'articles' },
  { kind: 'videos', file: 'videos.json', schema: videosFile, items: 'videos' },
  { kind: 'insights', file: 'insights.json', schema: insightsFile, items: 'insights' },
] as const;

export type ContentKind = (typeof CONTENT_FILES)[number]['kind'];

/** Texts by locale: English complete (with `required`), as every other locale falls back to it field by field. */
function translations<Shape extends z.ZodRawShape>(fields: Shape, required: (keyof Shape & string)[]) {
  return z.record(locale, z.strictObject(fields)).superRefine(requireEnglish(required));
}

function requireEnglish(fields: string[]) {
  return (translations: Record<string, Record<string, unknown>>, ctx: z.RefinementCtx) => {
    const english = translations.en;
    if (!english) {
      ctx.addIssue({ code: 'custom', path: ['en'], message: 'An English (en) translation is required: it is every other locale\'s fallback.' });
      return;
    }
    for (const field of fields) {
      if (english[field] === undefined) ctx.addIssue({ code: 'custom', path: ['en', field], message: 'Required in English.' });
    }
  };
}

function notBefore(later: string, earlier: string) {
  return (item: Record<string, unknown>, ctx: z.RefinementCtx) => {
    const a = item[later];
    const b = item[earlier];
    if (typeof a === 'string' && typeof b === 'string' && Date.parse(a) < Date.parse(b)) {
      ctx.addIssue({ code: 'custom', path: [later], message: `Must not be before ${earlier}.` });
    }
  };
}
