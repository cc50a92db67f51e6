// The Koa application: request id, security headers, the error envelope, body limits, the /api/v1
// router built from the route declarations it is given and the routers given to mount beside it
// (src/service.ts gives src/api's routes, the public pages, MCP, the console and the widgets: the HTTP
// core imports none of them).
import { randomUUID } from 'node:crypto';
import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import Koa, { type Context } from 'koa';
import helmet from 'koa-helmet';
import { ApiError, errorMiddleware, toApiError } from './errors.ts';
import type { Deps } from './admission.ts';
import { API_PREFIX, apiRouter, REFERENCE_PATHS, type RouteSpec } from './routes.ts';
import { createLogger, type Logger } from '../log.ts';
import { Metrics } from '../metrics.ts';
import { healthz, readyz } from './health.ts';
import { metricsHandler } from './metrics.ts';
import { observeRequests } from './observe.ts';
import { countResponses, quotaHeaders } from './admission.ts';
import { AdmissionBatcher } from './admission-batch.ts';
import { responseCache, type ResponseCache } from './cache.ts';
import type { LivePrices } from './live-prices.ts';
import { Listener } from '../db/listener.ts';
import { compressResponses, flushHead, getHeader, headOpen, openHead } from './head.ts';

const REQUEST_ID = /^[\w.-]{1,64}$/;
/** Request headers allowed (Node's default); checked in the app, where the key can still be read. */
const MAX_HEADER_BYTES = 16 * 1024;
/** Above this Node refuses the request before it is parsed (guardServer answers, without quota headers). */
const HARD_HEADER_BYTES = 4 * MAX_HEADER_BYTES;
/** how long an idle keep-alive connection is kept open (beyond the clients' own idle limits) */
const KEEP_ALIVE_MS = 65_000;

/** A WebSocket endpoint: the upgrade request, its socket and first bytes, and a Koa context of the request. */
export type SocketHandler = (req: IncomingMessage, socket: Duplex, head: Buffer, ctx: Context) => void;

/** What the app serves, handed in by the composition root (src/service.ts). */
export interface Served {
  /** the API groups' route declarations, mounted under /api/v1 */
  routes: RouteSpec[];
  /** routers built from the app's dependencies (and its response cache) and mounted beside /api/v1, after the operations endpoints (public pages, MCP, console, widgets) */
  routers?: ((deps: Deps, cache: ResponseCache) => Router)[];
  /** WebSocket endpoints by path (/api/v1/ws): each built from the app's dependencies, given the upgrade request and a Koa context of it (its ip, its headers) */
  sockets?: Record<string, (deps: Deps) => SocketHandler>;
  /** the live-price hub (src/streams/), built from the app's dependencies and started: deps.streams, closed with the app */
  streams?: (deps: Deps & { listener: Listener }, metrics: Metrics, logger: Logger) => LiveHub;
}

/** The live-price hub as the app holds it: what the stream endpoints ask of it, and its end. */
export interface LiveHub extends LivePrices {
  close(): Promise<void>;
}

export interface Observability {
  /** default: a logger configured by LOG_FORMAT / LOG_LEVEL */
  logger?: Logger;
  /** default: a registry of this app's own */
  metrics?: Metrics;
}

/**
 * The Koa app; `close()` writes the admission counts still pending and stops listening for key and
 * data-version changes (call it before ending the pool). The cache, admission and the live-price
 * hub hear notifications through one listener: the process's (given.listener), else one of the app's own.
 */
