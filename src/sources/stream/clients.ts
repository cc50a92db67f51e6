// What the stream holder's feeds share about ccxt pro's WebSocket clients (./venues.ts tickers,
// ./candles.ts candles): a prepared instance (ws(s) URLs from EXCHANGE_URLS, its clients' logging
// into the log), the client a watch dials, and the stall guard of a silent stream.
import type { Exchange } from 'ccxt';
import type { Logger } from '../../log.ts';

/** ccxt's WebSocket client of an instance, as far as the feed needs it */
export interface StreamClient {
  connected: Promise<unknown>;
}

/** The promise, or an error when a stream stays silent `stallMs` (its `what`: no ticker, no candle). */
export async function stallGuard<T>(promise: Promise<T>, stallMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} for ${stallMs / 1000} s`)), stallMs);
  });
  try {
    return await Promise.race([promise, stalled]);
  } finally {
    clearTimeout(timer);
  }
}

const prepared = new WeakSet<Exchange>();
/** Once per instance: ws(s) URLs from EXCHANGE_URLS' http(s) base, ccxt's client logging into the log. */
export function prepareStreams(exchange: Exchange, logger: Logger | undefined, id: string) {
  if (prepared.has(exchange)) return;
  prepared.add(exchange);
  websocketSchemes(exchange);
  quietClients(exchange, logger, id);
}

/** who waits for an instance's next WebSocket client (the feed, to know when its connection opens) */
const dials = new WeakMap<Exchange, (client: StreamClient) => void>();

/** The next WebSocket client a watch of the (prepared) instance dials: its `connected` resolves once the connection opened. */
export function nextClient(exchange: Exchange): Promise<StreamClient> {
  return new Promise<StreamClient>((resolve) => dials.set(exchange, resolve));
}

/** ccxt's WebSocket client as far as its sending goes */
interface SendingClient {
  send(message: unknown): Promise<unknown>;
  onError(error: Error): void;
}
const guarded = new WeakSet<object>();

/**
 * A client's failed send goes to its onError (its watches fail, the feed reconnects) instead of
 * ending the process: ccxt pro 4.5.84 sends a throttled subscription as
 * `throttle(cost).then(() => { client.send(message) })`, dropping the promise, so a send on a
 * connection that just closed ("WebSocket is not open", EPIPE) was an unhandled rejection. The
 * chaos run's stream holders died of it when the database or a venue went away.
 */
function guardSends(client: SendingClient) {
  if (guarded.has(client)) return;
  guarded.add(client);
  const send = client.send.bind(client);
  client.send = (message) => send(message).catch((error: Error) => client.onError(error));
}

/**
 * ccxt's WebSocket clients print what they cannot parse with console.log: into the log, as a debug
 * line, instead of stdout; their failed sends fail their watches (guardSends); and the feed learns
 * of the client its watch dials.
 */
function quietClients(exchange: Exchange, logger: Logger | undefined, id: string) {
  const client = exchange.client.bind(exchange);
  exchange.client = (url: string) => {
    const made = client(url);
    (made as unknown as { log: (...args: unknown[]) => void }).log = (...args) => logger?.debug(`live streams: ${id}: ${args.slice(1).map(String).join(' ').slice(0, 300)}`);
    guardSends(made as unknown as SendingClient);
    dials.get(exchange)?.(made as unknown as StreamClient);
    return made;
  };
}

/** ccxt's WebSocket client takes ws(s) URLs: EXCHANGE_URLS' http(s) base becomes ws(s) for them. */
function websocketSchemes(exchange: Exchange) {
  const api = exchange.urls['api'] as Record<string, unknown>;
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return node.replace(/^http(s?):\/\//i, 'ws$1://');
    if (node && typeof node === 'object') for (const [key, value] of Object.entries(node)) (node as Record<string, unknown>)[key] = walk(value);
    return node;
  };
  if (api?.['ws']) api['ws'] = walk(api['ws']);
}
