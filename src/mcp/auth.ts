// Who may talk to /mcp: browsers only from loopback or MCP_ALLOWED_ORIGINS (DNS-rebinding
// protection), and clients with an MCP key, admitted by app.admit like a Data API request.
import type { Context } from 'koa';
import { admission, bearerKey, type Admitted } from '../http/admission.ts';
import { ApiError } from '../http/errors.ts';
import type { Deps } from '../http/admission.ts';
import type { McpPlanName, PlanName } from '../plans.ts';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An absent Origin is a non-browser client; a present one must be loopback or configured. */
export function originAllowed(origin: string | undefined, allowed: string[]): boolean {
  if (!origin) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if ((url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname)) return true;
  return allowed.includes(url.origin);
}

export function checkOrigin(ctx: Context, { config }: Deps) {
  if (!originAllowed(ctx.get('origin') || undefined, config.MCP_ALLOWED_ORIGINS)) {
    throw new ApiError(403, 'forbidden_origin', 'This Origin may not use the MCP server; allow it with MCP_ALLOWED_ORIGINS.');
  }
}

/** The key of a request: X-API-Key when sent, else `Authorization: Bearer`. */
export const mcpKey = (ctx: Context): string | null => ctx.get('x-api-key').trim() || bearerKey(ctx.get('authorization'));

/** The MCP plan a tool needs: the free MCP plan where its endpoint is free (every plan it needs is), mcp-pro where it needs any paid plan. */
export const mcpPlan = (plan: PlanName | PlanName[]): McpPlanName => ([plan].flat().every((name) => name === 'free') ? 'mcp-free' : 'mcp-pro');

/**
 * Admits one MCP request for `endpoint`: `consume` only for a tool call (one request of the quota);
 * initialize, tools/list and the like authenticate and cost nothing. `perPage`: a tool's per_page,
 * refused over the plan's cap as on the Data API.
 */
export async function admitMcp(ctx: Context, deps: Deps, endpoint: string, plan: McpPlanName, consume: boolean, perPage?: number): Promise<Admitted> {
  try {
    return await admission(ctx, deps, { endpoint, plan, consume, scope: 'mcp', key: mcpKey(ctx), perPage });
  } catch (error) {
    // A Data API or widget key: refused as any bad key is, but told which kind of key this server takes
    if (ctx.state.admission === 'wrong_scope') throw new ApiError(401, 'unauthenticated', WRONG_KIND, {}, { 'WWW-Authenticate': 'Bearer' });
    throw error;
  }
}

const WRONG_KIND = 'This is not an MCP key: the MCP server takes only MCP keys (scope mcp), not Data API or widget keys. Ask the operator for an MCP key.';
