// zod failures become 422 `validation` with details.errors: {field: [message, ...]}.
import { z } from 'zod';
import { csv, date, isoInstant, slug, slugList, type SlugOf } from '../validators.ts';

export function fieldErrors(error: z.ZodError, prefix = ''): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const issue of error.issues) {
    const field = [prefix, ...issue.path.map(String)].filter(Boolean).join('.') || '_';
    (errors[field] ??= []).push(issue.message);
  }
  return errors;
}

/**
 * Text PostgreSQL cannot store (U+0000, unpaired surrogates) or that is not UTF-8 at all: checked
 * for every input of every route before any schema, so it is a 422 naming the field, never a 500.
 */
const TEXT_PROBLEMS = {
  nul: 'Must not contain the NUL character (U+0000).',
  utf8: 'Must be valid UTF-8 text.',
  surrogate: 'Must not contain unpaired UTF-16 surrogates.',
};

function textProblem(value: string): string | null {
  if (value.includes('\0')) return TEXT_PROBLEMS.nul;
  // With the u flag a surrogate pair is one code point: only an unpaired half matches.
  if (/[\uD800-\uDFFF]/u.test(value)) return TEXT_PROBLEMS.surrogate;
  return null;
}

/**
 * A query-string or path component decoded strictly: URLSearchParams and the router decode invalid
 * UTF-8 silently (to U+FFFD or not at all), so the raw component is checked here. A `%` not followed
 * by two hex digits stays literal, as those decoders keep it.
 */
function decodeComponent(raw: string, plusIsSpace: boolean): string | null {
  try {
    return decodeURIComponent((plusIsSpace ? raw.replace(/\+/g, ' ') : raw).replace(/%(?![0-9A-Fa-f]{2})/g, '%25'));
  } catch {
    return null;
  }
}

function componentProblem(raw: string, plusIsSpace: boolean): string | null {
  const decoded = decodeComponent(raw, plusIsSpace);
  return decoded === null ? TEXT_PROBLEMS.utf8 : textProblem(decoded);
}

/**
 * Parameters (a parsed query string or form body) as one string each: a name given more than once
 * (?a=1&a=2) counts by its first value, as the console's and the widgets' forms read it; anything
 * not a string (a nested form name, an absent value) is left out. The API refuses repeats instead.
 */
export function firstValues(params: unknown): Record<string, string> {
  const first: Record<string, string> = {};
  if (!params || typeof params !== 'object') return first;
  for (const [name, value] of Object.entries(params)) {
    const given: unknown = Array.isArray(value) ? value[0] : value;
    if (typeof given === 'string') first[name] = given;
  }
  return first;
}

/** Field errors for bad text in a raw query string (names and values), keyed by parameter name. */
export function queryTextErrors(querystring: string): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const pair of querystring.split('&')) {
    if (!pair) continue;
    const at = pair.indexOf('=');
    const [name, value] = at === -1 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    const problem = componentProblem(name, true) ?? componentProblem(value, true);
    if (problem) addErrors(errors, { [decodeComponent(name, true) ?? name]: [problem] });
  }
  return errors;
}

/** Field errors for bad text in raw (still percent-encoded) path parameters. */
export function pathTextErrors(rawParams: Record<string, string>): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const [name, raw] of Object.entries(rawParams)) {
    const problem = componentProblem(raw, false);
    if (problem) errors[name] = [problem];
  }
  return errors;
}

/** Field errors for bad text anywhere in a parsed JSON body: keys and string values, at any depth. */
export function bodyTextErrors(body: unknown, path: string[] = []): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const field = (at: string[]) => at.join('.') || '_';
  if (typeof body === 'string') {
    const problem = textProblem(body);
    if (problem) errors[field(path)] = [problem];
  } else if (Array.isArray(body)) {
    body.forEach((item, index) => addErrors(errors, bodyTextErrors(item, [...path, String(index)])));
  } else if (body !== null && typeof body === 'object') {
    for (const [key, value] of Object.entries(body)) {
      const problem = textProblem(key);
      if (problem) addErrors(errors, { [field([...path, key])]: [problem] });
      addErrors(errors, bodyTextErrors(value, [...path, key]));
    }
  }
  return errors;
}

/** Merges field errors, keeping every message of a field. */
export function addErrors(into: Record<string, string[]>, more: Record<string, string[]>) {
  for (const [field, messages] of Object.entries(more)) (into[field] ??= []).push(...messages);
  return into;
}

/**
 * A parser that collects every field error into `errors` instead of stopping at the first: a missing
 * schema parses to {}, a failed one to undefined (the caller answers 422 with all of them).
 */
