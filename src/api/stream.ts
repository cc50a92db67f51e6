// Live streams (issue 35): the live index prices of the selected coins, as Server-Sent Events
// (GET /api/v1/stream/prices) or over a WebSocket (/api/v1/ws, subscribe/unsubscribe messages).
// The selectors and convert are those of GET /prices; a stream opens only once the key, its plan
// (STREAM_PLANS), its concurrent streams (STREAM_CONNECTIONS) and the selectors are accepted — one
// admission and one hub for both protocols (src/streams/hub.ts, handed in by src/service.ts as
// deps.streams). SQL: sql/functions/960_live_prices.sql.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Context } from 'koa';
import { z } from 'zod';
import { WebSocketServer, type WebSocket } from 'ws';
import { defineRoute } from '../http/routes.ts';
import { ApiError, toApiError } from '../http/errors.ts';
import { countResponse, presentedBearer, type Deps } from '../http/admission.ts';
import { fieldErrors } from '../http/validation.ts';
import { closeCode, type LivePrices, type LiveSession } from '../http/live-prices.ts';
import { streamAdmission, streamPlan } from '../http/stream-admission.ts';
import type { Sql } from '../db/client.ts';
import { capSelectors, listOrNull, selectorFields } from './coins.ts';
import { convert } from './prices.ts';

const SSE_ENDPOINT = 'GET /api/v1/stream/prices';
const WS_ENDPOINT = 'GET /api/v1/ws';
/** coin-currency pairs one WebSocket may hold: the selectors one SSE stream may name */
const MAX_PAIRS = 100;
/** a browser that sends its key in the first message has this long to do so */
const AUTH_WAIT_MS = 10_000;

const selection = z
  .object({ ...selectorFields, convert })
  .superRefine(capSelectors)
  .superRefine((value, ctx) => {
    if (!value.ids?.length && !value.slugs?.length && !value.symbols?.length) {
      ctx.addIssue({ code: 'custom', path: ['ids'], message: 'Pass at least one selector: ids, slugs or symbols.' });
    }
  });
type Selection = z.output<typeof selection>;

/** The selected coins' ids; an unknown selector or currency raises MD422 (a 422 naming it). */
async function selectedCoins(sql: Sql, q: Selection): Promise<number[]> {
  return (await sql<{ coin_id: number }[]>`
    select coin_id from api.stream_coins(${listOrNull(q.ids)}::int[], ${listOrNull(q.slugs)}::text[], ${listOrNull(q.symbols)}::text[], ${q.convert})`).map((row) => row.coin_id);
}

const hubOf = (deps: Deps): LivePrices => {
  if (!deps.streams) throw new ApiError(503, 'service_unavailable', 'Live streams are not served by this process.');
  return deps.streams;
};

export const streamRoutes = [
  defineRoute({
    method: 'get', path: '/stream/prices', operationId: 'streamPrices', tag: 'Prices', noStore: true, reads: 'primary',
    plan: (_query, config) => streamPlan(config?.STREAM_PLANS),
    query: selection,
    summary: 'The live index prices of the selected coins (ids, slugs or symbols, optionally in a fiat currency) as Server-Sent Events, within a second of the venues.',
    stream: {
      contentType: 'text/event-stream',
      description:
        'Server-Sent Events. First `snapshot` (data: {data: [{id, slug, symbol, price, currency, at, kind}], meta: {currency, count}}): ' +
        'each coin\'s live index price (kind `live`), or until it has one (the first seconds after a start) its latest minute price (kind `minute`); ' +
        'then one `price` event per change of a selected coin\'s live index price (kind `live`; at most one a second per coin), each with an `id:` line: ' +
        'reconnect with `Last-Event-ID` to receive the changes missed instead of the snapshot. A `:` comment line every 15 s keeps the connection open. ' +
        'The stream ends with an `end` event saying why (slow_consumer: the client did not read; revoked; quota_exceeded). ' +
        'The same prices over WebSocket: /api/v1/ws (subscribe/unsubscribe messages with these selectors). ' +
        'Plans: Starter and Pro by default (STREAM_PLANS); concurrent streams per key by plan over SSE and WebSocket together, across all API processes (STREAM_CONNECTIONS, default Starter 2, Pro 10). ' +
        'Quota: opening a stream counts one request, and each further minute it stays open one more (one request per connection-minute). ' +
        'Prices are decimal strings, live index prices in USD converted with the latest rate; REST prices stay minute-based.',
    },
    handler: async ({ query: q, key: admitted, deps, ctx }) => {
      const hub = hubOf(deps);
      const coins = await selectedCoins(deps.sql, q);
      const key = await streamAdmission(ctx, deps, presentedBearer(ctx.get('authorization')), SSE_ENDPOINT).admit(admitted);
      const lastEventId = /^\d{1,18}$/.exec(ctx.get('last-event-id') ?? '')?.[0];
      await hub.serveEvents(ctx, key, coins, q.convert, lastEventId ? Number(lastEventId) : undefined);
    },
  }),
];

