// The venues' public ticker streams in their documented formats, served beside a loopback replay's
// REST answers (dev/venues/replay.ts) on the same port, as ccxt pro speaks to them:
// - binance spot (https://developers.binance.com/docs/binance-spot-api-docs/web-socket-streams):
//   {"method": "SUBSCRIBE", "params": ["btcusdt@miniTicker"], "id"} answered {"result": null, "id"},
//   then 24hrMiniTicker events {"e": "24hrMiniTicker", "E", "s", "c", "o", "h", "l", "v", "q"};
// - okx v5 public (https://www.okx.com/docs-v5/en/#public-data-websocket-tickers-channel):
//   {"op": "subscribe", "args": [{"channel": "tickers", "instId": "BTC-USDT"}]} answered
//   {"event": "subscribe", "arg", "connId"}, then {"arg", "data": [{"instType": "SPOT", "instId", "last", …, "ts"}]};
//   "ping" answered "pong";
// - kraken spot v2 (https://docs.kraken.com/api/docs/websocket-v2/ticker), as ccxt's kraken watches tickers:
//   {"method": "subscribe", "params": {"channel": "ticker", "symbol": ["BTC/USD"]}, "req_id"} answered
//   {"method": "subscribe", "result": {"channel": "ticker", "symbol"}, "success": true}, then
//   {"channel": "ticker", "type": "update", "data": [{"symbol", "bid", "bid_qty", "ask", "ask_qty", "last", "volume", "vwap", "low", "high", "change", "change_pct"}]};
//   {"method": "ping"} answered {"method": "pong"}.
// Each venue sends its set price for every subscribed market every `intervalMs`; a test sets the
// price, sends garbage, goes silent, cuts every connection, sends a burst (one ticker message per
// market, all in one socket write, as a venue's frames arrive together) or makes the stream
// endpoint unreachable (its WebSocket upgrade answered 404, as behind a proxy that blocks them).
import { WebSocketServer, type WebSocket } from 'ws';
import { num, type VenueReplay } from './replay.ts';

export type StreamVenue = 'binance' | 'okx' | 'kraken';
export type StreamMode = 'normal' | 'garbage' | 'silent';

export interface VenueStreams {
  /** the price (a decimal string) the venue streams for a market (its unified symbol, BTC/USDT) */
  setPrice(venue: StreamVenue, symbol: string, price: string): void;
  /** normal; garbage: messages that do not parse; silent: subscribed, nothing sent */
  setMode(venue: StreamVenue, mode: StreamMode): void;
  /** drops every connection of the venue (ccxt reconnects) */
  cut(venue: StreamVenue): void;
  /** sets these prices and sends them to every open connection at once: one message per market, all in one write */
  burst(venue: StreamVenue, prices: Record<string, string>): void;
  /** true: the venue's upgrade requests are answered 404 (each still counted in `attempts`) */
  unreachable(venue: StreamVenue, on: boolean): void;
  /** connections accepted so far, per venue */
  connections(venue: StreamVenue): number;
  /** upgrade requests so far, per venue, refused ones included */
  attempts(venue: StreamVenue): number;
  close(): void;
}

