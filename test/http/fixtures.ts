// Routes that exist only in tests, to exercise the shared mechanisms (plan gate, validation,
// errors) independently of any API group.
import { z } from 'zod';
import { paginated, paginationQuery } from '../../src/http/envelope.ts';
import { defineRoute } from '../../src/http/routes.ts';
import { query } from '../../src/http/validation.ts';
import { apiRoutes } from '../../src/api/index.ts';

export const fixtureRoutes = [
  ...apiRoutes,
  defineRoute({
    method: 'get', path: '/fixtures/pro', operationId: 'fixturePro', tag: 'Fixtures', plan: 'pro', query: z.object({}),
    summary: 'Needs Pro.',
    handler: async () => ({ data: { ok: true } }),
  }),
  defineRoute({
    method: 'get', path: '/fixtures/window', operationId: 'fixtureWindow', tag: 'Fixtures',
    query: z.object({ period: query.int(1, 100).optional().default(14) }),
    plan: ({ period }) => (period > 20 ? 'starter' : 'free'),
    summary: 'Longer windows need Starter.',
    handler: async ({ query: { period } }) => ({ data: { period } }),
  }),
  defineRoute({
    method: 'get', path: '/fixtures/both', operationId: 'fixtureBoth', tag: 'Fixtures',
    query: z.object({ period: query.int(1, 100).optional().default(14) }),
    // the endpoint's plan and the window's, both to be met: which is higher is app.plans' to say
    plan: ({ period }) => (period > 20 ? ['pro', 'starter'] : 'starter'),
    summary: 'Needs Starter; longer windows also need Pro.',
    handler: async ({ query: { period } }) => ({ data: { period } }),
  }),
  defineRoute({
    method: 'get', path: '/fixtures/items/{id}', operationId: 'fixtureItems', tag: 'Fixtures', plan: 'free',
    params: z.object({ id: z.string().regex(/^\d+$/, 'Must be a number.') }),
    query: z.object({ ...paginationQuery, kind: z.enum(['a', 'b']).optional(), limit: query.int(1, 2000).optional() }),
    summary: 'Validation and pagination.',
    handler: async ({ query: q, ctx }) => {
      const perPage = q.per_page ?? 10;
      const items = Array.from({ length: 25 }, (_, i) => ({ n: i + 1 })).slice((q.page - 1) * perPage, q.page * perPage);
      return paginated(new URL(ctx.href), { page: q.page, perPage }, 25, items);
    },
  }),
  defineRoute({
    method: 'get', path: '/fixtures/missing', operationId: 'fixtureMissing', tag: 'Fixtures', plan: 'free', query: z.object({}),
    summary: 'A SQL function raising its own not-found code.',
    handler: async ({ deps: { sql } }) => {
      await sql`do $$ begin raise exception 'no such coin' using errcode = 'MD404'; end $$`;
      return {};
    },
  }),
  defineRoute({
    method: 'get', path: '/fixtures/crash', operationId: 'fixtureCrash', tag: 'Fixtures', plan: 'free', query: z.object({}),
    summary: 'An unexpected failure.',
    handler: async ({ deps: { sql } }) => {
      await sql`select * from no_such_table_anywhere`;
      return {};
    },
  }),
  defineRoute({
    method: 'post', path: '/fixtures/echo', operationId: 'fixtureEcho', tag: 'Fixtures', plan: 'free', status: 201,
    body: z.object({ name: z.string().min(1).max(20) }),
    summary: 'A body.',
    handler: async ({ body }) => ({ data: body }),
  }),
];
