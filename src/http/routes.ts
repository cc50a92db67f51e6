// A route is declared once — method, path, plan, zod schemas, handler — and that declaration
// drives the router, the admission check and the OpenAPI document alike.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { Sql } from '../db/client.ts';
import { ApiError } from './errors.ts';
import { admission, type Admitted } from './admission.ts';
import { fieldErrors } from './validation.ts';

export type PlanName = 'free' | 'starter' | 'pro';
export const PLAN_RANK: Record<PlanName, number> = { free: 1, starter: 2, pro: 3 };

export interface Deps {
  sql: Sql;
  config: Config;
}

export interface HandlerInput<Q, P, B> {
  query: Q;
  params: P;
  body: B;
  key: Admitted;
  deps: Deps;
  ctx: Context;
  /** every route mounted beside this one (for the OpenAPI document) */
  routes: RouteSpec[];
}

type AnyObject = z.ZodType<Record<string, unknown>, Record<string, unknown>>;

export interface RouteSpec<Q extends AnyObject = AnyObject, P extends AnyObject = AnyObject, B extends z.ZodType = z.ZodType> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI-style path under /api/v1, e.g. /coins/{slug} */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  /** minimum plan; a function when the plan depends on the (valid) query, e.g. a longer period */
  plan: PlanName | ((query: z.output<Q>) => PlanName);
  query?: Q;
  params?: P;
  body?: B;
  status?: number;
  /** keyed, per-owner state (alarms, webhooks): `Cache-Control: no-store` on every response */
  noStore?: boolean;
  handler: (input: HandlerInput<z.output<Q>, z.output<P>, z.output<B>>) => Promise<unknown>;
}

export const defineRoute = <Q extends AnyObject, P extends AnyObject, B extends z.ZodType = z.ZodNever>(
  spec: RouteSpec<Q, P, B>,
) => spec as unknown as RouteSpec;

const koaPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/** Parses every input of a request, collecting all field errors instead of stopping at the first. */
function parseInputs(route: RouteSpec, ctx: Context) {
  const errors: Record<string, string[]> = {};
  const parse = (schema: z.ZodType | undefined, input: unknown) => {
    if (!schema) return {};
    const result = schema.safeParse(input);
    if (result.success) return result.data;
    Object.assign(errors, fieldErrors(result.error));
    return undefined;
  };
  const query = parse(route.query, singleValued(ctx.query, errors));
  const params = parse(route.params, ctx.params);
  const body = route.body ? parse(route.body, (ctx.request as { body?: unknown }).body) : undefined;
  return { query, params, body, errors };
}

/** A repeated query parameter (?a=1&a=2) is ambiguous: refuse it rather than guess. */
function singleValued(query: Record<string, string | string[] | undefined>, errors: Record<string, string[]>) {
  const single: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value)) errors[name] = ['Must be given once.'];
    else if (value !== undefined) single[name] = value;
  }
  return single;
}

export function mountRoutes(router: Router, routes: RouteSpec[], deps: Deps) {
  for (const route of routes) {
    const endpoint = `${route.method.toUpperCase()} /api/v1${route.path}`;
    router[route.method](koaPath(route.path), async (ctx: Context) => {
      if (route.noStore) ctx.set('Cache-Control', 'no-store');
      const input = parseInputs(route, ctx);
      const valid = Object.keys(input.errors).length === 0;
      const plan = typeof route.plan === 'function' ? (valid ? route.plan(input.query as never) : 'free') : route.plan;
      const perPage = valid ? (input.query as { per_page?: unknown }).per_page : undefined;
      const key = await admission(ctx, deps, { endpoint, plan, consume: valid, perPage: typeof perPage === 'number' ? perPage : undefined });
      if (!valid) throw ApiError.validation(input.errors);
      const body = await route.handler({
        query: input.query as never, params: input.params as never, body: input.body as never, key, deps, ctx, routes,
      });
      ctx.status = route.status ?? 200;
      ctx.body = body;
    });
  }
}
