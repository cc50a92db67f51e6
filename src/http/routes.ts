// A route is declared once — method, path, plan, zod schemas, handler — and that declaration
// drives the router, the admission check and the OpenAPI document alike.
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import type { Sql } from '../db/client.ts';
import { ApiError, isDatabaseUnavailable } from './errors.ts';
import { admission, type Admitted, type Deps } from './admission.ts';
import type { PlanName } from '../plans.ts';
import type { RouteCache, responseCache } from './cache.ts';
import { deprecationHeaders } from './deprecation.ts';
import { setHeaders, writeAnswer } from './head.ts';
import { completeEnvelope } from './envelope.ts';
import { serialiseBody } from './logos.ts';
import { publicBase } from './base.ts';
import { addErrors, bodyTextErrors, collectingParser, pathTextErrors, queryTextErrors } from './validation.ts';

export { PLANS_BY_SCOPE, type McpPlanName, type PlanName } from '../plans.ts';
export type { Deps } from './admission.ts';

export interface HandlerInput<Q, P, B> {
  query: Q;
  params: P;
  body: B;
  /** a public route's handler must not read it: without a key it is null */
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
  /**
   * minimum plan; a function when it depends on the (valid) query or the configuration, which may
   * name several plans that must all be met (the highest by app.plans.rank counts)
   */
  plan: PlanName | ((query: z.output<Q>, config?: Deps['config']) => PlanName | PlanName[]);
  /**
   * Windows of the query that need a plan of their own on top of `plan` (rsi's 21- and 28-day
   * periods): `of` names the one a valid query asks for ('28-day rsi'), undefined when it needs none;
   * a refusal for that plan says the window needs it. `described` completes "Minimum plan: …; " in OpenAPI.
   */
  window?: { plan: PlanName; of: (query: z.output<Q>) => string | undefined; described: string };
  query?: Q;
  params?: P;
  body?: B;
  status?: number;
  /**
   * The success body (src/http/schemas.ts: `envelope(...)` or `pageOf(...)`): its JSON Schema is the
   * operation's 2xx response in OpenAPI, and the contract test validates live answers against it.
   */
  response?: z.ZodType;
  /**
   * Served without a key (the OpenAPI document, as in the reference); a request that sends one is
   * still admitted with it, without counting, so a valid key gets its quota headers and a bad one its 401.
   */
  public?: boolean;
  /** keyed, per-owner state (alarms, webhooks): `Cache-Control: no-store` on every response */
  noStore?: boolean;
  /**
   * A GET of shared data: its body is cached in process until one of these data versions changes
   * (src/http/cache.ts), with an ETag, Last-Modified and `Cache-Control: public, max-age`.
   */
  cache?: RouteCache;
  /** when the operation can answer 409: what conflicts (documented in OpenAPI) */
  conflict?: string;
  /**
   * Where the handler's queries go (see readsFromReplica): a GET without noStore reads market data
   * and may be served by a read replica; 'primary' keeps a GET that reads per-key or just-written state there.
   */
  reads?: 'replica' | 'primary';
  /** reads the usage counters: this process's batched counts (ADMISSION_FLUSH_MS) are written before the handler runs */
  readsCounters?: boolean;
  /**
   * A deprecated operation (docs/versioning.md): answered with Deprecation (RFC 9745), Sunset
   * (RFC 8594) and a Link to its changelog entry, and marked deprecated in OpenAPI. `changelog` is
   * an anchor of /changelog (a version, e.g. `1.2.0`, or a group, e.g. `1.2.0-deprecated`); the
   * deprecation dates from `since`, else from that version's release date.
   */
  deprecated?: { sunset: string; changelog: string; since?: string };
  /**
   * A long-lived response the handler writes itself (Server-Sent Events) after admission and
   * validation: not cached, not enveloped; documented in OpenAPI under its content type.
   */
  stream?: { contentType: 'text/event-stream'; description: string };
  handler: (input: HandlerInput<z.output<Q>, z.output<P>, z.output<B>>) => Promise<unknown>;
}

export const defineRoute = <Q extends AnyObject, P extends AnyObject, B extends z.ZodType = z.ZodNever>(
  spec: RouteSpec<Q, P, B>,
) => spec as unknown as RouteSpec;

export const API_PREFIX = '/api/v1';
/** Where the MCP tool server answers (src/mcp/server.ts), named by the discovery documents and the console too. */
export const MCP_PATH = '/mcp';
/**
 * Where the HTML API reference is served (src/pages/reference.ts; the discovery documents link the
 * first): a page, though under the prefix, not a Data API answer.
 */
