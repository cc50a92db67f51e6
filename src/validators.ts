// The formats every way in checks alike: the API routes, the MCP tools, the CLI and the importers take
// their slug, date, flag and locale rules from here, and the importers the error that refuses a file.
// A leaf (it imports only zod), so the CLI and the sources use it without loading the HTTP layer.
import { z } from 'zod';

/** A file an importer refused whole: nothing was written; `problems` holds one line per fault, naming where. */
export class ImportRefusedError extends Error {
  readonly problems: string[];
  constructor(message: string, problems: string[] = []) {
    super(message);
    this.name = new.target.name;
    this.problems = problems;
  }
}

/**
 * The one slug form, as stored: runs of lowercase letters and digits joined by single dashes.
 * Slugs are stored lowercase and looked up case-insensitively: input may use either case.
 */
export const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const SLUG_ANY_CASE = new RegExp(SLUG.source, 'i');
export const SLUG_MAX = 120;

/** What a slug names; the documents carry it as x-slug-of, so a client (and a test) knows which. */
export type SlugOf = 'coin' | 'exchange' | 'wallet' | 'article' | 'tag' | 'asset';
const NAMES: Record<SlugOf, [one: string, many: string]> = {
  coin: ['a coin slug such as bitcoin', 'coin slugs such as bitcoin,ethereum'],
  exchange: ['an exchange slug such as binance', 'exchange slugs such as binance,okx'],
  wallet: ['a wallet slug', 'wallet slugs'],
  article: ['an article slug', 'article slugs'],
  tag: ['a tag slug', 'tag slugs'],
  asset: ['a coin slug (bitcoin) or a fiat code (usd)', 'coin slugs or fiat codes such as ethereum,eur'],
};
const FORM = 'letters, digits and single dashes';
// OpenAPI's pattern has no flags: the case-insensitive form spelled out.
const documented = (of: SlugOf) => ({ 'x-slug-of': of, pattern: SLUG_ANY_CASE.source.replaceAll('a-z', 'A-Za-z') });

/** The slug as stored, or null when `value` is not one in either case. */
export function parseSlug(value: string, max = SLUG_MAX): string | null {
  const trimmed = value.trim();
  return trimmed.length <= max && SLUG_ANY_CASE.test(trimmed) ? trimmed.toLowerCase() : null;
}

/** A slug as a client sends it (path, query, tool argument): either case, yields it lowercased. */
export const slug = (of: SlugOf, max = SLUG_MAX) => {
  const message = `Must be ${NAMES[of][0]} (${FORM}, at most ${max}).`;
  return z
    .string()
    .transform((value, ctx) => {
      const stored = parseSlug(value, max);
      if (stored !== null) return stored;
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    })
    .meta({ ...documented(of), type: 'string', maxLength: max });
};

/** Comma-separated values, trimmed, empty items dropped. */
export const csv = (maxLength: number) =>
  z.string().max(maxLength).transform((value) => value.split(',').map((item) => item.trim()).filter(Boolean));

/** A comma-separated list of slugs (a query value, `mdapi backfill --coins`), each lowercased. */
export const slugList = (of: SlugOf, maxLength: number) =>
  csv(maxLength)
    .transform((items, ctx) => {
      const slugs = items.map((item) => parseSlug(item));
      if (slugs.every((item) => item !== null)) return slugs as string[];
      ctx.addIssue({ code: 'custom', message: `Must be comma-separated ${NAMES[of][1]} (${FORM}).` });
      return z.NEVER;
    })
    .meta({ 'x-slug-of': of, type: 'string', maxLength });

/** A slug in a file the operator imports (content, the catalogue): written lowercase, as stored. */
export const storedSlug = (max = SLUG_MAX) => z.string().max(max).regex(SLUG, 'Must be a slug (lowercase letters, digits and single dashes).');

/** A calendar date YYYY-MM-DD that exists (no 2026-02-30). */
export const isDate = (value: string) => value.length === 10 && isoInstant(value, false) !== null;
export const date = () => z.string().refine(isDate, 'Must be a date (YYYY-MM-DD).');

// A `+` in an unencoded query string arrives as a space: ' 02:00' is read as the offset '+02:00'.
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,6})?)?(Z|[+\- ]\d{2}:?\d{2})?)?$/;

/**
 * An ISO 8601 date or date-time as an exact instant for SQL's timestamptz, or null. A time without
 * an offset is UTC (so is a date); a date alone is the start of that UTC day, or with `endOfDay`
 * its last microsecond.
 */
export function isoInstant(value: string, endOfDay: boolean): string | null {
  const match = ISO_INSTANT.exec(value);
  if (!match) return null;
  const [, year, month, day, hour, minute, second = '00', fraction = '', offset] = match;
  const parsed = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  // Date.UTC rolls 2026-02-30 over into March: a valid date survives the round trip unchanged.
  if (parsed.getUTCFullYear() !== Number(year) || parsed.getUTCMonth() !== Number(month) - 1 || parsed.getUTCDate() !== Number(day)) return null;
  const ymd = `${year}-${month}-${day}`;
  if (hour === undefined) return endOfDay ? `${ymd}T23:59:59.999999Z` : `${ymd}T00:00:00Z`;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return null;
  if (offset && offset !== 'Z' && (Number(offset.slice(1, 3)) > 14 || Number(offset.slice(-2)) > 59)) return null;
  const zone = !offset || offset === 'Z' ? 'Z' : `${offset[0] === ' ' ? '+' : offset[0]}${offset.slice(1, 3)}:${offset.slice(-2)}`;
  return `${ymd}T${hour}:${minute}:${second}${fraction}${zone}`;
}

/** A boolean as text (a query value, an environment variable): true/false or 1/0. */
export const booleanFlag = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

/** A locale such as en, de or pt-BR (translations, descriptions). */
export const locale = z.string().regex(/^[a-z]{2}(-[A-Z]{2})?$/, 'Must be a locale such as en, de or pt-BR.');

/**
 * The rule of an e-mail address, everywhere one is taken (console sign-up, sign-in, reset and
 * invites, mdapi create-account / invite / set-email / create-key --email): the WHATWG rule of
 * `<input type="email">` (no quoted local part, no comments, an ASCII host name), at most 254
 * characters. What it keeps is the canonical form, stored and mailed as it is: trimmed, the domain
 * in lower case (as the mail library would send it; the local part is the mailbox's own business).
 */
const WHATWG_EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
export const email = z.string().trim().min(1, 'Enter an e-mail address.').max(254, 'Use at most 254 characters.')
  .regex(WHATWG_EMAIL, 'Must be an e-mail address such as you@example.com.')
  .transform((address) => {
    const at = address.lastIndexOf('@');
    return `${address.slice(0, at)}@${address.slice(at + 1).toLowerCase()}`;
  });
