// Admission of a keyed request: one call to app.admit (authentication, failed-attempt limits,
// plan gate, rate limit, quota), then the quota and rate-limit headers: the spec's X-Quota-*,
// X-RateLimit-*, and the IETF RateLimit-Policy/RateLimit fields (draft-ietf-httpapi-ratelimit-headers,
// structured-field form) with a "minute" policy (the burst limit) and a "month" policy (the quota).
// Once the response is written, its status is counted for the key and endpoint (countResponses).
import type { Context, Middleware } from 'koa';
import type { Config } from '../config.ts';
import type { Sql } from '../db/client.ts';
import type { ReadReplicas } from '../db/replicas.ts';
import type { McpPlanName, PlanName, WidgetPlanName } from '../plans.ts';
import { responseClass, STATUS_CLASSES, type AdmissionBatcher, type AdmitRoute, type AdmitRow } from './admission-batch.ts';
import { ApiError, perPageOverCap } from './errors.ts';
import type { Logger } from '../log.ts';
import type { LivePrices } from './live-prices.ts';
import type { Listener } from '../db/listener.ts';
import { keyDigest, type KeyDigest } from '../keys.ts';
import type { RunningJob } from '../job-runs.ts';
import { memoized } from '../memo.ts';
import { addHeaders } from './head.ts';

/** What a handler and the HTTP core are given. */
export interface Deps {
  /** the primary; a handler is given a replica's client here when its route reads from replicas */
  sql: Sql;
  config: Config;
  /** DATABASE_READ_URL: where read-only market-data queries go while a replica is healthy */
  replicas?: ReadReplicas | null;
  /** the process's admission counters (ADMISSION_FLUSH_MS > 0), set by createApp */
  admission?: AdmissionBatcher | null;
  /** what this process's job worker is running (WORKER=inline): what a busy database is doing */
  activity?: () => RunningJob[];
  /** the process's live-price hub (src/streams/hub.ts, built by the factory src/service.ts serves), set by createApp */
  streams?: LivePrices | null;
  /** the process's one LISTEN connection (src/db/listener.ts): src/service.ts's, else createApp makes one */
  listener?: Listener;
  /** the service's logger, set by createApp: for work a handler does after its answer */
  logger?: Logger;
}

export type { AdmitRoute, AdmitRow };

export interface Admitted {
  id: number;
  owner: string;
  plan: PlanName | McpPlanName | WidgetPlanName;
  perPageCap: number;
}

/**
 * Admits a keyed request: sets its quota headers and answers with the key, or throws the refusal.
 * Synchronous for a key this process has cached (nearly every request): no promise on the hot path.
 */
export function admission(
  ctx: Context,
  deps: Deps,
  route: AdmitRoute & { key?: string | null },
): Admitted | Promise<Admitted> {
  const presented = route.key !== undefined ? presentedKey(route.key) : presentedBearer(ctx.get('authorization'));
  // a decision the cache's shortcut made for this request and left to the route to answer
  const decided = ctx.state.decided as AdmitRow | undefined;
  if (decided) ctx.state.decided = undefined;
  const row = decided ?? admissionDecision(ctx, deps, presented, route);
  const key = presented?.key ?? null;
  return row instanceof Promise ? row.then((settled) => admitted(ctx, key, route, settled)) : admitted(ctx, key, route, row);
}

function admitted(ctx: Context, key: string | null, route: AdmitRoute, row: AdmitRow): Admitted {
  setLimitHeaders(ctx, row);
  if (row.outcome === 'ok') return { id: Number(row.key_id), owner: row.owner!, plan: row.plan!, perPageCap: row.per_page_cap! };
  const retryAfter = { 'Retry-After': String(row.retry_after ?? 60) };
  switch (row.outcome) {
    case 'unauthorized':
    // the same answer: a surface that names the kind of key it needs reads ctx.state.admission (src/mcp/auth.ts)
    case 'wrong_scope':
      throw new ApiError(401, 'unauthorized', key ? 'The API key is invalid or revoked.' : 'Send an API key as "Authorization: Bearer <key>".', {}, { 'WWW-Authenticate': 'Bearer' });
    case 'auth_rate_limited':
      throw new ApiError(429, 'rate_limited', 'Too many failed authentication attempts; retry later.', {}, retryAfter);
    case 'plan_required':
      throw planRefusal(route, row.required_plan ?? [route.plan].flat()[0]!);
    case 'per_page_exceeded':
      throw ApiError.validation({ per_page: [perPageOverCap(row.per_page_cap!)] });
    case 'rate_limited':
      throw new ApiError(429, 'rate_limited', 'Per-minute request limit reached; retry later.', { limit: row.rate_limit }, retryAfter);
    case 'quota_exceeded':
      throw new ApiError(429, 'quota_exceeded', 'Monthly request quota exhausted.', { limit: Number(row.quota_limit) }, retryAfter);
  }
  throw new Error(`unknown admission outcome ${String(row.outcome)}`);
}