export const collectingParser =
  (errors: Record<string, string[]>) =>
  (schema: z.ZodType | undefined, input: unknown): unknown => {
    if (!schema) return {};
    const result = schema.safeParse(input);
    if (result.success) return result.data;
    addErrors(errors, fieldErrors(result.error));
    return undefined;
  };

/** Query-string building blocks: a query value is a string; these turn it into typed values. */
/** The `{slug}` path parameter of every route under a coin, exchange, wallet or article: either case, lowercased. */
export const slugParams = (of: SlugOf, max?: number) =>
  z.object({ slug: slug(of, max).describe(`The ${of}'s slug, as the collection lists it (e.g. ${EXAMPLES[of]}); any case.`) });
const EXAMPLES: Record<SlugOf, string> = { coin: 'bitcoin', exchange: 'binance', wallet: 'ledger-nano-x', article: 'what-is-bitcoin', tag: 'hardware', asset: 'bitcoin' };

/** Today's date (UTC), YYYY-MM-DD. */
export const today = () => new Date().toISOString().slice(0, 10);

export const query = {
  // Documented (OpenAPI) as the integer a client sends, with its bounds as schema keywords.
  // `tooLarge`: the message over `max` where the reference gives one (per_page)
  int: (min: number, max: number, tooLarge?: string) =>
    z.string().regex(/^-?\d+$/, 'Must be an integer.').transform(Number).pipe(z.number().int().min(min).max(max, tooLarge))
      .meta({ type: 'integer', minimum: min, maximum: max, pattern: undefined }),
  /** a non-negative decimal kept as a string, so that it reaches SQL as numeric without a float */
  decimal: () => z.string().regex(/^\d+(\.\d+)?$/, 'Must be a non-negative decimal number.'),
  /** a decimal that may be negative (a percent change, a growth rate), also kept as a string */
  signedDecimal: () => z.string().regex(/^-?\d+(\.\d+)?$/, 'Must be a decimal number.'),
  csv,
  /** a CSV of positive integer ids, e.g. ids=38,39 */
  intList: (maxLength: number) =>
    csv(maxLength)
      .refine((items) => items.every((item) => /^[1-9]\d{0,8}$/.test(item)), 'Must be a comma-separated list of positive integers.')
      .transform((items) => items.map(Number)),
  /** a CSV of slugs of one kind, each lowercased */
  slugList,
  /**
   * A multi-field sort, e.g. sort=-marketcap,rank: fields from `fields`, a leading - for
   * descending, each field once. Yields the tokens as given ('-marketcap', 'rank').
   */
  sort: (fields: readonly string[], maxLength = 100) =>
    csv(maxLength).superRefine((items, ctx) => {
      const names = items.map((item) => item.replace(/^-/, ''));
      for (const name of names) {
        if (!fields.includes(name)) ctx.addIssue({ code: 'custom', message: `Unknown sort field "${name}". Sortable: ${fields.join(', ')}.` });
      }
      if (new Set(names).size !== names.length) ctx.addIssue({ code: 'custom', message: 'Each sort field may be given once.' });
    }),
  /** a calendar date YYYY-MM-DD */
  date,
  /** A day of the history's era (as market.check_calculator_date has it in SQL): after 2008-12-31 and not in the future (UTC). */
  historyDate: () =>
    query.date().refine((value) => value > '2008-12-31', 'Must be after 2008-12-31.').refine((value) => value <= today(), 'Must not be in the future.'),
  /**
   * An ISO 8601 date or date-time bound, turned into an exact instant for SQL's timestamptz.
   * A time without an offset is UTC (so is a date). A date-only value is the start of that UTC
   * day, or with `endOfDay` its last microsecond: an end date means "through that day".
   */
  instant: (options: { endOfDay?: boolean } = {}) =>
    z
      .string()
      .max(40)
      .transform((value, ctx) => {
        const instant = isoInstant(value, options.endOfDay ?? false);
        if (instant === null) {
          ctx.addIssue({ code: 'custom', message: 'Must be an ISO 8601 date (YYYY-MM-DD) or date-time (YYYY-MM-DDTHH:MM[:SS[.ffffff]][Z|±HH:MM]).' });
          return z.NEVER;
        }
        return instant;
      }),
};

/**
 * Caps several list parameters taken together, e.g. ids + slugs + symbols at most 100: use as
 * z.object({...}).superRefine(capCombined([...], 100)). The error names every given field.
 */
export function capCombined(fields: string[], max: number) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
    const given = fields.filter((field) => Array.isArray(value[field]));
    const total = given.reduce((sum, field) => sum + (value[field] as unknown[]).length, 0);
    if (total <= max) return;
    for (const field of given) ctx.addIssue({ code: 'custom', path: [field], message: `At most ${max} ${fields.join(', ')} combined (got ${total}).` });
  };
}
