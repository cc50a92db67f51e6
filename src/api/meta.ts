// Meta group: ping, the calling key's usage, and the OpenAPI document of every route.
import { z } from 'zod';
import { openApiDocument, schemaBundle } from '../http/openapi.ts';
import { publicBase } from '../http/base.ts';
import { defineRoute } from '../http/routes.ts';
import { day, envelope, int, resource, text, timestamp, url } from '../http/schemas.ts';
import { VERSION } from '../version.ts';

const noInput = z.object({});
const PLANS = ['free', 'starter', 'pro'] as const;

// Response shapes. The two public documents are described loosely: their content is their own standard.
const Ping = envelope(z.object({ status: z.literal('ok'), plan: z.enum(PLANS) }), z.object({
  version: text('The service release.'),
  demo_data: z.boolean().describe('True while made-up data (the demo market, placeholder FX rates) is served.'),
  demo_sources: z.array(z.object({ name: text(), description: text() })),
  sources: z.array(z.object({
    name: text(), kind: z.enum(['simulated', 'exchange', 'reference', 'import']), demo: z.boolean(),
    status: z.enum(['idle', 'starting', 'failing', 'degraded', 'ok']).describe('idle: never ran; starting: its first run is still writing its history; failing: its last run failed, or no venue produced data in it; degraded: some venues did not; ok.'),
    last_success_at: timestamp().nullable(),
    lag_seconds: int('Now minus its coverage, else its last success; null before either.').nullable(),
    venues: z.record(z.string(), z.enum(['up', 'down'])).optional().describe('A source of several venues: each one up or down.'),
  })),
}));
const Usage = resource('Usage', z.object({
  plan: z.enum(PLANS), limit: int('Monthly request quota.'), used: int(), remaining: int(),
  period_start: day('First day of the month (UTC).'), period_end: timestamp('Start of the next month (UTC).'),
  burst_per_minute: int(), per_page_cap: int(),
  endpoints: z.array(z.object({ endpoint: text('METHOD /api/v1/path'), requests: int() })),
  tokens: z.array(z.object({
    id: int(), name: text('The key\'s prefix.'), kind: z.enum(['data-api', 'mcp', 'widget']).describe('data-api, mcp, or widget (a widget key: requests are page views).'), requests: int(),
    last_used_at: timestamp().nullable(), revoked: z.boolean(),
  })).describe('Every key of the owner, with its count this month.'),
}), 'The calling key\'s plan and usage this month.');
const OpenApiDocument = z.looseObject({
  openapi: text(), info: z.looseObject({ title: text(), version: text() }),
  paths: z.record(z.string(), z.unknown()), components: z.looseObject({}),
}).describe('An OpenAPI 3.1 document.');
const SchemaBundle = z.looseObject({
  $schema: url(), $id: url(), $defs: z.record(z.string(), z.unknown()),
}).describe('A JSON Schema (2020-12) bundle, one $defs entry per resource.');

export const metaRoutes = [
  defineRoute({
    method: 'get', path: '/ping', operationId: 'ping', tag: 'Meta', plan: 'free', query: noInput,
    response: Ping,
    summary: 'Authenticated no-op: checks a key end to end; counts against the quota.',
    handler: async ({ key, deps: { sql } }) => {
      const sources = await sql<{ name: string; description: string; kind: string; demo: boolean; serving: boolean; status: string; last_success_at: string | null; lag_seconds: number | null; venues: Record<string, 'up' | 'down'> | null }[]>`
        select name, description, kind, demo, serving, status, market.iso_time(last_success_at) as last_success_at, lag_seconds, venues from market.source_health order by name`;
      // Made-up data is labelled wherever it is served: the demo market and placeholder FX rates.
      const demo = sources.filter((source) => source.demo && source.serving);
      return {
        data: { status: 'ok', plan: key.plan },
        meta: {
          version: VERSION,
          demo_data: demo.length > 0,
          demo_sources: demo.map(({ name, description }) => ({ name, description })),
          // a source of several venues (the exchanges) says which are up and which down
          sources: sources.map(({ name, kind, demo, status, last_success_at, lag_seconds, venues }) => ({ name, kind, demo, status, last_success_at, lag_seconds, ...(venues ? { venues } : {}) })),
        },
      };
    },
  }),
  defineRoute({
    method: 'get', path: '/usage', operationId: 'keyUsageQuota', tag: 'Meta', plan: 'free', query: noInput,
    // the counts admission has just written: a replica may not have them yet
    reads: 'primary',
    readsCounters: true,
    response: envelope(Usage, z.object({ note: text() })),
    summary: "The calling key's plan, monthly quota used and remaining, rate limit and per-endpoint counts.",
    handler: async ({ key, deps: { sql } }) => {
      const [row] = await sql<{ report: Record<string, unknown> }[]>`select app.usage_report(${key.id}) as report`;
      return { data: row!.report, meta: { note: 'Counts include this request. The period is the calendar month in UTC.' } };
    },
  }),
  defineRoute({
    method: 'get', path: '/openapi.json', operationId: 'openAPISpec', tag: 'Meta', plan: 'free', query: noInput, public: true,
    response: OpenApiDocument,
    summary: 'This API as an OpenAPI 3.1 document, generated from the route declarations. Public: no key needed, and none counted.',
    handler: async ({ routes, ctx, deps: { config } }) => openApiDocument(routes, VERSION, publicBase(ctx, config)),
  }),
  defineRoute({
    method: 'get', path: '/schemas.json', operationId: 'resourceSchemas', tag: 'Meta', plan: 'free', query: noInput, public: true,
    response: SchemaBundle,
    summary: 'The JSON Schema (2020-12) of every resource this API returns, one bundle; the OpenAPI document embeds the same schemas. Public.',
    handler: async ({ ctx, deps: { config } }) => schemaBundle(publicBase(ctx, config)),
  }),
];