export const REFERENCE_PATHS = ['/docs/api', `${API_PREFIX}/docs`] as const;

const koaPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/** Parses every input of a request, collecting all field errors instead of stopping at the first. */
function parseInputs(route: RouteSpec, ctx: Context) {
  // Text PostgreSQL cannot take is refused here, for every route at once, before any schema.
  const errors = addErrors(queryTextErrors(ctx.querystring), pathTextErrors(rawPathParams(route, ctx.path)));
  const parse = collectingParser(errors);
  const query = parse(route.query, singleValued(ctx.query, errors));
  const params = parse(route.params, ctx.params);
  let body: unknown;
  if (route.body) {
    const json = requestBody(ctx);
    addErrors(errors, bodyTextErrors(json));
    body = parse(route.body, json);
  }
  return { query, params, body, errors };
}

/**
 * The parsed JSON body of a route that takes one: no body reads as {} (the schema then names the
 * missing fields); valid JSON that is not an object is refused as such, not as "invalid JSON".
 */
function requestBody(ctx: Context): unknown {
  const { body, rawBody } = ctx.request as { body?: unknown; rawBody?: string };
  if (body === undefined || (body === '' && !rawBody)) return {};
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError(400, 'invalid_body', 'The request body must be a JSON object.');
  }
  return body;
}

/** Path parameters as they arrived, still percent-encoded (every parameter is a whole segment). */
function rawPathParams(route: RouteSpec, path: string) {
  const raw: Record<string, string> = {};
  const segments = path.slice(API_PREFIX.length).split('/');
  route.path.split('/').forEach((segment, index) => {
    const name = /^\{(\w+)\}$/.exec(segment)?.[1];
    if (name && segments[index] !== undefined) raw[name] = segments[index];
  });
  return raw;
}

/** A repeated query parameter (?a=1&a=2) is ambiguous: refuse it rather than guess. */
function singleValued(query: Record<string, string | string[] | undefined>, errors: Record<string, string[]>) {
  const single: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value)) (errors[name] ??= []).push('Must be given once.');
    else if (value !== undefined) single[name] = value;
  }
  return single;
}

/**
 * Whether a route's handler may run on a read replica: GET routes only (admission, which writes,
 * always runs on the primary before), and not those with per-owner state (noStore) unless declared.
 */
export function readsFromReplica(route: Pick<RouteSpec, 'method' | 'noStore' | 'reads'>): boolean {
  return route.method === 'get' && (route.reads ?? (route.noStore ? 'primary' : 'replica')) === 'replica';
}

/** A replica lost since its last check, or a query cancelled by WAL replay (40001): the primary answers instead. */
const retryOnPrimary = (error: unknown) => isDatabaseUnavailable(error) || (error as { code?: unknown } | null)?.code === '40001';

/**
 * The plan a request needs: a plan that depends on the query (a function, or a route with windows)
 * is judged on a valid query only, so an invalid one learns about its values first.
 */
export function routePlan(route: RouteSpec, query: unknown, valid: boolean, config?: Deps['config']): PlanName | PlanName[] {
  if (!valid && (typeof route.plan === 'function' || route.window)) return 'free';
  const plan = typeof route.plan === 'function' ? route.plan(query as never, config) : route.plan;
  const window = routeWindow(route, query, valid);
  return window ? [plan, window.plan].flat() : plan;
}

/** The window of a valid query that needs a plan of its own, named ('28-day rsi'), if it asks for one. */
export function routeWindow(route: RouteSpec, query: unknown, valid: boolean): { label: string; plan: PlanName } | undefined {
  const label = valid ? route.window?.of(query as never) : undefined;
  return label === undefined ? undefined : { label, plan: route.window!.plan };
}

/**
 * The API's routes as one middleware: a router per first path segment (coins, exchanges, ...), picked
 * by the request's segment. @koa/router tests a request against every route of its router, and
 * with the ninety routes in one router that was about a fifth of what a small uncached answer costs
 * over TCP; a segment has at most thirty. Matching stays @koa/router's (case-insensitive, an optional
 * trailing slash): the segment is looked up in lower case. What no router answers goes on down the chain.
 */
