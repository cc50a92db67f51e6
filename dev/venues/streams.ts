// The venues' public ticker streams in their documented formats, served beside a loopback replay's
// REST answers (dev/venues/replay.ts) on the same port, as ccxt pro (4.5.84) speaks to them:
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
//   {"method": "ping"} answered {"method": "pong"};
// - gate spot v4 (https://www.gate.com/docs/developers/apiv4/ws/en/#tickers-channel), at /ws/v4/:
//   {"time", "id", "channel": "spot.tickers", "event": "subscribe", "payload": ["BTC_USDT"]} answered
//   {"time", "time_ms", "id", "channel", "event": "subscribe", "payload", "result": {"status": "success"}}, then
//   {"time", "time_ms", "channel": "spot.tickers", "event": "update", "result": {"currency_pair", "last",
//   "lowest_ask", "highest_bid", "change_percentage", "base_volume", "quote_volume", "high_24h", "low_24h"}};
//   {"channel": "spot.ping"} answered {"channel": "spot.pong"};
// - bitget v2 public (https://www.bitget.com/api-doc/spot/websocket/public/Tickers-Channel), at /v2/ws/public:
//   {"op": "subscribe", "args": [{"instType": "SPOT", "channel": "ticker", "instId": "BTCUSDT"}]} answered
//   {"event": "subscribe", "arg"} per market, then {"action": "snapshot", "arg", "data": [{"instId", "lastPr",
//   "open24h", "high24h", "low24h", "change24h", "bidPr", "askPr", "bidSz", "askSz", "baseVolume",
//   "quoteVolume", "openUtc", "changeUtc24h", "ts"}], "ts"}; "ping" answered "pong";
// - htx spot (https://www.htx.com/en-us/opend/newApiPages/?id=7ec53561-7773-11ed-9966-0242ac110003), at /ws:
//   every frame the venue sends is gzip-compressed binary; {"sub": "market.btcusdt.detail", "id"} (ccxt's
//   watchTicker, one market per subscription: ccxt has no watchTickers for htx) answered
//   {"id", "status": "ok", "subbed", "ts"}, then {"ch": "market.btcusdt.detail", "ts", "tick": {"id", "low",
//   "high", "open", "close", "vol", "amount", "version", "count"}}; the venue sends {"ping": ts} and
//   expects {"pong": ts}, closing a connection that leaves two pings unanswered.
// - coinbase advanced trade (https://docs.cdp.coinbase.com/advanced-trade/docs/ws-channels#ticker-batch-channel),
//   at the host's root: {"type": "subscribe", "product_ids": ["BTC-USD"], "channel": "ticker_batch"} answered
//   {"channel": "subscriptions", "events": [{"subscriptions": {"ticker_batch": [ids]}}]}, then {"channel":
//   "ticker_batch", "client_id": "", "timestamp", "sequence_num", "events": [{"type": "update", "tickers":
//   [{"type": "ticker", "product_id", "price", "volume_24_h", "low_24_h", "high_24_h", "low_52_w", "high_52_w",
//   "price_percent_chg_24_h", "best_bid", "best_bid_quantity", "best_ask", "best_ask_quantity"}]}]};
// - bybit v5 public spot (https://bybit-exchange.github.io/docs/v5/websocket/public/ticker), at /v5/public/spot:
//   {"op": "subscribe", "args": ["tickers.BTCUSDT"], "req_id"} answered {"success": true, "ret_msg": "subscribe",
//   "conn_id", "req_id", "op": "subscribe"}, then {"topic": "tickers.BTCUSDT", "ts", "type": "snapshot", "cs",
//   "data": {"symbol", "lastPrice", "highPrice24h", "lowPrice24h", "prevPrice24h", "volume24h", "turnover24h",
//   "price24hPcnt", "usdIndexPrice"}} (spot tickers are always snapshots); {"op": "ping"} answered
//   {"success": true, "ret_msg": "pong", "op": "ping"}.
// - kucoin spot (https://www.kucoin.com/docs-new/websocket-api/spot-trading/public-channels/ticker): the REST
//   handshake POST /api/v1/bullet-public (dev/venues/replay.ts) names the endpoint, which greets a connection with
//   {"id", "type": "welcome"}; {"id", "type": "subscribe", "topic": "/market/ticker:BTC-USDT,ETH-USDT", "response":
//   true} answered {"id", "type": "ack"}, then {"type": "message", "topic": "/market/ticker:BTC-USDT", "subject":
//   "trade.ticker", "data": {"sequence", "price", "size", "bestAsk", "bestAskSize", "bestBid", "bestBidSize", "Time"}};
//   {"id", "type": "ping"} answered {"id", "type": "pong", "timestamp"}.
// - mexc spot v3 (https://mexcdevelop.github.io/apidocs/spot_v3_en/#websocket-market-streams), at /ws: JSON
//   requests, protobuf pushes (the message definitions MEXC publishes, github.com/mexcdevelop/websocket-proto:
//   PushDataV3ApiWrapper, its body publicSpotKline = 308 a PublicSpotKlineV3Api, written out below);
//   {"method": "SUBSCRIPTION", "params": ["spot@public.kline.v3.api.pb@BTCUSDT@Min1"]} answered
//   {"id": 0, "code": 0, "msg": "<the channel>"}, at most 30 subscriptions a connection ("One ws connection
//   supports a maximum of 30 subscriptions": a 31st is refused, its msg saying so); {"method": "PING"} answered
//   {"id": 0, "code": 0, "msg": "PONG"}. Its tickers are not served: ccxt pro 4.5.84 refuses watchTickers for
//   spot markets and its spot watchTicker reads the book ticker, bid and ask without a last price, so the
//   holder reads MEXC's prices through REST alone and streams only its candles.
// Beside the tickers, each venue serves its one-minute candle channel as ccxt pro subscribes it (issue 46;
// each format's message beside it below, with the venue's documentation): binance <id>@kline_1m (kline events),
// okx candle1m on /ws/v5/business, kraken v2 ohlc (interval 1), gate spot.candlesticks (payload ["1m", pair]),
// bitget candle1m, htx market.<id>.kline.1min, bybit kline.1.<id>, kucoin /market/candles:<id>_1min,
// mexc spot@public.kline.v3.api.pb@<id>@Min1 (protobuf); coinbase has
// none in ccxt pro, so its market_trades channel is served instead. A test sets the candle a market streams
// every interval (its minute in progress), sends one candle of any market id, or sends trades; with modelPrices
// (`make venues-replay`) a market streams the replay's own minute in progress, and the minute just closed, final,
// at each new minute, and a coinbase market its trades, live: four a minute (the replay's REST candle's open,
// high, low and close, in that order, a quarter of its volume each), each sent as its time passes, once, so
// that the minute the stream holder builds from them is that candle (a minute without volume has none).
// Each venue sends its set price for every subscribed market every `intervalMs`; a test sets the
// price, sends garbage, goes silent, cuts every connection, sends a burst (one ticker message per
// market, all in one socket write, as a venue's frames arrive together), makes the stream
// endpoint unreachable (its WebSocket upgrade answered 404, as behind a proxy that blocks them) or
// drops half of each connection's candle (trade) subscriptions: the connection stays open, the
// other half keeps flowing, the dropped markets get nothing (until subscribed again, or for good).
import { gzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { WebSocketServer, type WebSocket } from 'ws';
import { MINUTE, num, type VenueReplay } from './replay.ts';

export const STREAM_VENUES = ['binance', 'okx', 'kraken', 'gate', 'bitget', 'htx', 'coinbase', 'bybit', 'kucoin', 'mexc'] as const;
export type StreamVenue = (typeof STREAM_VENUES)[number];
/** the venues whose tickers are served (mexc's are not: see above) */
export const TICKER_VENUES = STREAM_VENUES.filter((venue) => venue !== 'mexc');
export type StreamMode = 'normal' | 'garbage' | 'silent';
/** off: every subscription flows; once: the dropped markets flow again once a connection subscribes them again; sticky: they stay dropped, re-subscribed or not */
export type DropMode = 'off' | 'once' | 'sticky';
/** what a connection subscribed a market to */
export type Channel = 'ticker' | 'candles' | 'trades';
/** a one-minute candle as the venue streams it: open time (ms) and decimal strings (volume in base units) */
export interface StreamCandle {
  time: number;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
  /** the venue marks the candle closed (binance x, okx confirm, bybit confirm, gate w; the others send no such flag) */
  closed?: boolean;
}
/** a trade as the venue streams it: its id, time (ms), price and size (base units), decimal strings */
export interface StreamTrade {
  id: string;
  time: number;
  price: string;
  size: string;
  side?: 'BUY' | 'SELL';
}

export interface VenueStreams {
  /** the price (a decimal string) the venue streams for a market (its unified symbol, BTC/USDT) */
  setPrice(venue: StreamVenue, symbol: string, price: string): void;
  /** the candle the venue streams for a market every interval (its minute in progress); null: none */
  setCandle(venue: StreamVenue, symbol: string, candle: StreamCandle | null): void;
  /** sends one candle message of a market the stream names `id` (listed or not) to every connection subscribed to candles */
  sendCandle(venue: StreamVenue, id: string, candle: StreamCandle): void;
  /** sends one trade message of a market to every connection subscribed to its trades */
  sendTrades(venue: StreamVenue, symbol: string, trades: StreamTrade[]): void;
  /** the markets (the stream's names of them, upper-cased) subscribed to a channel on the venue's open connections */
  subscriptions(venue: StreamVenue, channel: Channel): string[];
  /** the same, per open connection (in the order they opened) */
  connectionSubscriptions(venue: StreamVenue, channel: Channel): string[][];
  /**
   * Drops every second candle (trade) subscription of each open connection of the venue, silently: the
   * connection stays open, no candle (trade) of those markets is sent on any connection until, `once`,
   * a connection subscribes the market again, or, `sticky`, the fault is set `off`. Returns the markets
   * dropped (the stream's names, upper-cased).
   */
  dropSubscriptions(venue: StreamVenue, mode: DropMode): string[];
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
  /** answers to the venue's own pings so far (htx pings its clients) */
  pongs(venue: StreamVenue): number;
  close(): void;
}

/** One venue's stream: where it is served, how it names a market, what it answers and what it sends. */
interface StreamFormat {
  path: string;
  /** further paths of the venue's streams (okx's candles are on /ws/v5/business) */
  paths?: string[];
  /** a client's message; `subscribe` records a market (by the stream's name of it) on a channel for the connection; `subscribed`: how many it holds */
  onMessage(ws: WebSocket, text: string, subscribe: (id: string, channel?: Channel) => void, pong: () => void, subscribed: () => number): void;
  /** the venue's ticker message of a market (by the stream's name of it); none: its tickers are not served */
  ticker?(id: string, price: string): string | Buffer;
  /** the venue's one-minute candle message of a market (venues with a candle channel) */
  candle?(id: string, candle: StreamCandle): string | Buffer;
  /** the venue's trade message of a market (coinbase: its minutes are built from trades) */
  trades?(id: string, trades: StreamTrade[]): string | Buffer;
  /** a message that does not parse */
  garbage: string | Buffer;
  /** what the venue sends a new connection first (kucoin's welcome) */
  greeting?: () => string;
  /** what the venue sends on its own every `pingMs` (htx's ping); two left unanswered close the connection */
  ping?: () => Buffer | string;
}

const seconds = () => Math.floor(Date.now() / 1000);
let sequenceNumber = 0;
const sequence = () => sequenceNumber++;
const gzipJson = (value: unknown) => gzipSync(JSON.stringify(value));

/** okx's and bitget's protocol: "ping" answered "pong"; {"op": "subscribe", "args"} acknowledged per arg of a known channel */
const opSubscribe = (channels: Record<string, Channel>, ack: Record<string, string> = {}): StreamFormat['onMessage'] => (ws, text, subscribe) => {
  if (text === 'ping') return ws.send('pong');
  const message = JSON.parse(text);
  if (message.op !== 'subscribe') return;
  for (const arg of message.args as { channel: string; instId: string }[]) {
    const channel = channels[arg.channel];
    if (!channel) continue;
    subscribe(arg.instId, channel);
    ws.send(JSON.stringify({ event: 'subscribe', arg, ...ack }));
  }
};
const iso = (ms: number) => new Date(ms).toISOString();
/**
 * when in its minute each of a modelled minute's trades is made: its open, high, low and close (the open
 * early: the stream holder closes a minute built from trades at the first trade 2 s after its end)
 */
const TRADES_AT = [3_000, 20_000, 35_000, 50_000];
/** a minute's trades not sent by this long after its end (the interval late, the clock moved on) are never sent: the holder may have closed it */
const TRADES_SENT_WITHIN_MS = 1_000;
/** a quarter of a decimal string, exactly (at most two more decimals) */
const quarter = (value: string) => {
  const [whole, fraction = ''] = value.split('.');
  const scale = fraction.length + 2;
  const digits = (BigInt(whole! + fraction) * 25n).toString().padStart(scale + 1, '0');
  return `${digits.slice(0, -scale)}.${digits.slice(-scale)}`.replace(/\.?0+$/, '');
};

/**
 * MEXC's push messages as far as its kline channel goes, from the definitions it publishes
 * (github.com/mexcdevelop/websocket-proto: PushDataV3ApiWrapper.proto, PublicSpotKlineV3Api.proto):
 * prices and volumes are strings, times int64 (the window in seconds, createTime and sendTime in ms)
 */
const MEXC_PROTO = `
syntax = "proto3";
message PublicSpotKlineV3Api {
  string interval = 1;
  int64 windowStart = 2;
  string openingPrice = 3;
  string closingPrice = 4;
  string highestPrice = 5;
  string lowestPrice = 6;
  string volume = 7;
  string amount = 8;
  int64 windowEnd = 9;
}
message PushDataV3ApiWrapper {
  string channel = 1;
  oneof body {
    PublicSpotKlineV3Api publicSpotKline = 308;
  }
  optional string symbol = 3;
  optional string symbolId = 4;
  optional int64 createTime = 5;
  optional int64 sendTime = 6;
}`;
const mexcPush = protobuf.parse(MEXC_PROTO).root.lookupType('PushDataV3ApiWrapper');
/** MEXC's subscriptions a connection may hold */
const MEXC_PER_CONNECTION = 30;
const MEXC_KLINE = /^spot@public\.kline\.v3\.api\.pb@([A-Z0-9]+)@Min1$/;

const FORMATS: Record<StreamVenue, StreamFormat> = {
  binance: {
    path: '/binance/ws',
    onMessage(ws, text, subscribe) {
      const message = JSON.parse(text);
      if (message.method !== 'SUBSCRIBE') return;
      for (const stream of message.params as string[]) {
        const [id, name] = stream.split('@');
        subscribe(id!, name === 'kline_1m' ? 'candles' : 'ticker');
      }
      ws.send(JSON.stringify({ result: null, id: message.id }));
    },
    ticker: (id, price) => JSON.stringify({ e: '24hrMiniTicker', E: Date.now(), s: id.toUpperCase(), c: price, o: price, h: price, l: price, v: '1000', q: '60000000' }),
    garbage: '{"e":"24hrMiniTicker","s":',
    // https://developers.binance.com/docs/binance-spot-api-docs/web-socket-streams#klinecandlestick-streams-for-utc: <symbol>@kline_1m
    candle: (id, c) => JSON.stringify({
      e: 'kline', E: Date.now(), s: id.toUpperCase(),
      k: { t: c.time, T: c.time + 59_999, s: id.toUpperCase(), i: '1m', f: 100, L: 200, o: c.open, c: c.close, h: c.high, l: c.low, v: c.volume, n: 101, x: c.closed === true, q: '0', V: '0', Q: '0', B: '0' },
    }),
  },
  okx: {
    path: '/okx/ws/v5/public',
    paths: ['/okx/ws/v5/business'],
    onMessage: opSubscribe({ tickers: 'ticker', candle1m: 'candles' }, { connId: 'a4d3ae55' }),
    ticker: (instId, price) => JSON.stringify({
      arg: { channel: 'tickers', instId },
      data: [{
        instType: 'SPOT', instId, last: price, lastSz: '0.1', askPx: price, askSz: '1', bidPx: price, bidSz: '1',
        open24h: price, high24h: price, low24h: price, volCcy24h: '60000000', vol24h: '1000', ts: String(Date.now()), sodUtc0: price, sodUtc8: price,
      }],
    }),
    garbage: '{"arg":{"channel":"tickers"',
    // https://www.okx.com/docs-v5/en/#order-book-trading-market-data-ws-candlesticks-channel: [ts, o, h, l, c, vol, volCcy, volCcyQuote, confirm]
    candle: (instId, c) => JSON.stringify({ arg: { channel: 'candle1m', instId }, data: [[String(c.time), c.open, c.high, c.low, c.close, c.volume, '0', '0', c.closed ? '1' : '0']] }),
  },
  kraken: {
    path: '/kraken/v2',
    onMessage(ws, text, subscribe) {
      const message = JSON.parse(text);
      if (message.method === 'ping') return ws.send(JSON.stringify({ method: 'pong', req_id: message.req_id }));
      const channel = message.params?.channel;
      if (message.method !== 'subscribe' || (channel !== 'ticker' && channel !== 'ohlc')) return;
      for (const symbol of message.params.symbol as string[]) {
        subscribe(symbol, channel === 'ohlc' ? 'candles' : 'ticker');
        const result = channel === 'ohlc' ? { channel, symbol, interval: message.params.interval, snapshot: true } : { channel, symbol, snapshot: true };
        ws.send(JSON.stringify({ method: 'subscribe', req_id: message.req_id, result, success: true }));
      }
    },
    // kraken sends numbers: the decimal string goes into the JSON text as the number it is
    ticker: (symbol, price) =>
      `{"channel":"ticker","type":"update","data":[{"symbol":${JSON.stringify(symbol)},"bid":${price},"bid_qty":1,"ask":${price},"ask_qty":1,` +
      `"last":${price},"volume":1000,"vwap":${price},"low":${price},"high":${price},"change":0,"change_pct":0}]}`,
    garbage: '{"channel":"ticker","data":[',
    // https://docs.kraken.com/api/docs/websocket-v2/ohlc: numbers, interval_begin an RFC 3339 time
    candle: (symbol, c) =>
      `{"channel":"ohlc","type":"update","timestamp":${JSON.stringify(iso(Date.now()))},"data":[{"symbol":${JSON.stringify(symbol)},"open":${c.open},"high":${c.high},` +
      `"low":${c.low},"close":${c.close},"trades":101,"volume":${c.volume},"vwap":${c.close},"interval_begin":${JSON.stringify(iso(c.time))},"interval":1,` +
      `"timestamp":${JSON.stringify(iso(c.time + 60_000))}}]}`,
  },
  gate: {
    path: '/gate/ws/v4',
    onMessage(ws, text, subscribe) {
      const message = JSON.parse(text);
      const answer = { time: seconds(), time_ms: Date.now(), id: message.id, channel: message.channel };
      if (message.channel === 'spot.ping') return ws.send(JSON.stringify({ ...answer, channel: 'spot.pong', event: '', result: null }));
      if (message.event !== 'subscribe') return;
      if (message.channel === 'spot.candlesticks') subscribe(message.payload[1], 'candles');
      else if (message.channel === 'spot.tickers') for (const pair of message.payload as string[]) subscribe(pair);
      else return;
      ws.send(JSON.stringify({ ...answer, event: 'subscribe', payload: message.payload, result: { status: 'success' } }));
    },
    ticker: (pair, price) => JSON.stringify({
      time: seconds(), time_ms: Date.now(), channel: 'spot.tickers', event: 'update',
      result: { currency_pair: pair, last: price, lowest_ask: price, highest_bid: price, change_percentage: '0', base_volume: '1000', quote_volume: '60000000', high_24h: price, low_24h: price },
    }),
    garbage: '{"channel":"spot.tickers","event":"update","result":{',
    // https://www.gate.com/docs/developers/apiv4/ws/en/#candlesticks-channel: t in seconds, v the quote volume, a the base amount, w whether the window closed
    candle: (pair, c) => JSON.stringify({
      time: seconds(), time_ms: Date.now(), channel: 'spot.candlesticks', event: 'update',
      result: { t: String(c.time / 1000), v: '0', c: c.close, h: c.high, l: c.low, o: c.open, n: `1m_${pair}`, a: c.volume, w: c.closed === true },
    }),
  },
  bitget: {
    path: '/bitget/v2/ws/public',
    onMessage: opSubscribe({ ticker: 'ticker', candle1m: 'candles' }),
    ticker: (instId, price) => {
      const ts = Date.now();
      return JSON.stringify({
        action: 'snapshot', arg: { instType: 'SPOT', channel: 'ticker', instId },
        data: [{
          instId, lastPr: price, open24h: price, high24h: price, low24h: price, change24h: '0', bidPr: price, askPr: price, bidSz: '1', askSz: '1',
          baseVolume: '1000', quoteVolume: '60000000', openUtc: price, changeUtc24h: '0', ts: String(ts),
        }],
        ts,
      });
    },
    garbage: '{"action":"snapshot","arg":{',
    // https://www.bitget.com/api-doc/spot/websocket/public/Candlesticks-Channel: [ts, o, h, l, c, baseVolume, quoteVolume, usdtVolume]
    candle: (instId, c) => JSON.stringify({
      action: 'update', arg: { instType: 'SPOT', channel: 'candle1m', instId }, data: [[String(c.time), c.open, c.high, c.low, c.close, c.volume, '0', '0']], ts: Date.now(),
    }),
  },
  htx: {
    path: '/htx/ws',
    onMessage(ws, text, subscribe, pong) {
      const message = JSON.parse(text);
      if (message.pong !== undefined) return pong();
      if (typeof message.sub !== 'string') return;
      const [, id, channel] = /^market\.([a-z0-9]+)\.(detail|kline\.1min)$/.exec(message.sub) ?? [];
      if (!id) return ws.send(gzipJson({ id: message.id, status: 'error', 'err-code': 'bad-request', 'err-msg': `invalid topic ${message.sub}`, ts: Date.now() }));
      subscribe(id, channel === 'detail' ? 'ticker' : 'candles');
      ws.send(gzipJson({ id: message.id, status: 'ok', subbed: message.sub, ts: Date.now() }));
    },
    // htx sends numbers: the decimal string goes into the JSON text as the number it is
    ticker: (id, price) =>
      gzipSync(`{"ch":"market.${id}.detail","ts":${Date.now()},"tick":{"id":311869842864,"low":${price},"high":${price},"open":${price},"close":${price},` +
        `"vol":60000000,"amount":1000,"version":311869842864,"count":1000}}`),
    garbage: gzipSync('{"ch":"market.'),
    // https://www.htx.com/en-us/opend/newApiPages/?id=7ec5342e-7773-11ed-9966-0242ac110003: tick.id the open time in seconds, amount the base volume, vol the quote volume
    candle: (id, c) =>
      gzipSync(`{"ch":"market.${id}.kline.1min","ts":${Date.now()},"tick":{"id":${c.time / 1000},"open":${c.open},"close":${c.close},"low":${c.low},"high":${c.high},` +
        `"amount":${c.volume},"vol":0,"count":101}}`),
    ping: () => gzipJson({ ping: Date.now() }),
  },
  coinbase: {
    path: '/coinbase',
    onMessage(ws, text, subscribe) {
      const message = JSON.parse(text);
      if (message.type !== 'subscribe' || (message.channel !== 'ticker_batch' && message.channel !== 'market_trades')) return;
      for (const id of message.product_ids as string[]) subscribe(id, message.channel === 'market_trades' ? 'trades' : 'ticker');
      ws.send(JSON.stringify({
        channel: 'subscriptions', client_id: '', timestamp: new Date().toISOString(), sequence_num: sequence(),
        events: [{ subscriptions: { [message.channel]: message.product_ids } }],
      }));
    },
    ticker: (id, price) => JSON.stringify({
      channel: 'ticker_batch', client_id: '', timestamp: new Date().toISOString(), sequence_num: sequence(),
      events: [{
        type: 'update',
        tickers: [{
          type: 'ticker', product_id: id, price, volume_24_h: '1000', low_24_h: price, high_24_h: price, low_52_w: price, high_52_w: price,
          price_percent_chg_24_h: '0', best_bid: price, best_bid_quantity: '1', best_ask: price, best_ask_quantity: '1',
        }],
      }],
    }),
    garbage: '{"channel":"ticker_batch","events":[{',
    // https://docs.cdp.coinbase.com/advanced-trade/docs/ws-channels#market-trades-channel: newest first
    trades: (id, trades) => JSON.stringify({
      channel: 'market_trades', client_id: '', timestamp: new Date().toISOString(), sequence_num: sequence(),
      events: [{ type: 'update', trades: [...trades].reverse().map((t) => ({ trade_id: t.id, product_id: id, price: t.price, size: t.size, side: t.side ?? 'BUY', time: iso(t.time) })) }],
    }),
  },
  bybit: {
    path: '/bybit/v5/public/spot',
    onMessage(ws, text, subscribe) {
      const message = JSON.parse(text);
      const answer = { success: true, conn_id: 'cejreassvfrsfvb9v1a0-2m', req_id: message.req_id };
      if (message.op === 'ping') return ws.send(JSON.stringify({ ...answer, ret_msg: 'pong', op: 'ping' }));
      if (message.op !== 'subscribe') return;
      for (const topic of message.args as string[]) {
        const [, name, id] = /^(tickers|kline\.1)\.(.+)$/.exec(topic) ?? [];
        if (id) subscribe(id, name === 'tickers' ? 'ticker' : 'candles');
      }
      ws.send(JSON.stringify({ ...answer, ret_msg: 'subscribe', op: 'subscribe' }));
    },
    ticker: (id, price) => JSON.stringify({
      topic: `tickers.${id}`, ts: Date.now(), type: 'snapshot', cs: sequence(),
      data: {
        symbol: id, lastPrice: price, highPrice24h: price, lowPrice24h: price, prevPrice24h: price, volume24h: '1000', turnover24h: '60000000',
        price24hPcnt: '0', usdIndexPrice: price,
      },
    }),
    garbage: '{"topic":"tickers.","data":{',
    // https://bybit-exchange.github.io/docs/v5/websocket/public/kline: kline.1.<symbol>, confirm whether the candle closed
    candle: (id, c) => JSON.stringify({
      topic: `kline.1.${id}`, ts: Date.now(), type: 'snapshot',
      data: [{ start: c.time, end: c.time + 59_999, interval: '1', open: c.open, close: c.close, high: c.high, low: c.low, volume: c.volume, turnover: '0', confirm: c.closed === true, timestamp: Date.now() }],
    }),
  },
  kucoin: {
    path: '/kucoin/ws-api-spot',
    greeting: () => JSON.stringify({ id: 'replay-connection', type: 'welcome' }),
    onMessage(ws, text, subscribe) {
      const message = JSON.parse(text);
      if (message.type === 'ping') return ws.send(JSON.stringify({ id: message.id, type: 'pong', timestamp: Date.now() * 1000 }));
      if (message.type !== 'subscribe') return;
      const [channel, ids] = String(message.topic).split(':');
      if ((channel !== '/market/ticker' && channel !== '/market/candles') || !ids) return ws.send(JSON.stringify({ id: message.id, type: 'error', code: 404, data: `topic ${message.topic} is not found` }));
      if (channel === '/market/candles') subscribe(ids.replace(/_1min$/, ''), 'candles');
      else for (const id of ids.split(',')) subscribe(id);
      if (message.response) ws.send(JSON.stringify({ id: message.id, type: 'ack' }));
    },
    ticker: (id, price) => JSON.stringify({
      type: 'message', topic: `/market/ticker:${id}`, subject: 'trade.ticker',
      data: { sequence: String(sequence()), price, size: '0.01', bestAsk: price, bestAskSize: '1', bestBid: price, bestBidSize: '1', Time: Date.now() },
    }),
    garbage: '{"type":"message","topic":"/market/ticker:',
    // https://www.kucoin.com/docs-new/websocket-api/spot-trading/public-channels/klines: [start (s), open, close, high, low, volume, turnover]
    candle: (id, c) => JSON.stringify({
      type: 'message', topic: `/market/candles:${id}_1min`, subject: 'trade.candles.update',
      data: { symbol: id, candles: [String(c.time / 1000), c.open, c.close, c.high, c.low, c.volume, '0'], time: Date.now() * 1_000_000 },
    }),
  },
  mexc: {
    path: '/mexc/ws',
    onMessage(ws, text, subscribe, _pong, subscribed) {
      const message = JSON.parse(text);
      const method = String(message.method ?? '').toUpperCase();
      if (method === 'PING') return ws.send(JSON.stringify({ id: 0, code: 0, msg: 'PONG' }));
      if (method !== 'SUBSCRIPTION') return;
      for (const param of (message.params ?? []) as string[]) {
        const id = MEXC_KLINE.exec(param)?.[1];
        if (!id) ws.send(JSON.stringify({ id: message.id ?? 0, code: 0, msg: `Not Subscribed successfully! [${param}]. Reason: Blocked!` }));
        else if (subscribed() >= MEXC_PER_CONNECTION) ws.send(JSON.stringify({ id: message.id ?? 0, code: 0, msg: `Not Subscribed successfully! [${param}]. Reason: more than ${MEXC_PER_CONNECTION} subscriptions` }));
        else {
          subscribe(id, 'candles');
          ws.send(JSON.stringify({ id: message.id ?? 0, code: 0, msg: param }));
        }
      }
    },
    garbage: Buffer.from([0x0a, 0xff, 0xff, 0xff]),
    // https://mexcdevelop.github.io/apidocs/spot_v3_en/#k-line-streams: windowStart and windowEnd in seconds, volume the base volume, amount the quote volume
    candle: (id, c) => Buffer.from(mexcPush.encode(mexcPush.fromObject({
      channel: `spot@public.kline.v3.api.pb@${id}@Min1`, symbol: id, symbolId: `${id.toLowerCase()}0000`, createTime: Date.now(), sendTime: Date.now(),
      publicSpotKline: {
        interval: 'Min1', windowStart: c.time / 1000, openingPrice: c.open, closingPrice: c.close, highestPrice: c.high, lowestPrice: c.low,
        volume: c.volume, amount: '0', windowEnd: c.time / 1000 + 60,
      },
    })).finish()),
  },
};

/** pingMs: how often a venue that pings its clients (htx) does (htx itself: every 5 s) */
/**
 * `modelPrices`: a market with no price set streams the replay's own price, and one with no candle set
 * the replay's candle of the minute in progress, then that minute closed once the next begins, a coinbase
 * market the trades of the replay's minutes (as `make venues-replay` serves them); default: only prices,
 * candles and trades set or sent
 */
export function serveVenueStreams(replay: VenueReplay, options: { intervalMs?: number; pingMs?: number; modelPrices?: boolean } = {}): VenueStreams {
  const intervalMs = options.intervalMs ?? 100;
  const pingMs = options.pingMs ?? 1_000;
  const per = <T>(value: () => T) => Object.fromEntries(STREAM_VENUES.map((venue) => [venue, value()])) as Record<StreamVenue, T>;
  const wss = new WebSocketServer({ noServer: true });
  const prices = new Map<string, string>();
  const modes = per<StreamMode>(() => 'normal');
  const sockets = per(() => new Set<WebSocket>());
  const counts = per(() => 0);
  const tries = per(() => 0);
  const pongCounts = per(() => 0);
  const refused = new Set<StreamVenue>();
  /** the markets whose candles (trades) a venue dropped (the stream's names, upper-cased), and whether re-subscribing brings them back */
  const dropped = per(() => new Set<string>());
  const dropModes = per<DropMode>(() => 'off');
  /** what each connection subscribed: the stream's names of markets (binance: BTCUSDT, okx: BTC-USDT, kraken: BTC/USD, htx: btcusdt), upper-cased */
  const subscribed = new Map<WebSocket, Set<string>>();
  /** what each connection subscribed to candles or trades, likewise */
  const subscribedCandles = new Map<WebSocket, Set<string>>();
  /** the candle each market streams (`venue symbol`) */
  const candles = new Map<string, StreamCandle>();
  const timers = new Set<NodeJS.Timeout>();
  /** how the venue's stream names a market: its market id, or (kraken v2) the symbol itself */
  const streamId = (venue: StreamVenue, symbol: string) => (venue === 'kraken' ? (replay.market(venue, symbol) ? symbol : undefined) : replay.market(venue, symbol)?.id);
  /** the unified symbol of a market the stream names (upper-cased), by the replay's index of ids: thousands of subscribed markets each interval */
  const symbolOf = (venue: StreamVenue, id: string) => {
    if (venue === 'kraken') return replay.market(venue, id) ? id : null;
    return (replay.marketById(venue, id) ?? replay.marketById(venue, id.toLowerCase()))?.symbol ?? null;
  };
  /** the price a market streams: the one set, else (modelPrices) the replay's */
  const priceOf = (venue: StreamVenue, symbol: string) => {
    const set = prices.get(`${venue} ${symbol}`);
    if (set || !options.modelPrices) return set;
    const market = replay.market(venue, symbol);
    return market ? num(replay.model.price(market, replay.model.now())) : undefined;
  };
  /** the replay's one-minute candle of a market from `start`: its minute in progress, or a closed one */
  const modelCandle = (venue: StreamVenue, symbol: string, start: number): StreamCandle | null => {
    const market = replay.market(venue, symbol);
    const candle = market && replay.model.candle(market, '1m', start);
    return candle ? { time: candle.t, open: num(candle.o), high: num(candle.h), low: num(candle.l), close: num(candle.c), volume: num(candle.v), closed: candle.closed } : null;
  };
  /**
   * What a market streams this interval: the candle set for it, else (modelPrices) the replay's minute
   * in progress, preceded at each new minute by the minute just closed, final, as the venues send it.
   */
  const candlesOf = (venue: StreamVenue, symbol: string, id: string, minutes: Map<string, number>): StreamCandle[] => {
    const set = candles.get(`${venue} ${symbol}`);
    if (set) return [set];
    if (!options.modelPrices) return [];
    const minute = Math.floor(replay.model.now() / MINUTE) * MINUTE;
    const previous = minutes.get(id);
    minutes.set(id, minute);
    return [previous !== undefined && previous < minute ? modelCandle(venue, symbol, previous) : null, modelCandle(venue, symbol, minute)]
      .filter((candle): candle is StreamCandle => candle !== null);
  };
  /**
   * modelPrices, a venue whose minutes are built from its trades (coinbase): a market's trades made in
   * (after, now], live, four a minute of the replay's REST candle of it (its open, high, low and close in
   * that order, a quarter of its volume each, ids ascending), so that a minute's trades make that candle;
   * a minute without volume has none, as at the venue
   */
  const modelTrades = (venue: StreamVenue, symbol: string, after: number, now: number): StreamTrade[] => {
    const market = replay.market(venue, symbol);
    const trades: StreamTrade[] = [];
    const first = Math.max(Math.floor(after / MINUTE), Math.ceil((now - TRADES_SENT_WITHIN_MS) / MINUTE) - 1) * MINUTE;
    for (let minute = first; market && minute <= now; minute += MINUTE) {
      const due = TRADES_AT.map((offset, at) => ({ time: minute + offset, at })).filter(({ time }) => time > after && time <= now);
      // the candle as REST answers it once the minute has closed
      const candle = due.length > 0 ? replay.model.minute(market, minute, minute + MINUTE) : null;
      const volume = candle ? num(candle.v) : '0';
      if (!candle || volume === '0') continue;
      const prices = [candle.o, candle.h, candle.l, candle.c].map(num);
      for (const { time, at } of due) trades.push({ id: String((minute / MINUTE) * TRADES_AT.length + at), time, price: prices[at]!, size: quarter(volume) });
    }
    return trades;
  };
  const every = (ws: WebSocket, ms: number, send: () => void) => {
    const timer = setInterval(send, ms);
    timers.add(timer);
    ws.on('close', () => {
      clearInterval(timer);
      timers.delete(timer);
    });
  };

  const serve = (venue: StreamVenue, ws: WebSocket) => {
    const format = FORMATS[venue];
    const ids = new Set<string>();
    const candleIds = new Set<string>();
    /** the minute each market's candle was last streamed on this connection (modelPrices) */
    const candleMinutes = new Map<string, number>();
    /** the time up to which each market's trades were sent on this connection (modelPrices) */
    const tradesSentUpTo = new Map<string, number>();
    subscribed.set(ws, ids);
    subscribedCandles.set(ws, candleIds);
    let unanswered = 0;
    ws.on('message', (raw) => {
      try {
        format.onMessage(ws, String(raw), (id, channel = 'ticker') => {
          if (channel !== 'ticker' && dropModes[venue] === 'once') dropped[venue].delete(id.toUpperCase());
          (channel === 'ticker' ? ids : candleIds).add(id.toUpperCase());
          // a venue sends the trades made after the subscription
          if (channel === 'trades') tradesSentUpTo.set(id.toUpperCase(), replay.model.now());
        }, () => {
          unanswered = 0;
          pongCounts[venue]++;
        }, () => ids.size + candleIds.size);
      } catch {
        // what does not parse is ignored, as the venues do
      }
    });
    every(ws, intervalMs, () => {
      const now = replay.model.now();
      // trades made while the venue is silent (or a subscription dropped) are lost, not sent later; never twice
      const tradesAfter = (id: string) => {
        const after = tradesSentUpTo.get(id) ?? now;
        tradesSentUpTo.set(id, Math.max(after, now));
        return after;
      };
      if (modes[venue] === 'silent') return void candleIds.forEach(tradesAfter);
      for (const id of ids) {
        const symbol = symbolOf(venue, id);
        const price = symbol && priceOf(venue, symbol);
        if (!price) continue;
        if (format.ticker) ws.send(modes[venue] === 'garbage' ? format.garbage : format.ticker(streamId(venue, symbol)!, price));
      }
      for (const id of candleIds) {
        const after = tradesAfter(id);
        if (dropped[venue].has(id)) continue;
        const symbol = symbolOf(venue, id);
        if (!symbol) continue;
        const send = (message: string | Buffer) => ws.send(modes[venue] === 'garbage' ? format.garbage : message);
        if (format.candle) for (const candle of candlesOf(venue, symbol, id, candleMinutes)) send(format.candle(streamId(venue, symbol)!, candle));
        const trades = format.trades && options.modelPrices ? modelTrades(venue, symbol, after, now) : [];
        if (trades.length > 0) send(format.trades!(streamId(venue, symbol)!, trades));
      }
    });
    if (format.greeting) ws.send(format.greeting());
    const ping = format.ping;
    if (ping) {
      every(ws, pingMs, () => {
        // htx closes a connection that left two pings unanswered
        if (unanswered >= 2) return ws.terminate();
        unanswered++;
        ws.send(ping());
      });
    }
  };

  const upgrade = (req: import('node:http').IncomingMessage, socket: import('node:stream').Duplex, head: Buffer) => {
    const venue = STREAM_VENUES.find((id) => [FORMATS[id].path, ...(FORMATS[id].paths ?? [])].some((path) => req.url?.startsWith(path))) ?? null;
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
        subscribedCandles.delete(ws);
      });
      serve(venue, ws);
    });
  };
  replay.server.on('upgrade', upgrade);

  return {
    setPrice: (venue, symbol, price) => void prices.set(`${venue} ${symbol}`, price),
    setMode: (venue, mode) => void (modes[venue] = mode),
    setCandle: (venue, symbol, candle) => void (candle ? candles.set(`${venue} ${symbol}`, candle) : candles.delete(`${venue} ${symbol}`)),
    sendCandle: (venue, id, candle) => {
      if (dropped[venue].has(id.toUpperCase())) return;
      for (const ws of sockets[venue]) if (subscribedCandles.get(ws)?.size) ws.send(FORMATS[venue].candle!(id, candle));
    },
    sendTrades: (venue, symbol, trades) => {
      const id = streamId(venue, symbol);
      if (id && dropped[venue].has(id.toUpperCase())) return;
      for (const ws of sockets[venue]) if (id && subscribedCandles.get(ws)?.has(id.toUpperCase())) ws.send(FORMATS[venue].trades!(id, trades));
    },
    subscriptions: (venue, channel) =>
      [...sockets[venue]].flatMap((ws) => [...((channel === 'ticker' ? subscribed : subscribedCandles).get(ws) ?? [])]),
    connectionSubscriptions: (venue, channel) =>
      [...sockets[venue]].map((ws) => [...((channel === 'ticker' ? subscribed : subscribedCandles).get(ws) ?? [])]),
    dropSubscriptions: (venue, mode) => {
      dropModes[venue] = mode;
      if (mode === 'off') {
        dropped[venue].clear();
        return [];
      }
      const silenced = [...sockets[venue]].flatMap((ws) => [...(subscribedCandles.get(ws) ?? [])].filter((_, at) => at % 2 === 1));
      for (const id of silenced) dropped[venue].add(id);
      return silenced;
    },
    cut: (venue) => {
      for (const ws of sockets[venue]) ws.terminate();
    },
    burst: (venue, burst) => {
      for (const [symbol, price] of Object.entries(burst)) prices.set(`${venue} ${symbol}`, price);
      for (const ws of sockets[venue]) {
        const ids = subscribed.get(ws) ?? new Set<string>();
        const messages = Object.entries(burst).flatMap(([symbol, price]) => {
          const id = streamId(venue, symbol);
          const ticker = FORMATS[venue].ticker;
          return ticker && id && ids.has(id.toUpperCase()) ? [ticker(id, price)] : [];
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
    pongs: (venue) => pongCounts[venue],
    close: () => {
      // the replay may serve streams again (another test's)
      replay.server.off('upgrade', upgrade);
      for (const timer of timers) clearInterval(timer);
      for (const set of Object.values(sockets)) for (const ws of set) ws.terminate();
      wss.close();
    },
  };
}
