// The logos of coins, exchanges and wallets in a response body. Which URL a row's `logo` is (a
// configured image or the monogram the service draws, src/pages/monogram.ts) is decided in SQL,
// market.logo_url (sql/functions/170_logos.sql); it answers the monogram as a root-relative path,
// made absolute here on the service's public base.
import { JsonRows, stringifyWithJsonRows } from './envelope.ts';

/** The path prefix market.logo_url gives a generated logo, where the monograms are served. */
export const LOGO_PATH = '/logos/';

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
