// The MCP tool server at /mcp: Streamable HTTP in stateless mode (a server and a transport per
// request, no sessions), JSON responses, the 19 tools of tools.ts, and the server card.
import Router from '@koa/router';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Context } from 'koa';
import { z } from 'zod';
import { ApiError, toApiError } from '../http/errors.ts';
import type { Deps } from '../http/admission.ts';
import { fieldErrors } from '../http/validation.ts';
import { admitMcp, checkOrigin } from './auth.ts';
import { runTool, TOOLS } from './tools.ts';
import { VERSION } from '../version.ts';

export const MCP_PATH = '/mcp';
export const SERVER_CARD_PATHS = ['/.well-known/mcp/server-card.json', '/.well-known/mcp.json'];
const NAME = 'market-data-api';
const TITLE = 'Market Data API tools';
const DESCRIPTION = 'Read-only crypto market data: coins, prices and history, movers, trending, global market, sentiment, conversion, exchanges, markets, technicals, liquidations and a DCA calculator.';
const TOOL_ANNOTATIONS = { readOnlyHint: true, openWorldHint: false, destructiveHint: false, idempotentHint: true };
const BY_NAME = new Map(TOOLS.map((tool) => [tool.name, tool]));

/** A failed tool call as a tool result (never a protocol error): the error envelope as its text. */
function toolError(error: unknown): CallToolResult {
  const { code, message, details } = toApiError(error);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { code, message, details } }) }] };
}

function buildServer(ctx: Context, deps: Deps): McpServer {
  const server = new McpServer({ name: NAME, title: TITLE, version: VERSION }, { capabilities: { tools: {} } });
  for (const tool of TOOLS) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, outputSchema: tool.output, annotations: { title: tool.title, ...TOOL_ANNOTATIONS } },
      () => ({ content: [] }),
    );
  }
  // tools/call is answered here rather than by McpServer, whose argument errors are plain text: a bad
  // argument is a tool result carrying the envelope's code and message, like any other failure.
  server.server.removeRequestHandler('tools/call');
  server.server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = BY_NAME.get(request.params.name);
    if (!tool) return toolError(new ApiError(404, 'not_found', `No tool named ${request.params.name}.`));
    try {
      const parsed = z.object(tool.input).strict().safeParse(request.params.arguments ?? {});
      if (!parsed.success) throw ApiError.validation(fieldErrors(parsed.error));
      const body = await runTool(tool, parsed.data, ctx, deps);
      return { structuredContent: body as Record<string, unknown>, content: [{ type: 'text', text: tool.text(body) }] };
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

/** The server card: what an MCP client needs to connect, without a key. */
export function serverCard(origin: string) {
  return {
    name: NAME,
    title: TITLE,
    description: DESCRIPTION,
    version: VERSION,
    transport: { type: 'streamable-http', url: `${origin}${MCP_PATH}` },
    authentication: {
      required: true,
      schemes: [
        { type: 'http', scheme: 'bearer', header: 'Authorization', description: 'Authorization: Bearer <MCP key>' },
        { type: 'apiKey', in: 'header', header: 'X-API-Key', description: 'X-API-Key: <MCP key> (checked first when both are sent)' },
      ],
      keys: 'An MCP key (mdapi create-key --scope mcp --plan mcp-free|mcp-pro); Data API keys are refused.',
    },
    capabilities: { tools: { listChanged: false } },
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
      ctx.body = serverCard(`${ctx.protocol}://${ctx.host}`);
    });
  }
  return router;
}
