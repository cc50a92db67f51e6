// Machine-readable discovery documents: /apis.json (APIs.json 0.18), /.well-known/api-catalog
// (RFC 9727 linkset) and /.well-known/security.txt (RFC 9116). Absolute URLs from PUBLIC_URL or
// the request (publicBase); no key needed.
import type { Context } from 'koa';
import { VERSION } from '../version.ts';
import type { Config } from '../config.ts';
import { changelog } from '../changelog.ts';
import { API_PREFIX, MCP_PATH, REFERENCE_PATHS } from '../http/routes.ts';
import { publicBase } from '../http/base.ts';

const DESCRIPTION = 'Self-hostable crypto market data: coins, prices, OHLCV history, exchanges, markets, indicators, sentiment, conversions, webhooks and alarms.';
// the MCP server and its card are served by src/mcp/
const MCP_CARD_PATH = '/.well-known/mcp/server-card.json';

/** The links every discovery document shares, absolute. */
export function serviceLinks(ctx: Context, config: Pick<Config, 'PUBLIC_URL'>) {
  const base = publicBase(ctx, config);
  return {
    base,
    api: `${base}${API_PREFIX}`,
    openapi: `${base}${API_PREFIX}/openapi.json`,
    docs: `${base}/docs`,
    apiReference: `${base}${REFERENCE_PATHS[0]}`,
    status: `${base}/status`,
    statusJson: `${base}/status.json`,
    changelog: `${base}/changelog`,
    versioning: `${base}/versioning`,
    mcp: `${base}${MCP_PATH}`,
    mcpCard: `${base}${MCP_CARD_PATH}`,
    apisJson: `${base}/apis.json`,
    catalog: `${base}/.well-known/api-catalog`,
    securityTxt: `${base}/.well-known/security.txt`,
    logo: `${base}/logo.svg`,
  };
}

/** The date of the newest released version (CHANGELOG.md), the documents' "modified". */
const releaseDate = () => changelog().find((version) => version.date)?.date ?? null;

export function apisJson(config: Config) {
  return async (ctx: Context) => {
    const links = serviceLinks(ctx, config);
    const released = releaseDate();
    ctx.body = {
      name: 'market-data-api',
      description: DESCRIPTION,
      image: links.logo,
      url: links.apisJson,
      tags: ['crypto', 'market data', 'prices', 'OHLCV'],
      ...(released ? { created: released, modified: released } : {}),
      specificationVersion: '0.18',
      apis: [
        {
          name: 'Data API',
          description: `The HTTP JSON API under ${API_PREFIX} (version ${VERSION}); a Bearer key with the data-api scope.`,
          image: links.logo,
          // for people: the OpenAPI document rendered
          humanURL: links.apiReference,
          baseURL: links.api,
          tags: ['REST', 'JSON'],
          properties: [
            { type: 'OpenAPI', url: links.openapi },
            { type: 'Documentation', url: links.docs },
            { type: 'x-api-reference', url: links.apiReference },
            { type: 'Status', url: links.status },
            { type: 'ChangeLog', url: links.changelog },
            { type: 'x-versioning-policy', url: links.versioning },
          ],
        },
        {
          name: 'MCP tool server',
          description: 'Read-only Model Context Protocol tools (Streamable HTTP) over the same data; a key with the mcp scope.',
          image: links.logo,
          humanURL: links.docs,
          baseURL: links.mcp,
          tags: ['MCP', 'AI agents'],
          properties: [
            { type: 'x-mcp-server-card', url: links.mcpCard },
            { type: 'Documentation', url: links.docs },
            { type: 'Status', url: links.status },
            { type: 'ChangeLog', url: links.changelog },
          ],
        },
      ],
      common: [
        { type: 'Status', url: links.status },
        { type: 'x-status-json', url: links.statusJson },
        { type: 'ChangeLog', url: links.changelog },
        { type: 'x-security-txt', url: links.securityTxt },
        { type: 'x-api-catalog', url: links.catalog },
      ],
      maintainers: [{ name: 'market-data-api operators', url: links.base }],
    };
  };
}

/** RFC 9727: the catalog is a linkset (RFC 9264) with the RFC's profile; HEAD answers with the Link alone. */
export const API_CATALOG_PROFILE = 'https://www.rfc-editor.org/info/rfc9727';

export function apiCatalog(config: Config) {
  return async (ctx: Context) => {
    const links = serviceLinks(ctx, config);
    ctx.set('Link', `<${links.catalog}>; rel="api-catalog"`);
    ctx.body = JSON.stringify({
      linkset: [
        {
          anchor: links.api,
          'service-desc': [{ href: links.openapi, type: 'application/vnd.oai.openapi+json' }],
          'service-doc': [{ href: links.apiReference, type: 'text/html' }, { href: links.docs, type: 'text/html' }],
          status: [{ href: links.statusJson, type: 'application/json' }, { href: links.status, type: 'text/html' }],
        },
        {
          anchor: links.mcp,
          'service-desc': [{ href: links.mcpCard, type: 'application/json' }],
          'service-doc': [{ href: links.docs, type: 'text/html' }],
          status: [{ href: links.statusJson, type: 'application/json' }],
        },
      ],
    });
    // set after the body: Koa types a string body as text/html or text/plain otherwise
    ctx.type = `application/linkset+json; profile="${API_CATALOG_PROFILE}"`;
  };
}

const DAY_MS = 86_400_000;
/** Computed once: the default expiry is 360 days after the day this process started (RFC 9116: under a year). */
const defaultExpires = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS + 360 * DAY_MS);

export function securityTxt(config: Config) {
  return async (ctx: Context) => {
    const links = serviceLinks(ctx, config);
    const contact = config.SECURITY_CONTACT ?? `mailto:security@${new URL(links.base).hostname}`;
    const expires = config.SECURITY_TXT_EXPIRES ? new Date(config.SECURITY_TXT_EXPIRES) : defaultExpires;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = [
      `Contact: ${contact}`,
      `Expires: ${expires.toISOString().replace(/\.\d{3}Z$/, 'Z')}`,
      `Policy: ${links.versioning}#security`,
      `Canonical: ${links.securityTxt}`,
      'Preferred-Languages: en',
      '',
    ].join('\n');
  };
}

export async function logo(ctx: Context) {
  ctx.type = 'image/svg+xml';
  ctx.set('Cache-Control', 'public, max-age=86400');
  ctx.body = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="12" fill="#1b1f24"/>' +
    '<polyline points="8,44 22,30 32,38 46,18 56,24" fill="none" stroke="#3fb950" stroke-width="5" stroke-linecap="round" stroke-linejoin="round"/></svg>';
}
