// The response envelopes: {data, meta} and, for paginated lists, {data, links, meta}.
import type { Config } from '../config.ts';
import { perPageOverCap } from './errors.ts';
import { query } from './validation.ts';

export const paginationQuery = {
  page: query.int(1, 1_000_000).optional().default(1),
  // The plan's cap (100 or 250) is checked after admission, since it depends on the key.
  per_page: query.int(1, 250, perPageOverCap(250)).optional(),
};

export interface Page {
  page: number;
  perPage: number;
}

/**
 * Rows as PostgreSQL wrote them, a JSON array's text, and how many: passed to the response as they
 * are, neither parsed into objects nor serialised again (serialiseBody, src/http/logos.ts, splices
 * the text in). Serialised anywhere else (JSON.stringify) the text is parsed first, so it is always
 * a JSON value.
 */
export class JsonRows {
  readonly text: string;
  readonly length: number;
  constructor(text: string, length: number) {
    this.text = text;
    this.length = length;
  }
  toJSON(): unknown {
    if (!spliced) return JSON.parse(this.text);
    spliced.push(this.text);
    return `\u0000json:${spliced.length - 1}\u0000`;
  }
}

/**
 * JSON.stringify, each JsonRows written as its text: it stands in as a marker that PostgreSQL text
 * can never hold (a NUL, which JSON escapes) and is then replaced. Synchronous: one list per call.
 */
export function stringifyWithJsonRows(body: unknown): string {
  const texts: string[] = [];
  spliced = texts;
  let json: string;
  try {
    json = JSON.stringify(body);
  } finally {
    spliced = null;
  }
  if (texts.length === 0) return json;
  return json.replace(/"\\u0000json:(\d+)\\u0000"/g, (_, index: string) => texts[Number(index)]!);
}
/** the texts of the serialisation under way (stringifyWithJsonRows), or null */
let spliced: string[] | null = null;

/**
 * `url` is the request's absolute URL (ctx.href: its scheme and host are X-Forwarded-Proto/Host only
 * with TRUST_PROXY, Koa's app.proxy); the links keep its origin, as a reference client expects.
 */
/** A list function's page (`{ total, data }`, the JSON the api.* list functions return) as this request's paginated answer. */
export function pageAnswer<T>(ctx: { href: string }, page: number, perPage: number, rows: { total: number; data: T[] | JsonRows }, meta: Record<string, unknown> = {}) {
  return paginated(new URL(ctx.href), { page, perPage }, rows.total, rows.data, meta);
}

export function paginated<T>(url: URL, page: Page, total: number, data: T[] | JsonRows, meta: Record<string, unknown> = {}) {
  const lastPage = Math.max(1, Math.ceil(total / page.perPage));
  const link = (target: number) => {
    const next = new URL(url);
    next.searchParams.set('page', String(target));
    next.searchParams.set('per_page', String(page.perPage));
    return next.href;
  };
  const from = data.length ? (page.page - 1) * page.perPage + 1 : null;
  return {
    data,
    links: {
      first: link(1),
      last: link(lastPage),
      prev: page.page > 1 ? link(Math.min(page.page - 1, lastPage)) : null,
      next: page.page < lastPage ? link(page.page + 1) : null,
    },
    meta: {
      current_page: page.page,
      from,
      last_page: lastPage,
      per_page: page.perPage,
      to: from === null ? null : from + data.length - 1,
      total,
      ...meta,
    },
  };
}


/**
 * Completes what a route's handler returned, for every route in one place (mountRoutes): an
 * envelope gets `meta` even when the handler had none to add, and with PUBLIC_URL its pagination
 * links take that origin (and path prefix) like every other absolute link of the service (publicBase).
 * A body that is not an envelope (the OpenAPI document) is left as it is.
 */
export function completeEnvelope(body: unknown, config: Pick<Config, 'PUBLIC_URL'>): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !('data' in body)) return body;
  const envelope = { ...body } as { data: unknown; meta?: unknown; links?: Record<string, string | null> };
  envelope.meta ??= {};
  if (envelope.links && config.PUBLIC_URL) {
    const rebase = (link: string | null) => {
      if (link === null) return null;
      const url = new URL(link);
      return `${config.PUBLIC_URL}${url.pathname}${url.search}`;
    };
    envelope.links = Object.fromEntries(Object.entries(envelope.links).map(([name, link]) => [name, rebase(link)]));
  }
  return envelope;
}
