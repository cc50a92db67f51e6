// What a widget is, as both the widgets (src/widgets, which render and serve them) and the console's
// widget builder (src/console/widgets.ts, which writes their URLs and keys) know it: the names, the
// options each takes with their checks, and the origin rule for the sites a key lists. Below both
// wings, so neither imports the other.
import { z } from 'zod';
import { slug, slugList } from './validators.ts';

export const WIDGET_NAMES = ['ticker', 'coin-card', 'mini-chart'] as const;
export type WidgetName = (typeof WIDGET_NAMES)[number];
export const THEMES = ['light', 'dark'] as const;
export type Theme = (typeof THEMES)[number];
export const RANGES = ['1d', '7d', '30d'] as const;

export const LOCALES = ['en', 'en-GB', 'de', 'fr', 'es', 'it', 'nl', 'pt', 'pt-BR', 'pl', 'sv', 'da', 'fi', 'ja', 'ko', 'zh', 'tr'] as const;
export type Locale = (typeof LOCALES)[number];

const common = {
  theme: z.enum(THEMES, 'Must be light or dark.').default('light'),
  currency: z.string().regex(/^[A-Za-z]{3}$/, 'Must be a currency code such as usd or eur.').transform((code) => code.toLowerCase()).default('usd'),
  locale: z.enum(LOCALES, `Must be one of: ${LOCALES.join(', ')}.`).default('en'),
};
const coin = slug('coin');

/** Each widget's options (theme, currency, locale and its coin, coins or range), as its URL gives them. */
export const WIDGET_OPTIONS = {
  ticker: z.object({
    ...common,
    coins: slugList('coin', 1300).refine((coins) => coins.length >= 1 && coins.length <= 10, 'Name 1 to 10 coins.').default(['bitcoin', 'ethereum']),
  }),
  'coin-card': z.object({ ...common, coin }),
  'mini-chart': z.object({ ...common, coin, range: z.enum(RANGES, 'Must be 1d, 7d or 30d.').default('7d') }),
} satisfies Record<WidgetName, z.ZodType>;

export const widgetOptions = (name: WidgetName) => WIDGET_OPTIONS[name];

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * An origin as a key lists it (scheme://host[:port], lowercase, default port dropped), or an error
 * saying why not: https, or http for a loopback host only (a page on a developer's machine); no
 * path, query, fragment or credentials.
 */
export function canonicalOrigin(text: string): { origin: string } | { error: string } {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return { error: `"${text.trim()}" is not an origin such as https://example.com.` };
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.test(url.hostname))) {
    return { error: `"${text.trim()}": use https (http only for localhost or 127.0.0.1).` };
  }
  if (url.username || url.password || (url.pathname !== '/' && url.pathname !== '') || url.search || url.hash || text.trim().endsWith('?') || text.trim().endsWith('#')) {
    return { error: `"${text.trim()}": give the origin only (scheme, host and port), without a path.` };
  }
  return { origin: url.origin };
}
