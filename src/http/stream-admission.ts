// The admission of a live stream (SSE or WebSocket alike): the plan of STREAM_PLANS, the quota, a
// valid key, at its opening and again for each minute it stays open (one request per
// connection-minute), through the same admission as every request (src/http/admission.ts).
import type { Context } from 'koa';
import { admission, admissionDecision, type Admitted, type Deps, type Presented } from './admission.ts';
import type { StreamKey } from './live-prices.ts';
import { PLANS_BY_SCOPE, type PlanName } from '../plans.ts';

/**
 * The stream admission of a presented key, shared by both protocols: the plan of STREAM_PLANS,
 * the quota, a valid key. `admit()` throws the refusal as an ApiError.
 */
export function streamAdmission(ctx: Context, deps: Deps, presented: Presented | null, endpoint: string) {
  const route = { endpoint, plan: streamPlan(deps.config.STREAM_PLANS), consume: true };
  const key = (admitted: Admitted): StreamKey => ({
    id: admitted.id,
    plan: admitted.plan,
    hex: presented!.digest.hex,
    again: async () => {
      const row = await admissionDecision(ctx, deps, presented, { ...route });
      if (row.outcome === 'ok') return null;
      return row.outcome === 'auth_rate_limited' || row.outcome === 'per_page_exceeded' || row.outcome === 'wrong_scope' ? 'unauthorized' : row.outcome;
    },
  });
  return {
    /** admission of the stream's opening (the route's own, for SSE, has already run: pass what it admitted) */
    admit: async (admitted?: Admitted): Promise<StreamKey> => key(admitted ?? (await admission(ctx, deps, { ...route, key: presented?.key ?? null }))),
  };
}

/** The lowest of the plans allowed to stream: the one a key needs at least. */
export const streamPlan = (plans: readonly string[] | undefined): PlanName =>
  PLANS_BY_SCOPE['data-api'].find((plan) => (plans ?? ['starter', 'pro']).includes(plan)) ?? 'starter';
