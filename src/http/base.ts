// Where the service is, as its readers reach it: the base of every absolute URL it writes (links,
// logos, the OpenAPI servers, the widgets' and MCP's own addresses).
import type { Context } from 'koa';
import type { Config } from '../config.ts';

/**
 * The service's absolute base URL: PUBLIC_URL, else the request's scheme and host (behind a proxy
 * with TRUST_PROXY, its X-Forwarded-Proto/Host).
 */
export const publicBase = (ctx: Context, config: Pick<Config, 'PUBLIC_URL'>) => config.PUBLIC_URL ?? `${ctx.protocol}://${ctx.host}`;
