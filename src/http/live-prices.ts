// What the request path asks of the process's live-price hub: the stream endpoints
// (src/api/stream.ts) see it through these, as deps.streams. The hub itself is a wing
// (src/streams/hub.ts), handed to the app by src/service.ts: the request path never imports it.
import type { Context } from 'koa';
import type { WebSocket } from 'ws';

export type EndReason = 'slow_consumer' | 'revoked' | 'quota_exceeded' | 'rate_limited' | 'plan_required' | 'unauthorized' | 'shutdown';

/** The key a stream runs under, and its admission again each minute. */
export interface StreamKey {
  id: number;
  plan: string;
  /** the key's digest in hex: what an api_keys NOTIFY names */
  hex: string;
  /** admits one more minute (quota, plan and key checked again): null, or why the stream ends */
  again(): Promise<EndReason | null>;
}

/** One WebSocket's stream: the coins it selected, in which currencies. */
export interface LiveSession {
  /** how many coin-currency pairs are selected */
  readonly size: number;
  selects(coin: number, currency: string): boolean;
  /** adds coins (in a currency) and sends their snapshot */
  subscribe(coins: number[], currency: string): Promise<void>;
  unsubscribe(coins: number[], currency: string): void;
  close(): void;
}

/** What the stream endpoints ask of the process's live-price hub (src/streams/hub.ts). */
export interface LivePrices {
  /**
   * Streams `coins` (in `currency`) as Server-Sent Events on the request's response: refused (an
   * ApiError) while nothing is written yet, then the snapshot, or with `since` (Last-Event-ID) the
   * changes after that version, and each change.
   */
  serveEvents(ctx: Context, key: StreamKey, coins: number[], currency: string, since?: number): Promise<void>;
  /** Opens the stream of an accepted WebSocket for its key (refused with an ApiError: too many streams). */
  openSocket(ws: WebSocket, key: StreamKey): Promise<LiveSession>;
}

/** WebSocket close codes: 4000 + the HTTP status a refusal would have (4401, 4403, 4422, 4429), 1011 a server error. */
export const closeCode = (status: number) => (status >= 500 ? 1011 : 4000 + status);
