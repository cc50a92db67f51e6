// Admission of a keyed request: one call to app.admit (authentication, failed-attempt limits,
// plan gate, rate limit, quota), then the quota and rate-limit headers.
import type { Context } from 'koa';
import type { Deps, McpPlanName, PlanName } from './routes.ts';
import { ApiError } from './errors.ts';
import { hashKey } from '../keys.ts';

export interface Admitted {
  id: number;
  owner: string;
  plan: PlanName | McpPlanName;
  perPageCap: number;
}

interface AdmitRow {
  outcome: 'ok' | 'unauthorized' | 'auth_rate_limited' | 'plan_required' | 'per_page_exceeded' | 'rate_limited' | 'quota_exceeded';
  key_id: string | null;
  owner: string | null;
  plan: PlanName | McpPlanName | null;
  quota_limit: string | null;
  quota_used: string | null;
  quota_reset: Date;
  rate_limit: number | null;
  rate_remaining: number | null;
  rate_reset: number | null;
  retry_after: number | null;
  per_page_cap: number | null;
}

export async function admission(
  ctx: Context,
  { sql, config }: Deps,
  route: { endpoint: string; plan: PlanName | McpPlanName; consume: boolean; perPage?: number; scope?: 'data-api' | 'mcp'; key?: string | null },
): Promise<Admitted> {
  const key = route.key !== undefined ? route.key : bearerKey(ctx.get('authorization'));
  const [row] = await sql<AdmitRow[]>`
    select * from app.admit(
      ${key ? hashKey(key) : null}, ${ctx.ip || 'unknown'}, ${route.scope ?? 'data-api'}, ${route.plan},
      ${route.endpoint}, ${config.AUTH_FAILURES_PER_KEY}, ${config.AUTH_FAILURES_PER_CLIENT}, ${route.consume},
      ${route.perPage ?? null})`;
  if (!row) throw new Error('app.admit returned no row');
  // For the request log and metrics (src/http/observe.ts): the outcome, and which key (never the key itself).
  ctx.state.admission = row.outcome;
  if (row.key_id !== null) ctx.state.keyId = Number(row.key_id);

  if (row.quota_limit !== null) {
    ctx.set('X-Quota-Limit', row.quota_limit);
    ctx.set('X-Quota-Used', row.quota_used ?? '0');
    ctx.set('X-Quota-Reset', row.quota_reset.toISOString());
  }
  const retryAfter = { 'Retry-After': String(row.retry_after ?? 60) };
  switch (row.outcome) {
    case 'unauthorized':
      throw new ApiError(401, 'unauthorized', key ? 'The API key is invalid or revoked.' : 'Send an API key as "Authorization: Bearer <key>".', {}, { 'WWW-Authenticate': 'Bearer' });
    case 'auth_rate_limited':
      throw new ApiError(429, 'rate_limited', 'Too many failed authentication attempts; retry later.', {}, retryAfter);
    case 'plan_required':
      throw ApiError.planRequired(route.plan);
    case 'per_page_exceeded':
      throw ApiError.validation({ per_page: [`Must be at most ${row.per_page_cap} on the ${row.plan} plan.`] });
    case 'rate_limited':
      throw new ApiError(429, 'rate_limited', 'Per-minute request limit reached; retry later.', { limit: row.rate_limit }, retryAfter);
    case 'quota_exceeded':
      throw new ApiError(429, 'quota_exceeded', 'Monthly request quota exhausted.', { limit: Number(row.quota_limit) }, retryAfter);
  }
  if (route.consume) {
    ctx.set('X-RateLimit-Limit', String(row.rate_limit));
    ctx.set('X-RateLimit-Remaining', String(row.rate_remaining));
    ctx.set('X-RateLimit-Reset', String(row.rate_reset));
  }
  return { id: Number(row.key_id), owner: row.owner!, plan: row.plan!, perPageCap: row.per_page_cap! };
}

/** The key of an `Authorization: Bearer <key>` header, or null when absent or not a Bearer header. */
export function bearerKey(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}
