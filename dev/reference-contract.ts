// The published reference contract (test/fixtures/reference-openapi.json) as a client written for it
// reads it: each operation's documented response, and where a live body departs from it. Shared by the
// contract test (test/http/contract.test.ts) and the checks at size of the bench (bench/scale-checks.ts).
import { readFileSync } from 'node:fs';
import type { RouteSpec } from '../src/http/routes.ts';

export const reference = JSON.parse(readFileSync(new URL('../test/fixtures/reference-openapi.json', import.meta.url), 'utf8'));

export interface ReferenceSchema { type?: string; nullable?: boolean; properties?: Record<string, ReferenceSchema>; items?: ReferenceSchema }
interface ReferenceOperation {
  parameters?: { name: string; in: string; required?: boolean; example?: unknown }[];
  responses: Record<string, { content?: { 'application/json'?: { schema?: ReferenceSchema } } }>;
}
export const referenceOperation = (route: RouteSpec): ReferenceOperation | undefined => reference.paths[`/api/v1${route.path}`]?.[route.method];

function jsonType(value: unknown) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/**
 * Where a live body departs from the reference's documented schema: a documented field missing, or
 * of another JSON type. `integer` and `number` are one JSON type to a client, so either satisfies both.
 */
export function departures(schema: ReferenceSchema | undefined, value: unknown, path: string, out: Set<string>, nulls: Set<string>) {
  if (!schema?.type) return;
  if (value === undefined) return void out.add(`${path}: missing`);
  const actual = jsonType(value);
  if (actual === 'null') {
    if (!schema.nullable) nulls.add(path);
    return;
  }
  const expected = schema.type === 'integer' ? 'number' : schema.type;
  if (actual !== expected) return void out.add(`${path}: ${actual} where the reference declares ${schema.type}`);
  if (actual === 'array') for (const item of value as unknown[]) departures(schema.items, item, `${path}[]`, out, nulls);
  if (actual === 'object') {
    for (const [name, property] of Object.entries(schema.properties ?? {})) departures(property, (value as Record<string, unknown>)[name], `${path}.${name}`, out, nulls);
  }
}