export function createApp(given: Deps, observability: Observability, served: Served) {
  const { routes } = served;
  const logger = observability.logger ?? createLogger(given.config);
  const ownListener = given.listener ? null : new Listener(given.sql, { logger });
  const listener = given.listener ?? ownListener!;
  const flushMs = given.config.ADMISSION_FLUSH_MS;
  const batcher = given.admission === undefined && flushMs > 0 ? new AdmissionBatcher(given.sql, listener, flushMs, logger) : null;
  batcher?.start();
  const metrics = observability.metrics ?? new Metrics(given.config);
  const streams = given.streams === undefined ? served.streams?.({ ...given, listener }, metrics, logger) ?? null : null;
  const deps: Deps & { listener: Listener } = {
    ...given, listener, admission: given.admission ?? batcher, streams: given.streams ?? streams, logger: given.logger ?? logger,
  };
  const app = new Koa();
  app.proxy = deps.config.TRUST_PROXY;

  const security = securityHeaders();
  /** What every API answer carries before its own headers: its id, the security headers and Vary (koa-compress's) */
  const apiHead = (ctx: Context) => ['X-Request-Id', requestId(ctx), ...security.api, 'Vary', 'Accept-Encoding'];
  const cache = responseCache(deps, routes);
  metrics.cacheWaitsOut = () => cache.versions.waitedOut;
  metrics.cacheConfirmReadCount = () => cache.versions.confirmReads;
  app.use(observeRequests(logger, metrics, deps.config.LOG_REQUESTS));
  // each keyed response's final status, for the key's usage (app.usage_daily)
  app.use(countResponses(deps, logger));
  app.use(errorMiddleware(logger));
  // a URL answered from the response cache before is answered again here, before any other header is set
  app.use(cache.shortcut({
    headers: apiHead,
    ordinary: (ctx) => headerBytes(ctx) <= MAX_HEADER_BYTES && !ctx.get('content-length') && !ctx.get('transfer-encoding'),
  }));
  // An API answer's headers are kept in a list and written with its body in one call (src/http/head.ts);
  // whatever else answers gets them set on the response. A keyed /api/v1 request answered before
  // admission ran (unknown route, bad JSON, oversized body or headers) still carries the key's quota
  // headers, as every keyed response does.
  app.use(async (ctx, next) => {
    if (isDataApiPath(ctx.path)) openHead(ctx, apiHead(ctx));
    else ctx.set('X-Request-Id', requestId(ctx));
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined && answeredBeforeAdmission(ctx)) await quotaHeaders(ctx, deps);
    } catch (error) {
      if (answeredBeforeAdmission(ctx) && toApiError(error).status < 500) await quotaHeaders(ctx, deps);
      throw error;
    } finally {
      flushHead(ctx);
    }
  });
  // Responses whose headers are not kept (pages, MCP, operations): the security headers now, then
  // gzip or brotli as Accept-Encoding asks above a size worth it (an API answer's in writeAnswer; a
  // cached body arrives already encoded, src/http/cache.ts).
  app.use((ctx, next) => {
    if (headOpen(ctx)) return next();
    security.set(ctx);
    return compressResponses(ctx, next);
  });
  // The limits every request is held to, then the JSON body of a request that sends one.
  const parseBody = bodyParser({
    enableTypes: ['json'],
    // Any JSON value parses; a route that takes a body says when it is not an object (routes.ts).
    jsonStrict: false,
    jsonLimit: deps.config.MAX_BODY_BYTES,
    encoding: 'utf-8',
    onError: (error) => {
      if ((error as { status?: number }).status === 413) {
        throw ApiError.payloadTooLarge(deps.config.MAX_BODY_BYTES);
      }
      throw new ApiError(400, 'invalid_json', 'The request body is not valid JSON.');
    },
  });
  app.use((ctx, next) => {
    if (headerBytes(ctx) > MAX_HEADER_BYTES) throw new ApiError(431, 'headers_too_large', 'Request headers are too large.');
    if (Number(ctx.get('content-length') || 0) > deps.config.MAX_BODY_BYTES) throw ApiError.payloadTooLarge(deps.config.MAX_BODY_BYTES);
    // a form body is left to the router that reads forms (the console's)
    return ctx.is('application/x-www-form-urlencoded') ? next() : parseBody(ctx, next);
  });

  // The API first: its requests, nearly all of them, never try the other routers' paths (which
  // cost a tenth of a small uncached answer); what it does not match goes on to them.
  app.use(apiRouter(routes, deps, cache));

  // Operations endpoints beside /api/v1, without an API key (see each for its own access rule).
  const operations = new Router();
  operations.get('/healthz', healthz);
  operations.get('/readyz', readyz(deps));
  operations.get('/metrics', metricsHandler(deps, metrics));
  app.use(operations.routes());
  for (const router of served.routers ?? []) app.use(router(deps, cache).routes());

  const sockets = new Map(Object.entries(served.sockets ?? {}).map(([path, build]) => [path, build(deps)]));
  /** An upgrade request to a WebSocket endpoint; anything else is refused. */
  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const handler = sockets.get(new URL(req.url ?? '/', 'http://x').pathname);
    if (!handler) return void socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    socket.on('error', () => socket.destroy());
    handler(req, socket, head, app.createContext(req, new ServerResponse(req)));
  };

  return Object.assign(app, {
    admission: deps.admission ?? null,
    /** Serves the WebSocket endpoints on `server` (the one serving app.callback()). */
    attach: (server: Server) => void server.on('upgrade', upgrade),
    streams: deps.streams ?? null,
    close: async () => {
      cache.versions.stop();
      await streams?.close();
      await batcher?.close();
      await ownListener?.close();
    },
  });
}