export function apiRouter(routes: RouteSpec[], deps: Deps, cache: ReturnType<typeof responseCache>): Middleware {
  const bySegment = new Map<string, RouteSpec[]>();
  for (const route of routes) {
    const segment = route.path.split('/')[1] ?? '';
    if (!/^[\w.-]+$/.test(segment)) throw new Error(`${route.path}: a route's first path segment must be literal (routers are picked by it)`);
    const key = segment.toLowerCase();
    bySegment.set(key, [...(bySegment.get(key) ?? []), route]);
  }
  const routers = new Map<string, Middleware>();
  for (const [segment, group] of bySegment) {
    const router = new Router({ prefix: API_PREFIX });
    mountRoutes(router, group, routes, deps, cache);
    routers.set(segment, router.routes() as Middleware);
  }
  const start = API_PREFIX.length + 1;
  return (ctx, next) => {
    const path = ctx.path;
    if (path.length <= start || path[start - 1] !== '/' || path.slice(0, start - 1).toLowerCase() !== API_PREFIX) return next();
    const end = path.indexOf('/', start);
    const router = routers.get(path.slice(start, end === -1 ? undefined : end).toLowerCase());
    return router ? router(ctx, next) : next();
  };
}

/** `routes` on `router`; `all`: every route of the API, as a handler is given them (the OpenAPI document) */
function mountRoutes(router: Router, routes: RouteSpec[], all: RouteSpec[], deps: Deps, cache: ReturnType<typeof responseCache>) {
  for (const route of routes) {
    const cached = cache.serve(route, `${API_PREFIX}${koaPath(route.path)}`);
    const endpoint = `${route.method.toUpperCase()} ${API_PREFIX}${route.path}`;
    // checked at start-up: a declaration naming a missing changelog entry or a bad date fails here
    const deprecation = route.deprecated ? deprecationHeaders(route.deprecated) : null;
    router[route.method](koaPath(route.path), async (ctx: Context) => {
      // on every answer, errors included: a client learns of the sunset whatever it sent
      if (deprecation) deprecation(ctx, deps.config);
      if (route.noStore) setHeaders(ctx, ['Cache-Control', 'no-store']);
      const input = parseInputs(route, ctx);
      const valid = Object.keys(input.errors).length === 0;
      const plan = routePlan(route, input.query, valid, deps.config);
      const perPage = valid ? (input.query as { per_page?: unknown }).per_page : undefined;
      const window = routeWindow(route, input.query, valid);
      const admitWith = { endpoint, plan, window, consume: valid && !route.public, perPage: typeof perPage === 'number' ? perPage : undefined };
      const admitted = route.public && !ctx.get('authorization') ? (null as unknown as Admitted) : admission(ctx, deps, admitWith);
      // awaited only when it is a promise (a key's first request): a cached key's costs no turn of the microtask queue
      const key = admitted instanceof Promise ? await admitted : admitted;
      if (!valid) throw ApiError.validation(input.errors);
      if (route.stream) {
        await route.handler({ query: input.query as never, params: input.params as never, body: input.body as never, key, deps, ctx, routes: all });
        return;
      }
      if (route.readsCounters) await deps.admission?.flush();
      const query = handlerQuery(route, deps, all, ctx, input, key);
      // serialised once, here: the cache keeps these bytes, an uncached answer sends them
      const produce = async () => serialiseBody(completeEnvelope(await query(), deps.config), publicBase(ctx, deps.config));
      // a later request of this URL is admitted alike by the cache's shortcut (not a deprecated route: its headers are the route's)
      if (cached) return cached(ctx, input, produce, route.status ?? 200, deprecation ? null : admitWith);
      await writeAnswer(ctx, route.status ?? 200, await produce());
    });
  }
}

/** Runs a route's handler, on a read replica when it may (readsFromReplica), else on the primary. */
function handlerQuery(route: RouteSpec, deps: Deps, routes: RouteSpec[], ctx: Context, input: ReturnType<typeof parseInputs>, key: Admitted) {
  return async () => {
    const run = (sql: Sql) => route.handler({
      query: input.query as never, params: input.params as never, body: input.body as never, key, deps: sql === deps.sql ? deps : { ...deps, sql }, ctx, routes,
    });
    const replica = readsFromReplica(route) ? (deps.replicas?.client() ?? null) : null;
    let body: unknown;
    if (!replica) body = await run(deps.sql);
    else {
      try {
        body = await run(replica);
      } catch (error) {
        if (!retryOnPrimary(error)) throw error;
        if (isDatabaseUnavailable(error)) deps.replicas!.markDown(replica, error);
        body = await run(deps.sql);
      }
    }
    return body;
  };
}