/** A client's message on /api/v1/ws. */
const clientMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auth'), key: z.string().min(1).max(200) }),
  z.object({ type: z.literal('subscribe'), ids: z.unknown().optional(), slugs: z.unknown().optional(), symbols: z.unknown().optional(), convert: z.string().optional() }),
  z.object({ type: z.literal('unsubscribe'), ids: z.unknown().optional(), slugs: z.unknown().optional(), symbols: z.unknown().optional(), convert: z.string().optional() }),
  z.object({ type: z.literal('ping') }),
]);

/** Selectors of a message as GET /prices takes them: lists (or CSV strings) become CSV. */
function parseSelection(message: Record<string, unknown>): Selection {
  const csv = (value: unknown) => (Array.isArray(value) ? value.map(String).join(',') : value === undefined ? undefined : String(value));
  const parsed = selection.safeParse({ ids: csv(message.ids), slugs: csv(message.slugs), symbols: csv(message.symbols), convert: message.convert });
  if (!parsed.success) throw ApiError.validation(fieldErrors(parsed.error));
  return parsed.data;
}

/**
 * /api/v1/ws: the key as `Authorization: Bearer` on the upgrade request, or `{"type": "auth", "key"}`
 * first; then `{"type": "subscribe" | "unsubscribe", ids|slugs|symbols, convert}` and `{"type": "ping"}`.
 * Answers: `snapshot` per subscription, `price` per change (the SSE event's data with its version),
 * `pong`, `end`; a refusal is `{"type": "error", "error": {code, message, details}}` (the error
 * envelope), then the socket closes with 4000 + the HTTP status.
 */
export function priceSocket(deps: Deps) {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 });
  return (req: IncomingMessage, socket: Duplex, head: Buffer, ctx: Context) =>
    wss.handleUpgrade(req, socket, head, (ws) => serveSocket(ws, ctx, deps));
}

function serveSocket(ws: WebSocket, ctx: Context, deps: Deps) {
  let subscriber: LiveSession | null = null;
  let failed = false;
  // a connection is one response in the key's usage (app.usage_daily): its opening, or the refusal before it
  let counted = false;
  const countOnce = (status: number) => {
    if (counted) return;
    counted = true;
    void countResponse(ctx, deps, status);
  };
  const fail = (error: unknown) => {
    if (failed) return;
    failed = true;
    const apiError = toApiError(error);
    countOnce(apiError.status);
    ws.send(JSON.stringify({ type: 'error', error: { code: apiError.code, message: apiError.message, details: apiError.details } }));
    ws.close(closeCode(apiError.status));
    subscriber?.close();
  };
  const authenticate = async (key: string | null) => {
    const hub = hubOf(deps);
    const presented = key ? presentedBearer(`Bearer ${key}`) : null;
    const admitted = await streamAdmission(ctx, deps, presented, WS_ENDPOINT).admit();
    subscriber = await hub.openSocket(ws, admitted);
    countOnce(101);
    ws.send(JSON.stringify({ type: 'ready', plan: admitted.plan }));
  };
  const handle = async (raw: string) => {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      throw new ApiError(400, 'invalid_json', 'A message is not valid JSON.');
    }
    const parsed = clientMessage.safeParse(json);
    if (!parsed.success) throw new ApiError(400, 'bad_request', 'A message is {"type": "auth" | "subscribe" | "unsubscribe" | "ping", …}.');
    const message = parsed.data;
    if (message.type === 'ping') return void ws.send(JSON.stringify({ type: 'pong' }));
    if (message.type === 'auth') {
      if (subscriber) throw new ApiError(400, 'bad_request', 'Already authenticated.');
      return authenticate(message.key);
    }
    if (!subscriber) throw new ApiError(401, 'unauthorized', 'Send an API key as "Authorization: Bearer <key>" or as the first message {"type": "auth", "key": "…"}.');
    const q = parseSelection(message);
    const coins = await selectedCoins(deps.sql, q);
    if (message.type === 'unsubscribe') {
      subscriber.unsubscribe(coins, q.convert);
      return void ws.send(JSON.stringify({ type: 'unsubscribed', ids: coins, currency: q.convert }));
    }
    const adding = coins.filter((coin) => !subscriber!.selects(coin, q.convert)).length;
    if (subscriber.size + adding > MAX_PAIRS) {
      throw ApiError.validation({ ids: [`A connection holds at most ${MAX_PAIRS} coin subscriptions (each currency counts).`] });
    }
    await subscriber.subscribe(coins, q.convert);
  };
  // one message at a time, in order
  let queue = Promise.resolve();
  ws.on('message', (data, isBinary) => {
    if (failed) return;
    queue = queue.then(() => (failed ? undefined : handle(isBinary ? '' : String(data)))).catch(fail);
  });
  ws.on('error', () => ws.terminate());
  ws.on('close', () => subscriber?.close());
  const header = ctx.get('authorization');
  if (header) {
    const bearer = presentedBearer(header);
    queue = queue.then(() => authenticate(bearer?.key ?? null)).catch(fail);
  } else {
    setTimeout(() => {
      if (!subscriber && !failed && ws.readyState === ws.OPEN) fail(new ApiError(401, 'unauthorized', 'No API key within 10 s: send {"type": "auth", "key": "…"} first.'));
    }, AUTH_WAIT_MS).unref();
  }
}