/**
 * helmet's response headers, recorded once (they are fixed strings) and set on every response:
 * running its chain of a dozen small middlewares per request was a tenth of the cost of an answer
 * from the response cache. JSON under /api/v1 and /mcp gets the set OWASP's REST guidance names
 * (a CSP that allows nothing, HSTS, nosniff, framing denied): the rest of helmet's defaults only
 * matter to a browser rendering HTML, and on a small cached answer their bytes cost more than the
 * body. Pages (status, docs, changelog) keep helmet's defaults.
 */
function securityHeaders(): { api: string[]; set: (ctx: Context) => void } {
  const api = recordHelmet({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    xFrameOptions: { action: 'deny' },
    crossOriginOpenerPolicy: false, crossOriginResourcePolicy: false, originAgentCluster: false, referrerPolicy: false,
    xDnsPrefetchControl: false, xDownloadOptions: false, xPermittedCrossDomainPolicies: false, xXssProtection: false,
  });
  const page = recordHelmet();
  const removed = [...new Set([...api.removed, ...page.removed])];
  return {
    api: api.headers,
    set: (ctx) => {
      const { headers } = isApiPath(ctx.path) ? api : page;
      for (const name of removed) ctx.res.removeHeader(name);
      for (let i = 0; i < headers.length; i += 2) ctx.res.setHeader(headers[i]!, headers[i + 1]!);
    },
  };
}

/** The headers helmet sets with these options, flat, and those it removes. */
function recordHelmet(options?: Parameters<typeof helmet>[0]) {
  const headers: string[] = [];
  const removed: string[] = [];
  const recorder = { setHeader: (name: string, value: string) => void headers.push(name, String(value)), removeHeader: (name: string) => void removed.push(name) };
  // helmet sets its headers synchronously, before it calls next
  void helmet(options)({ req: {}, res: recorder } as never, async () => {});
  if (headers.length === 0) throw new Error('helmet set no header: its interface changed');
  return { headers, removed };
}

/** The Data API's JSON answers: under the prefix, but not the HTML reference served there. */
const isDataApiPath = (path: string) =>
  (path === API_PREFIX || path.startsWith(`${API_PREFIX}/`)) && !(REFERENCE_PATHS as readonly string[]).includes(path);
/**
 * JSON answers: the Data API and MCP. MCP's transport writes its own response head (and streams),
 * so its headers are set as they come rather than kept (src/http/head.ts).
 */
const isApiPath = (path: string) => isDataApiPath(path) || path === '/mcp' || path.startsWith('/mcp/');

/** An /api/v1 request answered before admission ran (admission leaves its outcome; a refused key must not be looked up, and counted, twice). */
const answeredBeforeAdmission = (ctx: Context) =>
  ctx.state.admission === undefined && !getHeader(ctx, 'X-Quota-Limit') && (ctx.path === API_PREFIX || ctx.path.startsWith(`${API_PREFIX}/`));

/** The request's id: the client's X-Request-Id when it is a sane token, else a fresh UUID (once per request). */
function requestId(ctx: Context): string {
  if (ctx.state.requestId) return ctx.state.requestId;
  const incoming = ctx.get('x-request-id');
  return (ctx.state.requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID());
}

/** The size of the request's headers as received (names, values, separators). */
function headerBytes(ctx: Context): number {
  const raw = ctx.req.rawHeaders;
  let bytes = 0;
  for (let i = 0; i < raw.length; i += 2) bytes += raw[i]!.length + raw[i + 1]!.length + 4;
  return bytes;
}

/** Headers over the hard cap and malformed requests never reach Koa; answer them with the envelope too. */
export function guardServer(server: Server) {
  // Node reads the server's maxHeaderSize for each new connection (not in its typings).
  (server as Server & { maxHeaderSize?: number }).maxHeaderSize = HARD_HEADER_BYTES;
  // An idle keep-alive connection stays open longer than clients keep theirs (fetch: 4 s, load
  // balancers: 60 s): the client closes first, so it never sends a request on a connection the
  // server is closing at that moment (Node's 5 s default lost such requests on a loaded machine).
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  // a request's headers may take a little longer than that wait (Node's advice: the larger of the two)
  server.headersTimeout = KEEP_ALIVE_MS + 1_000;
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const [status, code, message] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'headers_too_large', 'Request headers are too large.']
        : [400, 'bad_request', 'The request could not be parsed.'];
    const body = JSON.stringify({ error: { code, message, details: {} } });
    socket.end(
      `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        // The headers were not read, so there is no incoming id to echo: a fresh one, as on every response.
        `X-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