/** What needs the plan the key lacks: the window the query asks for when that is it, else the endpoint (an MCP tool). */
function planRefusal(route: AdmitRoute, plan: string): ApiError {
  if (route.window?.plan === plan) return ApiError.planRequired(plan, `The ${route.window.label} window`);
  return ApiError.planRequired(plan, route.scope === 'mcp' ? 'This tool' : 'This endpoint');
}

/**
 * The admission decision for a request, counted, without touching the response (the cache's
 * shortcut writes its headers itself; admission() sets them and refuses). Synchronous for a cached key.
 */
export function admissionDecision(ctx: Context, deps: Deps, presented: Presented | null, route: AdmitRoute): AdmitRow | Promise<AdmitRow> {
  const row = admit(ctx, deps, presented, route);
  return row instanceof Promise ? row.then((settled) => noted(ctx, settled, route.endpoint)) : noted(ctx, row, route.endpoint);
}

/**
 * For the request log and metrics (src/http/observe.ts): the outcome, and which key (never the key
 * itself); for countResponses, the key and the endpoint its response is counted under.
 */
function noted(ctx: Context, row: AdmitRow, endpoint: string): AdmitRow {
  ctx.state.admission = row.outcome;
  if (row.key_id !== null) {
    ctx.state.keyId = Number(row.key_id);
    ctx.state.endpoint = endpoint;
  }
  return row;
}

/**
 * Counts every response to a known key once its status is final (outside the error middleware, so
 * a thrown ApiError and a 429 refusal count as answered): by key, UTC day, endpoint and status class
 * (app.usage_daily). Batched: one Map increment, written by the next flush. ADMISSION_FLUSH_MS=0:
 * app.record_response, after the answer was written for most (writeAnswer ends the response itself).
 */
export function countResponses(deps: Deps, logger: Logger): Middleware {
  return (ctx, next) => next().then(
    () => countResponse(ctx, deps, ctx.status, logger),
    async (error) => {
      await countResponse(ctx, deps, 500, logger);
      throw error;
    },
  );
}

/**
 * Counts one response of the key admission noted on `ctx` (nothing for an unknown key), by endpoint
 * and status class: countResponses for HTTP, the WebSocket endpoint for an opening or its refusal.
 */
export function countResponse(ctx: Context, deps: Deps, status: number, logger?: Logger): void | Promise<void> {
  const keyId = ctx.state.keyId as number | undefined;
  if (keyId === undefined) return;
  const endpoint = (ctx.state.endpoint as string | undefined) ?? 'unrouted';
  if (deps.admission) return deps.admission.record(keyId, endpoint, status);
  return deps.sql`select app.record_response(${keyId}, ${endpoint}, ${STATUS_CLASSES[responseClass(status)]!})`.then(
    () => {},
    // the answer stands: a count lost to a failing database is logged, not turned into an error
    (error) => logger?.warn(`admission: counting a response failed (${(error as Error).message})`),
  );
}

/**
 * The quota headers for a response the app answers before admission ran (unknown route, bad JSON,
 * oversized body or headers): the key is looked up without consuming quota. Never throws; an
 * unknown key adds no headers (and, like any wrong key, counts as a failed attempt).
 */
export async function quotaHeaders(ctx: Context, deps: Deps): Promise<void> {
  const presented = presentedBearer(ctx.get('authorization'));
  if (!presented) return;
  try {
    const row = await admit(ctx, deps, presented, { endpoint: 'unrouted', plan: 'free', consume: false });
    setLimitHeaders(ctx, row);
    // counted under "unrouted" (countResponses); ctx.state.admission stays unset: admission did not run
    if (row.key_id !== null) {
      ctx.state.keyId = Number(row.key_id);
      ctx.state.endpoint = 'unrouted';
    }
  } catch {
    // The response being answered is the error that matters; it leaves without quota headers.
  }
}

