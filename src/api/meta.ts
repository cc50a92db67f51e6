// Meta group: ping, the calling key's usage, and the OpenAPI document of every route.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { openApiDocument, schemaBundle } from '../http/openapi.ts';
import { publicBase } from '../http/pages.ts';
import { defineRoute } from '../http/routes.ts';

export const VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

const noInput = z.object({});

export const metaRoutes = [
  defineRoute({
    method: 'get', path: '/ping', operationId: 'ping', tag: 'Meta', plan: 'free', query: noInput,
    summary: 'Authenticated no-op: checks a key end to end; counts against the quota.',
    handler: async ({ key, deps: { sql } }) => {
      const sources = await sql<{ name: string; description: string; kind: string; demo: boolean; serving: boolean; status: string; last_success_at: Date | null; lag_seconds: number | null; venues: Record<string, 'up' | 'down'> | null }[]>`
        select name, description, kind, demo, serving, status, last_success_at, lag_seconds, venues from market.source_health order by name`;
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
    summary: "The calling key's plan, monthly quota used and remaining, rate limit and per-endpoint counts.",
    handler: async ({ key, deps: { sql } }) => {
      const [row] = await sql<{ report: Record<string, unknown> }[]>`select app.usage_report(${key.id}) as report`;
      return { data: row!.report, meta: { note: 'Counts include this request. The period is the calendar month in UTC.' } };
    },
  }),
  defineRoute({
    method: 'get', path: '/openapi.json', operationId: 'openAPISpec', tag: 'Meta', plan: 'free', query: noInput, public: true,
    summary: 'This API as an OpenAPI 3.1 document, generated from the route declarations. Public: no key needed, and none counted.',
    handler: async ({ routes, ctx, deps: { config } }) => openApiDocument(routes, VERSION, publicBase(ctx, config)),
  }),
  defineRoute({
    method: 'get', path: '/schemas.json', operationId: 'resourceSchemas', tag: 'Meta', plan: 'free', query: noInput, public: true,
    summary: 'The JSON Schema (2020-12) of every resource this API returns, one bundle; the OpenAPI document embeds the same schemas. Public.',
    handler: async ({ ctx, deps: { config } }) => schemaBundle(publicBase(ctx, config)),
  }),
];
