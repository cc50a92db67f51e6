// The logos of coins, exchanges and wallets: GET /logos/{kind}/{slug}.svg draws a monogram (letters
// on a disc in a colour derived from the slug), public and cacheable. Which URL a row's `logo` is
// (a configured image or this route) is decided in SQL, market.logo_url (sql/functions/170_logos.sql);
// it answers the route as a root-relative path, made absolute here on the service's public base.
import type { Context } from 'koa';
import { strongEtag } from './cache.ts';
import { ApiError } from './errors.ts';
import { escapeHtml } from '../html.ts';
import type { Deps } from './admission.ts';
import { JsonRows, stringifyWithJsonRows } from './envelope.ts';

const KINDS = new Set(['coins', 'exchanges', 'wallets']);
const FILE = /^([a-z0-9]+(?:-[a-z0-9]+)*)\.svg$/;
/** Names and symbols change rarely; the ETag revalidates after a day. */
const MAX_AGE = 86_400;
/** The path prefix market.logo_url gives a generated logo. */
const LOGO_PATH = '/logos/';

export function monogramSvg(letters: string, title: string, hue: number): string {
  const size = [...letters].length > 1 ? 26 : 32;
  // XML escaping: &, <, >, " and ' (as &#39;) are all valid in SVG text and attributes
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64" role="img">` +
    `<title>${escapeHtml(title)}</title>` +
    `<circle cx="32" cy="32" r="32" fill="hsl(${hue} 55% 40%)"/>` +
    `<text x="32" y="33" fill="#fff" font-family="system-ui,-apple-system,Segoe UI,Roboto,sans-serif" font-size="${size}" ` +
    `font-weight="600" text-anchor="middle" dominant-baseline="middle">${escapeHtml(letters)}</text></svg>`;
}

export function logoRoute({ sql }: Pick<Deps, 'sql'>) {
  return async (ctx: Context) => {
    const slug = FILE.exec(ctx.params.file ?? '')?.[1];
    const kind = ctx.params.kind ?? '';
    if (!slug || !KINDS.has(kind)) throw ApiError.notFound('logo');
    const [row] = await sql<{ letters: string; title: string; hue: number }[]>`
      select letters, title, hue from api.logo_monogram(${kind}, ${slug})`;
    if (!row) throw ApiError.notFound('logo');
    const svg = monogramSvg(row.letters, row.title, row.hue);
    ctx.status = 200;
    ctx.type = 'image/svg+xml';
    ctx.set('Cache-Control', `public, max-age=${MAX_AGE}`);
    ctx.set('ETag', strongEtag(svg));
    // an <img> on any site may show it (helmet's default would allow the same origin only)
    ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
    if (ctx.fresh) ctx.status = 304;
    else ctx.body = svg;
  };
}

/**
 * Every generated logo in a response body (a `logo` holding market.logo_url's root-relative path)
 * as an absolute URL on the service's base; configured image URLs are left as they are.
 */
export function absoluteLogos<T>(body: T, base: string): T {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return Array.from(value, walk);
    if (value instanceof JsonRows) return walk(JSON.parse(value.text));
    // plain objects only: a Date or a Decimal in a handler's body is a value, not a record
    if (value === null || typeof value !== 'object' || ![Object.prototype, null].includes(Object.getPrototypeOf(value))) return value;
    const out: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(value)) {
      out[name] = name === 'logo' && typeof field === 'string' && field.startsWith(LOGO_PATH) ? `${base}${field}` : walk(field);
    }
    return out;
  };
  return walk(body) as T;
}

/**
 * The JSON text of a response body, with the JsonRows in it spliced in as it is and its generated
 * logos absolute: absoluteLogos on the text instead of the tree (one pass of a native replace
 * instead of a copy of every row). A `logo` key can only appear unescaped as a key: inside a string
 * value its quotes are escaped. PostgreSQL writes `"logo" : "…"` in json_build_object's text.
 */
export function serialiseBody(body: unknown, base: string): string {
  const absolute = `${JSON.stringify(base).slice(0, -1)}${LOGO_PATH}`;
  return stringifyWithJsonRows(body).replace(LOGO_KEY, (_, separator: string) => `"logo"${separator}${absolute}`);
}
const LOGO_KEY = new RegExp(`"logo"(\\s*:\\s*)"${LOGO_PATH}`, 'g');