/** Through the process's batched counters when there are (ADMISSION_FLUSH_MS > 0), else app.admit per request. */
function admit(ctx: Context, deps: Deps, presented: Presented | null, route: AdmitRoute): AdmitRow | Promise<AdmitRow> {
  const digest = presented?.digest ?? null;
  if (digest && deps.admission) return deps.admission.admit(digest, route, () => admitInDatabase(ctx, deps, digest.hash, route));
  return admitInDatabase(ctx, deps, digest?.hash ?? null, route);
}

async function admitInDatabase(ctx: Context, { sql, config }: Deps, hash: Buffer | null, route: AdmitRoute): Promise<AdmitRow> {
  // several required plans: the highest by app.plans.rank, decided in the same statement
  const requiredPlan = Array.isArray(route.plan) ? sql`app.highest_plan(${route.plan}::text[])` : route.plan;
  const [row] = await sql<AdmitRow[]>`
    select *, ${requiredPlan}::text as required_plan from app.admit(
      ${hash}, ${ctx.ip || 'unknown'}, ${route.scope ?? 'data-api'}, ${requiredPlan},
      ${route.endpoint}, ${config.AUTH_FAILURES_PER_KEY}, ${config.AUTH_FAILURES_PER_CLIENT}, ${route.consume},
      ${route.perPage ?? null})`;
  if (!row) throw new Error('app.admit returned no row');
  return row;
}

/**
 * Quota headers whenever the key is known; the per-minute figures only when this request was
 * counted against the minute (a request that is not counted does not read the minute's counter).
 * Set once a response: by admission, or for an answer given before it ran (quotaHeaders).
 */
function setLimitHeaders(ctx: Context, row: AdmitRow) {
  addHeaders(ctx, limitHeaders(row));
}

/**
 * The quota and rate-limit headers of a decision, as a flat [name, value, …] list (none for an
 * unknown key). Built on every keyed request: one array.
 */
export function limitHeaders(row: AdmitRow): string[] {
  if (row.quota_limit === null) return [];
  const limit = Number(row.quota_limit);
  const used = row.quota_used ?? '0';
  const remaining = Math.max(0, limit - Number(used));
  // Unix epoch seconds, as the reference's official client parses it
  const resetEpoch = Math.floor(row.quota_reset.getTime() / 1000);
  const reset = String(resetEpoch);
  const resetIn = Math.max(0, resetEpoch - Math.floor(Date.now() / 1000));
  // A calendar month (UTC) has no fixed window: the policy states the quota, RateLimit the time left.
  const policy = `${row.rate_limit !== null ? `"minute";q=${row.rate_limit};w=60, ` : ''}"month";q=${row.quota_limit}`;
  const month = `"month";r=${remaining};t=${resetIn}`;
  if (row.rate_remaining === null || row.rate_reset === null) {
    return [
      'X-Quota-Limit', row.quota_limit, 'X-Quota-Used', used, 'X-Quota-Remaining', String(remaining), 'X-Quota-Reset', reset,
      'RateLimit-Policy', policy, 'RateLimit', month,
    ];
  }
  return [
    'X-Quota-Limit', row.quota_limit, 'X-Quota-Used', used, 'X-Quota-Remaining', String(remaining), 'X-Quota-Reset', reset,
    'X-RateLimit-Limit', String(row.rate_limit), 'X-RateLimit-Remaining', String(row.rate_remaining), 'X-RateLimit-Reset', String(row.rate_reset),
    'RateLimit-Policy', policy, 'RateLimit', `"minute";r=${row.rate_remaining};t=${row.rate_reset}, ${month}`,
  ];
}

/** A key as a request presented it, and its digest (what it is looked up by). */
export interface Presented {
  key: string;
  digest: KeyDigest;
}

const presentedKey = (key: string | null): Presented | null => (key ? { key, digest: keyDigest(key) } : null);

/** The key of an `Authorization: Bearer <key>` header and its digest, or null when absent or not a Bearer header. */
export function presentedBearer(header: string | undefined): Presented | null {
  return header ? bearerOf(header) || null : null;
}
// a client sends the same header on every request: read and digested once while it keeps coming (false for none)
const bearerOf = memoized((header: string): Presented | false => presentedKey(/^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1] ?? null) ?? false, { max: 10_000, maxKeyLength: 128 });

/** The key of an `Authorization: Bearer <key>` header, or null when absent or not a Bearer header. */
export const bearerKey = (header: string | undefined): string | null => presentedBearer(header)?.key ?? null;