/** `modelPrices`: a market with no price set streams the replay's own price (as `make venues-replay` serves them); default: only prices set */
export function serveVenueStreams(replay: VenueReplay, options: { intervalMs?: number; modelPrices?: boolean } = {}): VenueStreams {
  const intervalMs = options.intervalMs ?? 100;
  const wss = new WebSocketServer({ noServer: true });
  const prices = new Map<string, string>();
  const modes: Record<StreamVenue, StreamMode> = { binance: 'normal', okx: 'normal', kraken: 'normal' };
  const sockets: Record<StreamVenue, Set<WebSocket>> = { binance: new Set(), okx: new Set(), kraken: new Set() };
  const counts: Record<StreamVenue, number> = { binance: 0, okx: 0, kraken: 0 };
  const tries: Record<StreamVenue, number> = { binance: 0, okx: 0, kraken: 0 };
  const refused = new Set<StreamVenue>();
  /** what each connection subscribed: venue market ids (binance: BTCUSDT, okx: BTC-USDT), kraken's v2 symbols (BTC/USD) */
  const subscribed = new Map<WebSocket, Set<string>>();
  const timers = new Set<NodeJS.Timeout>();
  /** how the venue's stream names a market: its market id, or (kraken v2) the symbol itself */
  const streamId = (venue: StreamVenue, symbol: string) => (venue === 'kraken' ? (replay.market(venue, symbol) ? symbol : undefined) : replay.market(venue, symbol)?.id);
  /** the unified symbol of a venue's market id, by the replay's index of ids: thousands of subscribed markets each interval */
  const symbolOf = (venue: StreamVenue, id: string) => (replay.marketById(venue, id) ?? replay.marketById(venue, id.toUpperCase()))?.symbol ?? null;
  /** the price a market streams: the one set, else (modelPrices) the replay's */
  const priceOf = (venue: StreamVenue, symbol: string) => {
    const set = prices.get(`${venue} ${symbol}`);
    if (set || !options.modelPrices) return set;
    const market = replay.market(venue, symbol);
    return market ? num(replay.model.price(market, replay.model.now())) : undefined;
  };
  const every = (ws: WebSocket, send: () => void) => {
    const timer = setInterval(send, intervalMs);
    timers.add(timer);
    ws.on('close', () => {
      clearInterval(timer);
      timers.delete(timer);
    });
  };

  const binanceTicker = (id: string, price: string) =>
    JSON.stringify({ e: '24hrMiniTicker', E: Date.now(), s: id, c: price, o: price, h: price, l: price, v: '1000', q: '60000000' });
  const okxTicker = (arg: { channel: string; instId: string }, price: string) => {
    const ts = String(Date.now());
    return JSON.stringify({
      arg,
      data: [{
        instType: 'SPOT', instId: arg.instId, last: price, lastSz: '0.1', askPx: price, askSz: '1', bidPx: price, bidSz: '1',
        open24h: price, high24h: price, low24h: price, volCcy24h: '60000000', vol24h: '1000', ts, sodUtc0: price, sodUtc8: price,
      }],
    });
  };
  // kraken sends numbers: the decimal string goes into the JSON text as the number it is
  const krakenTicker = (symbol: string, price: string) =>
    `{"channel":"ticker","type":"update","data":[{"symbol":${JSON.stringify(symbol)},"bid":${price},"bid_qty":1,"ask":${price},"ask_qty":1,` +
    `"last":${price},"volume":1000,"vwap":${price},"low":${price},"high":${price},"change":0,"change_pct":0}]}`;
  const subscribe = (ws: WebSocket, id: string) => {
    const ids = subscribed.get(ws) ?? new Set<string>();
    ids.add(id.toUpperCase());
    subscribed.set(ws, ids);
  };

  const binance = (ws: WebSocket) =>
    ws.on('message', (raw) => {
      const message = JSON.parse(String(raw));
      if (message.method !== 'SUBSCRIBE') return;
      for (const stream of message.params as string[]) subscribe(ws, stream.split('@')[0]!);
      ws.send(JSON.stringify({ result: null, id: message.id }));
      every(ws, () => {
        if (modes.binance === 'silent') return;
        for (const stream of message.params as string[]) {
          const id = stream.split('@')[0]!.toUpperCase();
          const symbol = symbolOf('binance', id);
          const price = symbol && priceOf('binance', symbol);
          if (!price) continue;
          ws.send(modes.binance === 'garbage' ? '{"e":"24hrMiniTicker","s":' : binanceTicker(id, price));
        }
      });
    });

  const okx = (ws: WebSocket) =>
    ws.on('message', (raw) => {
      const text = String(raw);
      if (text === 'ping') return ws.send('pong');
      const message = JSON.parse(text);
      if (message.op !== 'subscribe') return;
      for (const arg of message.args as { channel: string; instId: string }[]) {
        subscribe(ws, arg.instId);
        ws.send(JSON.stringify({ event: 'subscribe', arg, connId: 'a4d3ae55' }));
        every(ws, () => {
          if (modes.okx === 'silent') return;
          const symbol = symbolOf('okx', arg.instId);
          const price = symbol && priceOf('okx', symbol);
          if (!price) return;
          ws.send(modes.okx === 'garbage' ? '{"arg":{"channel":"tickers"' : okxTicker(arg, price));
        });
      }
    });

  const kraken = (ws: WebSocket) =>
    ws.on('message', (raw) => {
      const message = JSON.parse(String(raw));
      if (message.method === 'ping') return ws.send(JSON.stringify({ method: 'pong', req_id: message.req_id }));
      if (message.method !== 'subscribe' || message.params?.channel !== 'ticker') return;
      const symbols = message.params.symbol as string[];
      for (const symbol of symbols) {
        subscribe(ws, symbol);
        ws.send(JSON.stringify({ method: 'subscribe', req_id: message.req_id, result: { channel: 'ticker', symbol, snapshot: true }, success: true }));
      }
      every(ws, () => {
        if (modes.kraken === 'silent') return;
        for (const symbol of symbols) {
          const price = priceOf('kraken', symbol);
          if (!price) continue;
          ws.send(modes.kraken === 'garbage' ? '{"channel":"ticker","data":[' : krakenTicker(symbol, price));
        }
      });
    });

  const routes: [string, StreamVenue][] = [['/binance/ws', 'binance'], ['/okx/ws/v5/public', 'okx'], ['/kraken/v2', 'kraken']];
  replay.server.on('upgrade', (req, socket, head) => {
    const venue = routes.find(([path]) => req.url?.startsWith(path))?.[1] ?? null;
    if (!venue) return socket.destroy();
    tries[venue]++;
    if (refused.has(venue)) {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-type: text/plain\r\ncontent-length: 9\r\nconnection: close\r\n\r\nnot found');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      counts[venue]++;
      sockets[venue].add(ws);
      ws.on('close', () => {
        sockets[venue].delete(ws);
        subscribed.delete(ws);
      });
      ({ binance, okx, kraken })[venue](ws);
    });
  });

  return {
    setPrice: (venue, symbol, price) => void prices.set(`${venue} ${symbol}`, price),
    setMode: (venue, mode) => void (modes[venue] = mode),
    cut: (venue) => {
      for (const ws of sockets[venue]) ws.terminate();
    },
    burst: (venue, burst) => {
      for (const [symbol, price] of Object.entries(burst)) prices.set(`${venue} ${symbol}`, price);
      for (const ws of sockets[venue]) {
        const ids = subscribed.get(ws) ?? new Set<string>();
        const messages = Object.entries(burst).flatMap(([symbol, price]) => {
          const id = streamId(venue, symbol);
          if (!id || !ids.has(id.toUpperCase())) return [];
          if (venue === 'kraken') return [krakenTicker(symbol, price)];
          return [venue === 'binance' ? binanceTicker(id, price) : okxTicker({ channel: 'tickers', instId: id }, price)];
        });
        // corked: the frames leave in one write and arrive in one read, as a venue's burst does
        const socket = (ws as unknown as { _socket: import('node:net').Socket })._socket;
        socket.cork();
        for (const message of messages) ws.send(message);
        socket.uncork();
      }
    },
    unreachable: (venue, on) => void (on ? refused.add(venue) : refused.delete(venue)),
    connections: (venue) => counts[venue],
    attempts: (venue) => tries[venue],
    close: () => {
      for (const timer of timers) clearInterval(timer);
      for (const set of Object.values(sockets)) for (const ws of set) ws.terminate();
      wss.close();
    },
  };
}
