// Response schemas: the building blocks every route's `response` declaration is made of, the two
// envelopes, and the registry of named resources. The OpenAPI document, the JSON Schema bundle and
// the contract test all read these declarations, so a documented shape cannot drift from the answer.
import { z } from 'zod';

/** Named resources (Coin, Exchange, …): published together as the JSON Schema bundle. */
export const resources = z.registry<{ id: string; description?: string }>();

/** Names a resource schema for the bundle; the schema itself is returned unchanged. */
export function resource<T extends z.ZodType>(id: string, schema: T, description?: string): T {
  resources.add(schema, { id, ...(description ? { description } : {}) });
  return schema;
}

// Why strings: prices, supplies and rates are numeric in SQL and never pass through a float.
const DECIMAL = /^-?\d+(\.\d+)?$/;

/** A decimal number as a JSON string (numeric in SQL), e.g. "67012.45". */
export const decimal = (description?: string) =>
  z.string().regex(DECIMAL).describe(description ?? 'A decimal number as a string, exact to the stored precision.');

/** An instant, ISO 8601 UTC (market.iso_time). */
export const timestamp = (description?: string) => z.iso.datetime({ offset: true }).describe(description ?? 'ISO 8601 instant in UTC (market.iso_time writes +00:00).');

/** A calendar day, YYYY-MM-DD (market.iso_date). */
export const day = (description?: string) => z.iso.date().describe(description ?? 'Calendar day, YYYY-MM-DD.');

export const int = (description?: string) => (description ? z.number().int().describe(description) : z.number().int());
export const number = (description?: string) => (description ? z.number().describe(description) : z.number());
export const text = (description?: string) => (description ? z.string().describe(description) : z.string());
export const url = (description?: string) => z.url().describe(description ?? 'Absolute URL.');

/** Extra fields a route adds to `meta`; open, since meta is informational. */
const openMeta = z.record(z.string(), z.unknown());

/** {data, meta}: the envelope of every success that is not a paginated list. */
export function envelope<D extends z.ZodType, M extends z.ZodType = typeof openMeta>(data: D, meta?: M) {
  return z.object({ data, meta: (meta ?? openMeta) as M });
}

const pageLinks = z.object({
  first: url(), last: url(), prev: url().nullable(), next: url().nullable(),
}).describe('Absolute URLs of the other pages (PUBLIC_URL, or the request’s origin).');

const pageMeta = {
  current_page: z.number().int().min(1),
  from: z.number().int().min(1).nullable(),
  last_page: z.number().int().min(1),
  per_page: z.number().int().min(1),
  to: z.number().int().min(1).nullable(),
  total: z.number().int().min(0),
};

/** {data: [item], links, meta}: the envelope of a paginated list (src/http/envelope.ts `paginated`). */
export function pageOf<I extends z.ZodType>(item: I, extraMeta: z.ZodRawShape = {}) {
  return z.object({ data: z.array(item), links: pageLinks, meta: z.object({ ...pageMeta, ...extraMeta }).catchall(z.unknown()) });
}

