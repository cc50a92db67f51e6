// The MCP tool server at /mcp: Streamable HTTP in stateless mode (a server and a transport per
// request, no sessions), JSON responses, the 19 tools of tools.ts, and the server card.
import Router from '@koa/router';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Context } from 'koa';
import { z } from 'zod';
import { ApiError, toApiError } from '../http/errors.ts';
import type { Deps } from '../http/admission.ts';
import { jsonSchema } from '../http/openapi.ts';
import { MCP_PATH } from '../http/routes.ts';
import { publicBase } from '../http/base.ts';
import { fieldErrors } from '../http/validation.ts';
import { admitMcp, checkOrigin } from './auth.ts';
import { outputSchema, runTool, TOOLS } from './tools.ts';
import { VERSION } from '../version.ts';

export const SERVER_CARD_PATHS = ['/.well-known/mcp/server-card.json', '/.well-known/mcp.json'];
const NAME = 'market-data-api';
const TITLE = 'Market Data API tools';
// at most 100 characters: the registry's server.json limit
const DESCRIPTION = 'Read-only crypto market data: prices, history, movers, exchanges, sentiment, conversion and DCA.';
/** The MCP registry's server.json schema the cards follow (https://github.com/modelcontextprotocol/registry). */
export const SERVER_JSON_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';
const TOOL_ANNOTATIONS = { readOnlyHint: true, openWorldHint: false, destructiveHint: false, idempotentHint: true };
const BY_NAME = new Map(TOOLS.map((tool) => [tool.name, tool]));

/**
 * What initialize answers and the cards publish alike: tools, a fixed set (a server lives for one
 * request, so there is no list to change and no notification to send).
 */
export const CAPABILITIES = { tools: { listChanged: false } };

const argumentsOf = (tool: (typeof TOOLS)[number]) => z.object(tool.input).strict();

// tools/list: the same for every request, built once
let listed: Tool[] | undefined;
const listedTools = (): Tool[] =>
  (listed ??= TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchema(argumentsOf(tool), 'input') as Tool['inputSchema'],
    outputSchema: outputSchema(tool) as Tool['outputSchema'],
    annotations: { title: tool.title, ...TOOL_ANNOTATIONS },
  })));

/** A failed tool call as a tool result (never a protocol error): the error envelope as its text. */
function toolError(error: unknown): CallToolResult {
  const { code, message, details } = toApiError(error);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { code, message, details } }) }] };
}

// The SDK's low-level server: tools/list publishes the OpenAPI document's response schemas, and
// tools/call answers a bad argument as a tool result carrying the envelope's code and message.
function buildServer(ctx: Context, deps: Deps): Server {
  const server = new Server({ name: NAME, title: TITLE, version: VERSION }, { capabilities: CAPABILITIES });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listedTools() }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = BY_NAME.get(request.params.name);
    if (!tool) return toolError(new ApiError(404, 'not_found', `No tool named ${request.params.name}.`));
    try {
      const parsed = argumentsOf(tool).safeParse(request.params.arguments ?? {});
      if (!parsed.success) throw ApiError.validation(fieldErrors(parsed.error));
      const { body, json } = await runTool(tool, parsed.data, ctx, deps);
      // a summary for people, then the structured content as JSON text for clients that read text only
      return { structuredContent: body, content: [{ type: 'text', text: tool.text(body, parsed.data) }, { type: 'text', text: json }] };
    } catch (error) {
      const apiError = toApiError(error);
      // A database or server failure is the operator's to see, as on the Data API.
      if (apiError.status >= 500) throw error;
      return toolError(apiError);
    }
  });
  return server;
}

async function handlePost(ctx: Context, deps: Deps) {
  checkOrigin(ctx, deps);
  // Every message authenticates; only a tools/call costs quota (in runTool).
  await admitMcp(ctx, deps, 'POST /mcp', 'mcp-free', false);
  const server = buildServer(ctx, deps);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  ctx.res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  ctx.respond = false;
  await transport.handleRequest(ctx.req, ctx.res, (ctx.request as { body?: unknown }).body);
}

/** Stateless mode has no server-initiated stream and no session to end: GET and DELETE are 405. */
function methodNotAllowed(ctx: Context, deps: Deps) {
  checkOrigin(ctx, deps);
  throw new ApiError(405, 'method_not_allowed', 'This MCP server is stateless: send JSON-RPC messages with POST.', {}, { Allow: 'POST' });
}

/**
 * The MCP registry's reverse-DNS server name for this deployment: its public host reversed
 * (api.example.com: com.example.api/market-data-api); an address stays as it is.
 */
export function registryName(base: string): string {
  const host = new URL(base).hostname.replace(/^\[|\]$/g, '');
  const namespace = /^[\d.]+$/.test(host) ? host : /^[a-z0-9.-]+$/i.test(host) ? host.split('.').reverse().join('.') : host.replace(/[^a-z0-9.-]/gi, '-');
  return `${namespace}/${NAME}`;
}

/**
 * The server card: what an MCP client needs to connect, without a key. It is also a server.json of
 * the MCP registry ($schema, reverse-DNS name, version, websiteUrl, remotes); the fields before
 * (transport, authentication, capabilities, tools) stay for the clients that read them.
 */
export function serverCard(base: string) {
  const url = `${base}${MCP_PATH}`;
  return {
    $schema: SERVER_JSON_SCHEMA,
    name: registryName(base),
    title: TITLE,
    description: DESCRIPTION,
    version: VERSION,
    websiteUrl: `${base}/docs#the-mcp-tool-server-mcp`,
    remotes: [
      {
        type: 'streamable-http',
        url,
        headers: [{ name: 'Authorization', description: 'Bearer <MCP key> (or send X-API-Key: <MCP key>)', isRequired: true, isSecret: true }],
      },
    ],
    transport: { type: 'streamable-http', url },
    authentication: {
      required: true,
      schemes: [
        { type: 'http', scheme: 'bearer', header: 'Authorization', description: 'Authorization: Bearer <MCP key>' },
        { type: 'apiKey', in: 'header', header: 'X-API-Key', description: 'X-API-Key: <MCP key> (checked first when both are sent)' },
      ],
      keys: 'An MCP key (mdapi create-key --scope mcp --plan mcp-free|mcp-pro); Data API and widget keys are refused (401 unauthenticated).',
    },
    capabilities: CAPABILITIES,
    tools: TOOLS.map((tool) => ({ name: tool.name, title: tool.title, description: tool.description })),
  };
}

export function mcpRouter(deps: Deps): Router {
  const router = new Router();
  router.post(MCP_PATH, (ctx) => handlePost(ctx, deps));
  router.get(MCP_PATH, (ctx) => methodNotAllowed(ctx, deps));
  router.delete(MCP_PATH, (ctx) => methodNotAllowed(ctx, deps));
  for (const path of SERVER_CARD_PATHS) {
    router.get(path, (ctx) => {
      ctx.body = serverCard(publicBase(ctx, deps.config));
    });
  }
  return router;
}
