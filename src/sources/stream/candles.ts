// One-minute candles from the venues' streams (issue 46), beside the ticker streams of ./venues.ts:
// per venue, every market the index uses (market.venue_candle_markets) is subscribed to the venue's
// one-minute candle channel through ccxt pro (watchOHLCVForSymbols where ccxt has it, else one
// watchOHLCV per market; MEXC's pushes are protobuf, decoded by ccxt with protobufjs), or, for a
// venue without one in ccxt pro (coinbase), to its trades, from which the minute is built by the
// venue's own candle rules (candleFromTrades). Markets are spread
// over connections (one ccxt instance each) within the venue's documented subscriptions per
// connection (CANDLE_STREAMS).
// A minute's candle is final once the venue marks it closed (Binance, OKX, Bybit and Gate flag it in
// the message ccxt parses: CLOSED_FLAGS) or its next minute starts for the market, or, built from
// trades, once the minute has ended; it is then
// written once, through the checks of a REST candle (answers.ts candleRows) and the same SQL
// (market.ingest_venue_candles, path 'stream'), which never lets a stream candle replace a stored
// minute and lets the venue's REST candle replace a stream one, counting a disagreement.
// A stream candle of a minute not yet begun, with a price or volume that is no decimal, or with a
// volume lower than earlier in its minute, and a candle of a market the venue does not list are
// refused and counted (market.venue_candle_counts); the venue's REST candle stands for the minute.
// REST fills what the streams miss, through the venue gate like every REST read: from the last
// stored minute (candles_until) when a connection (re)starts, after a stall, for a venue ccxt pro
// cannot stream, and for any market whose minute did not arrive STREAM_CANDLE_WAIT_SECONDS after
// it closed. The minute job polls none of these venues' candles meanwhile (market.stream_candle_venues).
// The coverage the feed keeps in memory is read again from the database after any of its statements
// failed (the database went away): a write acknowledged just before a database was killed may not
// have lasted, and the feed would otherwise count its minutes stored for good.
// A market counts as streamed while its connection is open and the stream delivered a candle of it
// (coinbase: a trade) within the last DELIVERED_WITHIN_MS; the others count as on REST fallback (the
// fill covers their late minutes). A venue may drop some subscriptions of a connection and keep the
// others flowing: a market its stream said nothing of in a minute the venue's REST has a candle of
// (it traded), while its connection flows (FLOWING_MS), is re-subscribed by reopening that connection (at most once every RESUBSCRIBE_EVERY_MS per
// connection); one still silent after that is left to REST until it delivers again.
// A minute's index bars are built once every held market's candle of it is in, or once the wait
// has passed (then again for each late candle: the final build counts), with the coin state and the
// data version the API cache keys on right after: market.finish_stream_minutes (CandleFeeds.finish).
import type { Exchange, OHLCV, Trade } from 'ccxt';
import type { Logger } from '../../log.ts';
import type { Config } from '../../config.ts';
import { createSql, type Sql } from '../../db/client.ts';
import { queryOf, type Query } from '../../db/query.ts';
import { ensureVenueMarkets, type ExchangesSource, type LiveVenue } from '../exchanges/index.ts';
import { gateRequests, throughGate } from '../exchanges/gate.ts';
import { VenueBackingOff, candleRows, guardAnswers, reading } from '../exchanges/answers.ts';
import { createVenue, isVenueId, type VenueId } from '../exchanges/venues.ts';
import { nextClient, prepareStreams, stallGuard, type StreamClient } from './clients.ts';

const MINUTE = 60_000;
/** a market first seen gets this much history from REST, as the minute job gives it */
const FIRST_LOOK_BACK_MS = 10 * MINUTE;
/** REST never reaches back beyond the raw retention */
const MAX_LOOK_BACK_MS = 8 * 24 * 60 * MINUTE;
/** a candle connection silent this long (or STREAM_MAX_AGE_SECONDS if longer) has stalled: reconnected, REST fills the gap */
export const CANDLE_STALL_SECONDS = 60;
/** how long a venue may take to act on a subscription sent as its connection opened */
const SUBSCRIBED_WITHIN_MS = 5_000;
/** how far a venue's clock may be ahead of ours before its candle's minute counts as not begun */
const CLOCK_SKEW_MS = 5_000;
/** how long after a minute's end its last trades may still arrive */
const TRADES_LATE_MS = 2_000;
/** how often the markets are read again */
const MARKETS_EVERY_MS = 10 * MINUTE;
/** how long after a minute's close a venue's REST is asked for it when no stream brings it (the venues publish it within a second or two) */
const REST_AFTER_CLOSE_MS = 2_000;
/** candles in the smallest page a venue's REST answers (OKX, Gate): a fill that got as many may have more to fetch */
const REST_PAGE = 100;
/** markets a venue's REST fill works on at once */
const FILLS_AT_ONCE = 4;
/** how often the REST fills are looked for */
const FILL_EVERY_MS = 500;
/** how far back the coverage is checked against the database's gaps */
const GAPS_WITHIN_MS = 30 * MINUTE;
/** how often the finished minutes are looked for */
const FINISH_EVERY_MS = 200;
/** a market whose stream delivered nothing this long counts as on REST fallback, its subscription open or not */
const DELIVERED_WITHIN_MS = MINUTE;
/** a connection whose markets delivered nothing this long is not flowing: its silence is the stall guard's, not a lost subscription's */
const SIBLINGS_WITHIN_MS = 30_000;
/** a connection flows once its messages came this long without a gap this long: only then are its silent markets told apart (not a venue resuming) */
const FLOWING_MS = 5_000;
/** a connection is reopened for its silent markets at most this often (a quiet market trades again, goes quiet again) */
const RESUBSCRIBE_EVERY_MS = 5 * MINUTE;

/** thrown in a connection's loop to reopen it: its silent markets subscribed anew */
class Resubscribe extends Error {}

type Outcome = 'refused_future' | 'refused_not_decimal' | 'refused_volume_down' | 'refused_unlisted';

export interface CandleStream {
  /** how ccxt pro 4.5.84 streams the venue's one-minute candles; none: REST alone */
  method: 'ohlcvForSymbols' | 'ohlcv' | 'trades' | 'none';
  /** candle (or trade) subscriptions one connection may hold */
  perConnection: number;
  /** subscriptions one subscribe request may carry (ohlcvForSymbols) */
  perRequest?: number;
  /** where the limit is documented */
  source: string;
}

/**
 * Each venue's candle stream and its documented limits. Where a venue documents no limit per
 * connection, the holder's own cap (200, its markets per venue) stands, said so in `source`.
 */
export const CANDLE_STREAMS: Record<VenueId, CandleStream> = {
  binance: { method: 'ohlcvForSymbols', perConnection: 1024, perRequest: 200, source: 'https://developers.binance.com/docs/binance-spot-api-docs/web-socket-streams: "A single connection can listen to a maximum of 1024 streams", 5 incoming messages a second' },
  okx: { method: 'ohlcvForSymbols', perConnection: 200, perRequest: 100, source: 'https://www.okx.com/docs-v5/en/#overview-websocket-subscribe: a subscribe request up to 64 KB, no channel limit per connection (our cap); candles on /ws/v5/business' },
  bybit: { method: 'ohlcvForSymbols', perConnection: 200, perRequest: 10, source: 'https://bybit-exchange.github.io/docs/v5/ws/connect: spot "up to 10 args per subscription request", no topic limit per connection (our cap)' },
  kraken: { method: 'ohlcv', perConnection: 200, source: 'https://docs.kraken.com/api/docs/websocket-v2/ohlc: no subscription limit per connection documented (our cap)' },
  gate: { method: 'ohlcv', perConnection: 200, source: 'https://github.com/gateio/gatews/issues/25 (Gate\'s answer): no subscription limit per connection, at most 100 connections per host recommended (our cap)' },
  bitget: { method: 'ohlcv', perConnection: 50, source: 'https://www.bitget.com/api-doc/common/websocket-intro: up to 1000 channel subscriptions a connection, 240 subscription requests an hour a connection, 100 connections an IP; the same page in Chinese (/zh-CN/api-doc/common/websocket-intro) strongly recommends no more than 50 channels a connection for its stability (checked 2026-11)' },
  htx: { method: 'ohlcv', perConnection: 200, source: 'https://www.htx.com/en-us/opend/newApiPages/?id=7ec53561-7773-11ed-9966-0242ac110003: no subscription limit per connection documented (our cap)' },
  kucoin: { method: 'ohlcv', perConnection: 300, source: 'https://www.kucoin.com/docs-new/websocket-api/base-info/introduction: at most 300 topics a connection, at most 100 topics a batch subscription (the figures of KuCoin\'s older docs, docs.kucoin.com "Topic Subscription Limit", as cited by client libraries; checked 2026-11); one topic a subscribe here' },
  // ccxt pro 4.5.84 has no watchOHLCV for coinbase: its minutes are built from market_trades
  coinbase: { method: 'trades', perConnection: 200, source: 'https://docs.cdp.coinbase.com/advanced-trade/docs/ws-overview: no product limit per connection documented for public channels (our cap)' },
  // protobuf pushes (spot@public.kline.v3.api.pb), which ccxt pro 4.5.84 decodes with protobufjs
  mexc: { method: 'ohlcv', perConnection: 30, source: 'https://mexcdevelop.github.io/apidocs/spot_v3_en/#websocket-market-streams: "One ws connection supports a maximum of 30 subscriptions"; a connection valid for at most 24 hours' },
};

/** how a venue id (verified or not) streams its candles */
export function candleStream(id: string): CandleStream {
  return isVenueId(id) ? CANDLE_STREAMS[id] : { method: 'none', perConnection: 0, source: 'an unverified venue: REST alone' };
}

/**
 * The candles a venue's message marks closed, as [market id, open time in ms]: ccxt's unified candles
 * carry no such flag, so the holder reads it from the message ccxt parses. Kraken, Bitget, HTX, MEXC and
 * KuCoin send none: their minute is final when the next one starts.
 */
type RawCandles = Record<string, unknown> & { k?: { x?: boolean; s?: string; t?: number }; arg?: { instId?: string }; data?: unknown[]; topic?: string; result?: unknown };
const CLOSED_FLAGS: Partial<Record<VenueId, (message: RawCandles) => [string, number][]>> = {
  // kline event: k.x "Is this kline closed?"
  binance: (message) => (message.k?.x === true && message.k.s && message.k.t !== undefined ? [[message.k.s, Number(message.k.t)]] : []),
  // candle1m rows: [ts, o, h, l, c, vol, volCcy, volCcyQuote, confirm], confirm "1" once the candle is complete
  okx: (message) => ((message.data ?? []) as unknown[][]).filter((row) => row?.[8] === '1').map((row) => [String(message.arg?.instId), Number(row[0])]),
  // kline.1.<id> rows: confirm true once the candle is closed
  bybit: (message) =>
    ((message.data ?? []) as { confirm?: boolean; start?: number }[]).filter((row) => row?.confirm === true).map((row) => [String(message.topic).split('.').at(-1)!, Number(row.start)]),
  // spot.candlesticks result: w true once the window is closed, n "1m_<pair>", t in seconds
  gate: (message) =>
    ([message.result].flat() as { w?: boolean; n?: string; t?: string }[]).filter((row) => row?.w === true).map((row) => [String(row.n).replace(/^1m_/, ''), Number(row.t) * 1000]),
};

// ---- decimals: prices and volumes stay decimal strings (ccxt hands some venues' numbers on as floats)

const DECIMAL = /^(\d+)(?:\.(\d+))?(?:[eE]([-+]?\d+))?$/;

/** A value as a plain decimal string (no exponent), or null when it is no non-negative decimal. */
export function plainDecimal(value: unknown): string | null {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : typeof value === 'string' ? value.trim() : '';
  const match = DECIMAL.exec(text);
  if (!match) return null;
  let digits = (match[1] ?? '') + (match[2] ?? '');
  let point = (match[1] ?? '').length + Number(match[3] ?? 0);
  if (point <= 0) {
    digits = '0'.repeat(1 - point) + digits;
    point = 1;
  }
  if (point > digits.length) digits += '0'.repeat(point - digits.length);
  const whole = digits.slice(0, point).replace(/^0+(?=\d)/, '');
  const fraction = digits.slice(point).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

/** [integer, scale] of a plain decimal */
const scaled = (value: string): [bigint, number] => {
  const [whole, fraction = ''] = value.split('.');
  return [BigInt(whole! + fraction), fraction.length];
};
const atScale = ([units, scale]: [bigint, number], to: number) => units * 10n ** BigInt(to - scale);

export function compareDecimals(a: string, b: string): number {
  const [x, y] = [scaled(a), scaled(b)];
  const scale = Math.max(x[1], y[1]);
  const [p, q] = [atScale(x, scale), atScale(y, scale)];
  return p < q ? -1 : p > q ? 1 : 0;
}

export function addDecimals(a: string, b: string): string {
  const [x, y] = [scaled(a), scaled(b)];
  const scale = Math.max(x[1], y[1]);
  const sum = (atScale(x, scale) + atScale(y, scale)).toString().padStart(scale + 1, '0');
  return plainDecimal(scale ? `${sum.slice(0, -scale)}.${sum.slice(-scale)}` : sum)!;
}

// ---- candles built from trades

export interface TradeInput {
  id?: string;
  timestamp: number;
  price: string;
  amount: string;
}

/**
 * One minute's candle from its trades, by the rules of a venue's own one-minute candles (Coinbase
 * Advanced Trade's GET /products/{id}/candles, ONE_MINUTE): open the first trade's price, close the
 * last's, high and low the extremes, volume the sum of the sizes (base units); trades in the venue's
 * order (time, then trade id). A minute without trades has no candle, as at the venue.
 */
export function candleFromTrades(minute: number, trades: TradeInput[]): [number, string, string, string, string, string] | null {
  const inMinute = trades.filter((trade) => trade.timestamp >= minute && trade.timestamp < minute + MINUTE);
  if (inMinute.length === 0) return null;
  const ordered = [...inMinute].sort((a, b) => a.timestamp - b.timestamp || tradeOrder(a.id, b.id));
  let [high, low, volume] = [ordered[0]!.price, ordered[0]!.price, '0'];
  for (const trade of ordered) {
    if (compareDecimals(trade.price, high) > 0) high = trade.price;
    if (compareDecimals(trade.price, low) < 0) low = trade.price;
    volume = addDecimals(volume, trade.amount);
  }
  return [minute, ordered[0]!.price, high, low, ordered.at(-1)!.price, volume];
}

/** trade ids in the venue's order: numeric ids by value */
function tradeOrder(a = '', b = ''): number {
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return a.localeCompare(b);
  const [x, y] = [BigInt(a), BigInt(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

// ---- one venue

type Row = [string, number, string, string, string, string, string];

interface MarketState {
  /**
   * ms: how far the market's minutes are covered without a gap (candles_until): stored, or answered by
   * REST; a stream candle after a gap leaves it before the gap, for REST to fill. null: none stored
   */
  until: number | null;
  /** minutes seen on the stream and not yet final: their latest candle */
  open: Map<number, Row>;
  /** minutes refused, or missing in the database between stored ones: the venue's REST candle stands for them (asked again, written even where counted stored) */
  refused: Set<number>;
  /** minutes the stream stored beyond a gap in the coverage: REST's fill of the gap leaves them be */
  ahead: Set<number>;
  /** a REST fill from the last stored minute is due (a connection (re)started, a stall) */
  refill: boolean;
  /** the first minute the stream may still bring: earlier ones are final (written) or, built from trades, not seen whole */
  coveredFrom: number;
  /** trades: the trades of the open minutes, by id */
  trades: Map<string, TradeInput>;
  /** minutes the venue marked closed (CLOSED_FLAGS) */
  closed: Set<number>;
  /** recent minutes the venue's REST answered without a candle (no trades): no gap to ask about again */
  quiet: Set<number>;
}

export interface CandleFeedOptions {
  baseUrl?: string;
  stallMs: number;
  /** how long after a minute's close its stream candle may take before REST stands for it */
  waitMs: number;
  /** how often the coverage is checked against the database's gaps (real time; STREAM_CANDLE_CHECK_SECONDS) */
  checkMs: number;
}

class CandleFeed {
  private readonly states = new Map<string, MarketState>();
  private readonly connections: Exchange[] = [];
  private closed = false;
  /** bumped when the markets change: the connections of an older one end */
  private generation = 0;
  private loops: Promise<void>[] = [];
  private wakers = new Set<() => void>();
  /** markets subscribed on an open connection */
  private readonly streaming = new Set<string>();
  /** per market: when (the feed's clock) the stream last delivered a candle (trade) of it */
  private readonly delivered = new Map<string, number>();
  /** markets re-subscribed for their silence and silent since: left to REST, not the reason to reopen again */
  private readonly resubscribed = new Set<string>();
  /** per market: when (the feed's clock) its connection subscribed it */
  private readonly subscribedAt = new Map<string, number>();
  /**
   * markets whose stream said nothing of a minute the venue's REST has a candle of: a subscription lost
   * (a quiet market, which REST has no candle of either, is no such sign)
   */
  private readonly missed = new Set<string>();
  /** writes one at a time: a fill and a stream candle never race on a minute */
  private writing: Promise<unknown> = Promise.resolve();
  /**
   * a statement failed (the database went away): the coverage kept here is read again from the database
   * before the next fill, as a write acknowledged just before the database died may not have lasted
   */
  private coverageStale = false;
  /** when (real time) the coverage was last checked against the database's gaps */
  private gapsCheckedAt = -Infinity;
  readonly done: Promise<void>;

  private readonly source: ExchangesSource;
  private readonly venue: LiveVenue;
  private readonly stream: CandleStream;
  private readonly options: CandleFeedOptions;
  private readonly markets: () => Promise<string[]>;
  private readonly query: Query;
  private readonly logger: Logger | undefined;

  private readonly written: (venue: string, first: number, last: number, coins: number[]) => void;

  /** written: the minutes (first to last, their starts in ms) of coins whose candles were written, for their index bars */
  constructor(source: ExchangesSource, id: string, options: CandleFeedOptions, markets: () => Promise<string[]>, query: Query, written: (venue: string, first: number, last: number, coins: number[]) => void, logger?: Logger) {
    this.written = written;
    this.source = source;
    this.venue = source.venue(id);
    this.stream = candleStream(id);
    this.options = options;
    this.markets = markets;
    this.query = async (text, params) => {
      try {
        return await query(text, params);
      } catch (error) {
        this.coverageStale = true;
        throw error;
      }
    };
    this.logger = logger;
    this.done = this.run();
  }

  get id(): string {
    return this.venue.id;
  }

  /** how many of its markets the venue streams now: subscribed on an open connection, and a candle (trade) of it delivered within DELIVERED_WITHIN_MS */
  get streamingMarkets(): number {
    const since = this.now() - DELIVERED_WITHIN_MS;
    let count = 0;
    for (const symbol of this.streaming) if ((this.delivered.get(symbol) ?? -Infinity) >= since) count++;
    return count;
  }

  /** how many markets it takes candles for: streamed, or from REST alone */
  get candleMarkets(): number {
    return this.states.size;
  }

  private now(): number {
    return this.source.now();
  }

  /** whether every market's candle of the minute is stored (or none is held yet) */
  complete(minute: number): boolean {
    for (const [symbol, state] of this.states) {
      if (!this.stored(state, minute) && this.expects(symbol, minute)) return false;
    }
    return true;
  }

  /**
   * Whether the stream is to bring the market's candle of the minute: it streams the market and heard of
   * it during the minute. A quiet market (no trade, no candle at the venue either) or one left to REST
   * does not hold the minute's index bars back: REST's candle of it, if any, builds them again.
   */
  private expects(symbol: string, minute: number): boolean {
    return this.streaming.has(symbol) && (this.delivered.get(symbol) ?? -Infinity) >= minute;
  }

  /** Waits, woken early by close(). */
  private pause(ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }

  /**
   * The markets and their stored coverage, then the fills and one loop per connection; the markets
   * are read again every MARKETS_EVERY_MS (listings, the index's choice of market), and a change
   * spreads them over the connections anew.
   */
  private async run() {
    const fills = this.fillLoop();
    let symbols: string[] = [];
    while (!this.closed) {
      let next = symbols;
      try {
        await throughGate(this.query, this.venue, 'failures', () => ensureVenueMarkets(this.query, this.venue));
        next = await this.markets();
      } catch (error) {
        this.logger?.warn(`stream candles: ${this.venue.id} (${(error as Error).message}); trying again`);
      }
      if (next.join('\n') !== symbols.join('\n')) {
        symbols = next;
        this.generation++;
        for (const symbol of this.delivered.keys()) if (!symbols.includes(symbol)) this.delivered.delete(symbol);
        this.resubscribed.clear();
        await Promise.all(this.connections.map((exchange) => exchange.close().catch(() => {})));
        await Promise.all(this.loops);
        try {
          await this.loadCoverage(symbols);
        } catch (error) {
          this.logger?.warn(`stream candles: ${this.venue.id} (${(error as Error).message})`);
        }
        const generation = this.generation;
        this.loops = [];
        if (this.stream.method !== 'none') {
          for (let at = 0; at < symbols.length; at += this.stream.perConnection) {
            this.loops.push(this.connectionLoop(symbols.slice(at, at + this.stream.perConnection), generation));
          }
        }
      }
      await this.pause(symbols.length === 0 ? 5_000 : MARKETS_EVERY_MS);
    }
    await Promise.all([fills, ...this.loops]);
  }

  /** Each market's stored coverage (candles_until); a market no longer among them is no longer filled. */
  private async loadCoverage(symbols: string[]) {
    for (const symbol of this.states.keys()) if (!symbols.includes(symbol)) this.states.delete(symbol);
    const until = await this.storedUntil(symbols);
    for (const symbol of symbols) {
      if (this.states.has(symbol)) continue;
      this.states.set(symbol, { until: until.get(symbol) ?? null, open: new Map(), refused: new Set(), ahead: new Set(), refill: true, coveredFrom: -Infinity, trades: new Map(), closed: new Set(), quiet: new Set() });
    }
  }

  /** Each market's stored coverage (candles_until, ms; null: none stored). */
  private async storedUntil(symbols: string[]): Promise<Map<string, number | null>> {
    const rows = await this.query(
      `select symbol, (extract(epoch from candles_until) * 1000)::float8 as until from market.venue_candle_markets($1) where symbol = any($2::text[])`,
      [this.venue.id, symbols],
    );
    return new Map(rows.map((row) => [row.symbol as string, row.until === null ? null : Number(row.until)]));
  }

  /**
   * The coverage read again from the database, the truth, after a statement failed: each market's
   * candles_until, the minutes kept as stored beyond it forgotten (REST fills from candles_until; a
   * minute stored twice is refused or replaced by SQL, never doubled), its fill due.
   */
  private async reloadCoverage() {
    this.coverageStale = false;
    const until = await this.storedUntil([...this.states.keys()]);
    for (const [symbol, state] of this.states) {
      state.until = until.get(symbol) ?? null;
      state.ahead.clear();
      state.refill = true;
    }
  }

  /** An instance of its own per connection: its markets from the venue's, its REST requests through the venue's gate. */
  private instance(): Exchange {
    const settings = this.source.settings;
    const exchange = createVenue(this.venue.id, { baseUrl: settings.urls?.[this.venue.id], timeoutMs: settings.timeoutMs, rateLimitMs: settings.rateLimitMs });
    (exchange as unknown as { number: (value: string) => string }).number = String;
    const shared = this.venue;
    const gated = {
      id: shared.id,
      exchange,
      clock: shared.clock,
      get requests() {
        return shared.requests;
      },
      set requests(value: number) {
        shared.requests = value;
      },
      get holdUntil() {
        return shared.holdUntil;
      },
      set holdUntil(value: number) {
        shared.holdUntil = value;
      },
    };
    guardAnswers(shared.id, exchange, gated);
    gateRequests(gated);
    (exchange as unknown as { setMarkets(markets: unknown, currencies?: unknown): void }).setMarkets(shared.exchange.markets, shared.exchange.currencies);
    prepareStreams(exchange, this.logger, `${shared.id} candles`);
    const closedFlags = CLOSED_FLAGS[shared.id as VenueId];
    if (closedFlags) {
      const handle = (exchange as unknown as { handleOHLCV(client: unknown, message: unknown): void }).handleOHLCV.bind(exchange);
      (exchange as unknown as { handleOHLCV(client: unknown, message: unknown): void }).handleOHLCV = (client, message) => {
        handle(client, message);
        for (const [id, time] of closedFlags(message as RawCandles)) {
          const symbol = exchange.safeSymbol(id);
          if (Number.isFinite(time)) this.states.get(symbol)?.closed.add(time);
        }
      };
    }
    if (shared.id === 'gate') {
      // ccxt reads the stream candle's volume from `v`, Gate's quote volume; its REST candles' volume is
      // the base amount, which the stream sends as `a`: the same volume on both paths
      const parse = exchange.parseOHLCV.bind(exchange);
      exchange.parseOHLCV = (ohlcv, market) => parse(Array.isArray(ohlcv) || !ohlcv ? ohlcv : { ...(ohlcv as object), v: (ohlcv as { a?: unknown }).a } as never, market);
    }
    return exchange;
  }

  private stallGuard<T>(promise: Promise<T>): Promise<T> {
    return stallGuard(promise, this.options.stallMs, 'candle');
  }

  /** The next update of any of the connection's markets (ccxt resolves one waiting call per message; the caches hold the rest). */
  private watch(exchange: Exchange, symbols: string[]): Promise<unknown> {
    const next = this.subscribe(exchange, symbols);
    // rejected by close() when the loop no longer waits for it
    next.catch(() => {});
    return next;
  }

  private subscribe(exchange: Exchange, symbols: string[]): Promise<unknown> {
    const { method, perRequest } = this.stream;
    if (method === 'ohlcvForSymbols') {
      const requests: Promise<unknown>[] = [];
      for (let at = 0; at < symbols.length; at += perRequest ?? symbols.length) {
        requests.push(exchange.watchOHLCVForSymbols(symbols.slice(at, at + (perRequest ?? symbols.length)).map((symbol) => [symbol, '1m'])));
      }
      return Promise.race(requests);
    }
    if (method === 'trades') return Promise.race(symbols.map((symbol) => exchange.watchTrades(symbol)));
    return Promise.race(symbols.map((symbol) => exchange.watchOHLCV(symbol, '1m')));
  }

  /**
   * Every candle (trade) message marks its market delivered: each venue's handler in ccxt pro 4.5.84
   * resolves the market's cache (or [symbol, timeframe, cache]) once per message, whether or not a
   * watch waits for it (the watches' answers miss the messages of a burst: one per market and round).
   */
  private hearDeliveries(exchange: Exchange, client: StreamClient) {
    const resolving = client as unknown as { resolve(result: unknown, hash: string): unknown };
    const resolve = resolving.resolve.bind(resolving);
    const symbols = new WeakMap<object, string>();
    const symbolOf = (result: unknown): string | undefined => {
      if (Array.isArray(result) && typeof result[0] === 'string') return result[0];
      if (!result || typeof result !== 'object') return undefined;
      let symbol = symbols.get(result);
      if (symbol === undefined) {
        const caches = this.stream.method === 'trades'
          ? Object.entries((exchange.trades ?? {}) as Record<string, unknown>)
          : Object.entries((exchange.ohlcvs ?? {}) as Record<string, Record<string, unknown>>).map(([key, byTimeframe]) => [key, byTimeframe?.['1m']] as const);
        symbol = caches.find(([, cache]) => cache === result)?.[0];
        if (symbol !== undefined) symbols.set(result, symbol);
      }
      return symbol;
    };
    resolving.resolve = (result, hash) => {
      const symbol = symbolOf(result);
      if (symbol !== undefined && this.states.has(symbol)) {
        this.delivered.set(symbol, this.now());
        this.resubscribed.delete(symbol);
        this.missed.delete(symbol);
      }
      return resolve(result, hash);
    };
  }

  /**
   * The connection's markets whose subscription is lost (missed), not yet re-subscribed for it, while
   * a sibling delivered within SIBLINGS_WITHIN_MS.
   */
  private silentMarkets(symbols: string[]): string[] {
    const since = this.now() - SIBLINGS_WITHIN_MS;
    if (!symbols.some((symbol) => (this.delivered.get(symbol) ?? -Infinity) >= since)) return [];
    return symbols.filter((symbol) => this.missed.has(symbol) && !this.resubscribed.has(symbol));
  }

  /**
   * REST brought candles of the market: one of a minute its stream had it subscribed for, of which the
   * stream holds less volume (a subscription dropped mid-minute) or said nothing at all, marks it missed
   */
  private noteMissed(symbol: string, state: MarketState, rows: Row[]) {
    const since = this.subscribedAt.get(symbol);
    if (since === undefined || !this.streaming.has(symbol)) return;
    const heard = this.delivered.get(symbol) ?? -Infinity;
    for (const [, time, , , , , volume] of rows) {
      // a candle channel sends a minute's running totals, whenever subscribed; trades only those after it
      if (this.stream.method === 'trades' ? time < since : time + MINUTE <= since) continue;
      const streamed = this.stream.method === 'trades' ? candleFromTrades(time, [...state.trades.values()])?.[5] : state.open.get(time)?.[6];
      const rest = plainDecimal(volume);
      if (streamed === undefined ? heard < time : rest !== null && compareDecimals(streamed, rest) < 0) {
        this.missed.add(symbol);
        return;
      }
    }
  }

  private async connectionLoop(symbols: string[], generation: number) {
    let wait = 0;
    let reopenedAt = -Infinity;
    const current = () => !this.closed && this.generation === generation;
    while (current()) {
      const exchange = this.instance();
      this.connections.push(exchange);
      try {
        if (/^http:/i.test(this.options.baseUrl ?? '')) await (exchange as Exchange & { loadHttpProxyAgent(): Promise<unknown> }).loadHttpProxyAgent();
        const dialled = nextClient(exchange);
        void dialled.then((client) => this.hearDeliveries(exchange, client));
        const first = this.watch(exchange, symbols);
        // the connection open (its subscriptions sent), or a first message; one that never opens costs no REST request
        await this.stallGuard(Promise.race([dialled.then((client) => client.connected), first]));
        if (!current()) break;
        wait = 0;
        // subscribed: what the gap missed is REST's, from the last stored minute
        const start = this.now();
        for (const symbol of symbols) {
          const state = this.states.get(symbol);
          if (!state) continue;
          state.refill = true;
          // trades: only a minute the subscription saw from its start is whole (a few seconds for the venue to take it)
          if (this.stream.method === 'trades') state.coveredFrom = Math.max(state.coveredFrom, Math.ceil((start + SUBSCRIBED_WITHIN_MS) / MINUTE) * MINUTE);
          state.trades.clear();
          this.streaming.add(symbol);
          this.subscribedAt.set(symbol, start);
        }
        let [lastRound, flowingSince] = [-Infinity, -Infinity];
        for (let next = first; current(); ) {
          await this.stallGuard(next);
          const roundAt = this.now();
          if (roundAt - lastRound > FLOWING_MS) flowingSince = roundAt;
          lastRound = roundAt;
          // waited for before the caches are read: a message that comes during the read wakes the next round
          next = this.watch(exchange, symbols);
          await this.read(exchange, symbols);
          const silent = roundAt - flowingSince >= FLOWING_MS ? this.silentMarkets(symbols) : [];
          if (silent.length > 0 && this.now() - reopenedAt >= RESUBSCRIBE_EVERY_MS) {
            reopenedAt = this.now();
            for (const symbol of silent) {
              this.resubscribed.add(symbol);
              this.missed.delete(symbol);
            }
            throw new Resubscribe(`${silent.length} of its ${symbols.length} markets silent in a minute they traded in (${silent.slice(0, 3).join(', ')}${silent.length > 3 ? ', …' : ''}): reopened to subscribe them again`);
          }
        }
      } catch (error) {
        if (!current()) break;
        for (const symbol of symbols) {
          const state = this.states.get(symbol);
          if (state) {
            state.open.clear();
            state.refill = true;
          }
        }
        if (error instanceof Resubscribe) {
          wait = 0;
          this.logger?.info(`stream candles: ${this.venue.id} connection: ${error.message}`);
        } else {
          wait = Math.min(Math.max(2_000, wait * 2), 60_000);
          this.logger?.warn(`stream candles: ${this.venue.id} (${(error as Error).message}); reconnecting in ${wait / 1000} s, REST fills the gap`);
        }
      } finally {
        for (const symbol of symbols) this.streaming.delete(symbol);
        this.connections.splice(this.connections.indexOf(exchange), 1);
        await exchange.close().catch(() => {});
      }
      await this.pause(wait);
    }
  }

  /** What the connection's caches hold now: candles checked, minutes that became final written. */
  private async read(exchange: Exchange, symbols: string[]) {
    const refused: Partial<Record<Outcome, number>> = {};
    const refuse = (outcome: Outcome, n = 1) => void (refused[outcome] = (refused[outcome] ?? 0) + n);
    const final: Row[] = [];
    const now = this.now();
    // the newest minute that may have begun (a venue's clock a little ahead of ours is no future)
    const current = Math.floor((now + CLOCK_SKEW_MS) / MINUTE) * MINUTE;
    const subscribed = new Set(symbols);
    if (this.stream.method === 'trades') {
      const caches = (exchange.trades ?? {}) as Record<string, Trade[]>;
      for (const [symbol, trades] of Object.entries(caches)) {
        if (!subscribed.has(symbol)) {
          refuse('refused_unlisted', trades.length);
          delete caches[symbol];
          continue;
        }
        this.readTrades(symbol, trades, current, Number(exchange.options['tradesLimit'] ?? 1000), refuse);
      }
      // a minute built from trades is final once it has ended (and its last trades had time to come)
      const ended = Math.floor((now - TRADES_LATE_MS) / MINUTE) * MINUTE;
      for (const symbol of symbols) this.closeTradeMinutes(symbol, ended, final);
    } else {
      const caches = (exchange.ohlcvs ?? {}) as Record<string, Record<string, OHLCV[]>>;
      for (const [symbol, byTimeframe] of Object.entries(caches)) {
        const candles = byTimeframe?.['1m'] ?? [];
        if (!subscribed.has(symbol)) {
          refuse('refused_unlisted', candles.length);
          delete caches[symbol];
          continue;
        }
        this.readCandles(symbol, candles, current, final, refuse);
      }
    }
    for (const [outcome, n] of Object.entries(refused)) {
      await this.query('select market.count_venue_candles($1, $2, $3)', [this.venue.id, outcome, n]);
    }
    if (final.length > 0) await this.write('stream', final);
  }

  private readCandles(symbol: string, candles: OHLCV[], current: number, final: Row[], refuse: (outcome: Outcome) => void) {
    const state = this.states.get(symbol)!;
    let newest = -Infinity;
    // the newest few: older ones were read before (the cache keeps a thousand)
    for (const candle of candles.slice(-5)) {
      const time = candle[0];
      if (typeof time !== 'number' || !Number.isFinite(time) || time % MINUTE !== 0) {
        refuse('refused_not_decimal');
        continue;
      }
      if (time < state.coveredFrom || state.refused.has(time)) continue;
      if (time > current) {
        // a minute not yet begun: counted once, and REST's once it has closed
        refuse('refused_future');
        this.refuseMinute(state, time);
        continue;
      }
      const values = candle.slice(1, 6).map(plainDecimal);
      let row: Row | null = null;
      if (values.every((value) => value !== null)) {
        try {
          candleRows(this.venue, symbol, [[time, ...values] as unknown as OHLCV]);
          row = [symbol, time, ...(values as [string, string, string, string, string])];
        } catch {
          row = null;
        }
      }
      if (!row) {
        refuse('refused_not_decimal');
        this.refuseMinute(state, time);
        continue;
      }
      const seen = state.open.get(time);
      if (seen && compareDecimals(row[6], seen[6]) < 0) {
        refuse('refused_volume_down');
        this.refuseMinute(state, time);
        continue;
      }
      state.open.set(time, row);
      newest = Math.max(newest, time);
    }
    // the venue marked it closed, or its next minute started: final, and never read again
    for (const [time, row] of state.open) {
      if (time < newest || state.closed.has(time)) {
        final.push(row);
        state.open.delete(time);
        state.coveredFrom = Math.max(state.coveredFrom, time + MINUTE);
      }
    }
    for (const time of state.closed) if (time < state.coveredFrom) state.closed.delete(time);
  }

  private refuseMinute(state: MarketState, time: number) {
    state.refused.add(time);
    state.open.delete(time);
  }

  private readTrades(symbol: string, trades: Trade[], current: number, limit: number, refuse: (outcome: Outcome) => void) {
    const state = this.states.get(symbol)!;
    const idOf = (trade: Trade) => String(trade.id ?? `${trade.timestamp} ${trade.price} ${trade.amount}`);
    // a full cache whose oldest trade is new: trades fell out of it unread, so its minutes are not whole
    const oldest = trades[0];
    if (oldest && trades.length >= limit && !state.trades.has(idOf(oldest)) && state.trades.size > 0) {
      const upTo = Math.floor((oldest.timestamp ?? 0) / MINUTE) * MINUTE;
      for (const minute of state.open.keys()) if (minute <= upTo) this.refuseMinute(state, minute);
      this.refuseMinute(state, upTo);
    }
    for (const trade of trades) {
      const id = idOf(trade);
      if (state.trades.has(id)) continue;
      const time = trade.timestamp;
      if (typeof time !== 'number' || !Number.isFinite(time)) {
        refuse('refused_not_decimal');
        continue;
      }
      const minute = Math.floor(time / MINUTE) * MINUTE;
      if (minute < state.coveredFrom || state.refused.has(minute)) continue;
      if (minute > current) {
        refuse('refused_future');
        this.refuseMinute(state, minute);
        continue;
      }
      const price = plainDecimal(trade.price);
      const amount = plainDecimal(trade.amount);
      if (!price || !amount || !(Number(price) > 0)) {
        refuse('refused_not_decimal');
        this.refuseMinute(state, minute);
        continue;
      }
      state.trades.set(id, { id, timestamp: time, price, amount });
      state.open.set(minute, [symbol, minute, price, price, price, price, '0']);
    }
  }

  private closeTradeMinutes(symbol: string, ended: number, final: Row[]) {
    const state = this.states.get(symbol)!;
    for (const minute of [...state.open.keys()].sort((a, b) => a - b)) {
      if (minute >= ended) continue;
      state.open.delete(minute);
      state.coveredFrom = Math.max(state.coveredFrom, minute + MINUTE);
      const trades = [...state.trades.values()].filter((trade) => trade.timestamp >= minute && trade.timestamp < minute + MINUTE);
      for (const trade of trades) state.trades.delete(trade.id!);
      if (state.refused.has(minute)) continue;
      const candle = candleFromTrades(minute, trades);
      if (candle) final.push([symbol, ...candle]);
    }
  }

  /** Writes candles of one path; their minutes' index bars are CandleFeeds.finish's. */
  /** refetched: for REST, the minutes it was asked for again (refused ones), which it writes even where stored */
  private write(path: 'rest' | 'stream', candles: Row[], refetched: number[] = []): Promise<void> {
    const run = this.writing.then(async () => {
      // in turn with the stream's writes: a minute the stream stored meanwhile (or beyond a gap) is not written twice
      const rows = path === 'stream' ? candles : candles.filter(([symbol, time]) => {
        const state = this.states.get(symbol);
        return !state || refetched.includes(time) || !this.stored(state, time);
      });
      if (rows.length === 0) return;
      const [written] = await this.query('select * from market.ingest_venue_candles($1, $2::text::jsonb, interval \'1 minute\', $3)', [this.venue.id, JSON.stringify(rows), path]);
      // only what joins the coverage moves it (as candles_until in SQL): a minute the stream skipped
      // (its write failed, the venue never sent it) stays REST's to fill, even once later ones are in
      for (const row of [...rows].sort((a, b) => a[1] - b[1])) {
        const state = this.states.get(row[0]);
        if (!state) continue;
        if (state.until === null || row[1] <= state.until) this.cover(state, row[1] + MINUTE);
        else if (path === 'stream') state.ahead.add(row[1]);
      }
      if (written?.first_time) {
        this.written(this.venue.id, new Date(written.first_time as string).getTime(), new Date(written.last_time as string).getTime(), (written.coins as number[] | null) ?? []);
      }
    });
    this.writing = run.catch(() => {});
    return run;
  }

  /** whether the market's minute is stored (or answered by REST): within the coverage, or stored by the stream beyond it */
  private stored(state: MarketState, minute: number): boolean {
    return (state.until ?? -Infinity) > minute || state.ahead.has(minute);
  }

  /** The coverage moved to `to`, and on over the minutes the stream stored beyond it. */
  private cover(state: MarketState, to: number) {
    state.until = Math.max(state.until ?? -Infinity, to);
    while (state.ahead.delete(state.until)) state.until += MINUTE;
    for (const minute of state.ahead) if (minute < state.until) state.ahead.delete(minute);
  }

  /** REST for what the streams miss, every half second. */
  private async fillLoop() {
    while (!this.closed) {
      let wait = FILL_EVERY_MS;
      try {
        await this.fill();
      } catch (error) {
        // the gate recorded the failure and backs the venue off: no request until then
        if (error instanceof VenueBackingOff) wait = Math.max(wait, error.until - this.venue.clock.now());
        else if (!this.closed) this.logger?.warn(`stream candles: ${this.venue.id} REST fill (${(error as Error).message})`);
      }
      await this.pause(wait);
    }
  }

  private async fill() {
    if (this.coverageStale) await this.reloadCoverage();
    const now = this.now();
    const closedBefore = Math.floor(now / MINUTE) * MINUTE;
    if (Date.now() - this.gapsCheckedAt >= this.options.checkMs) {
      this.gapsCheckedAt = Date.now();
      // a check that failed waits for the next one: the fills go on meanwhile
      await this.askAgainForGaps(closedBefore).catch((error: Error) => this.logger?.warn(`stream candles: ${this.venue.id}: checking the stored minutes failed (${error.message})`));
    }
    const sinceClose = now - closedBefore;
    const due = [...this.states].filter(([symbol, state]) => {
      // a market no stream brings waits only for the venue's REST to have the minute; a streamed one its
      // stream's wait (a quiet market's minute, which has no candle, costs one request then)
      const late = sinceClose >= (this.streaming.has(symbol) ? this.options.waitMs : REST_AFTER_CLOSE_MS);
      // after (re)connecting or a stall; a refused minute; a gap, or its last closed minute late
      return state.refill || [...state.refused].some((minute) => minute < closedBefore) || ((state.until ?? -Infinity) < closedBefore && late);
    });
    // a few markets at a time: the venue's rate limiter paces the requests, and one market's round
    // trips to the database no longer wait for the next's request
    const queue = due.map(([symbol]) => symbol);
    await Promise.all(Array.from({ length: Math.min(FILLS_AT_ONCE, queue.length) }, async () => {
      for (let symbol = queue.shift(); symbol !== undefined && !this.closed; symbol = queue.shift()) {
        const state = this.states.get(symbol);
        if (state) await this.fillMarket(symbol, state, now, closedBefore);
      }
    }));
  }

  /**
   * The database is the truth: a minute it lacks between stored ones of the last GAPS_WITHIN_MS (lost
   * with a write that did not last, skipped by a race between the paths) is asked of REST again and
   * written even where this feed counts it stored, unless REST answered that it has none.
   */
  private async askAgainForGaps(closedBefore: number) {
    const gaps = await this.query<{ symbol: string; minute: number }>(
      'select symbol, (extract(epoch from minute) * 1000)::float8 as minute from market.venue_candle_gaps($1, $2::text[], $3::timestamptz, $4::timestamptz)',
      [this.venue.id, [...this.states.keys()], new Date(closedBefore - GAPS_WITHIN_MS).toISOString(), new Date(closedBefore).toISOString()],
    );
    for (const state of this.states.values()) for (const minute of state.quiet) if (minute < closedBefore - GAPS_WITHIN_MS) state.quiet.delete(minute);
    let asked = 0;
    for (const { symbol, minute } of gaps) {
      const state = this.states.get(symbol);
      if (!state || state.quiet.has(minute) || state.refused.has(minute)) continue;
      state.refused.add(minute);
      asked++;
    }
    if (asked > 0) this.logger?.warn(`stream candles: ${this.venue.id}: ${asked} minutes missing between stored ones; asked of REST again`);
  }

  private async fillMarket(symbol: string, state: MarketState, now: number, closedBefore: number) {
    const refused = [...state.refused].filter((minute) => minute < closedBefore);
    const from = Math.min(state.until ?? now - FIRST_LOOK_BACK_MS, ...refused);
    const since = Math.max(from, now - MAX_LOOK_BACK_MS);
    if (since < closedBefore) {
      // a failure (the request, the write) leaves the market due: tried again once the gate lets it
      const candles = await throughGate(this.query, this.venue, 'failures', async () => {
        return candleRows(this.venue, symbol, await reading(this.venue, 'candles', () => this.venue.exchange.fetchOHLCV(symbol, '1m', since)));
      });
      const rows: Row[] = [];
      for (const [time, open, high, low, close, volume] of candles) {
        if (time! >= closedBefore || time! < since) continue;
        rows.push([symbol, time!, String(open), String(high), String(low), String(close), String(volume ?? '0')]);
      }
      this.noteMissed(symbol, state, rows.filter(([, time]) => !this.stored(state, time)));
      if (rows.length > 0) await this.write('rest', rows, refused);
      // REST answered for every minute before closedBefore (a minute without trades has no candle),
      // unless the answer was a full page (a long gap; a venue's smallest page is 100): the rest next round
      const newest = candles.map(([time]) => time!).filter((time) => time < closedBefore).at(-1);
      const answered = candles.length >= REST_PAGE && newest !== undefined ? Math.min(newest + MINUTE, closedBefore) : closedBefore;
      const got = new Set(rows.map(([, time]) => time));
      for (let minute = Math.max(Math.ceil(since / MINUTE) * MINUTE, closedBefore - GAPS_WITHIN_MS); minute < answered; minute += MINUTE) {
        // one just closed may not be published yet: not known quiet, so a gap check asks again
        if (!got.has(minute) && minute + MINUTE + REST_AFTER_CLOSE_MS <= now) state.quiet.add(minute);
      }
      this.cover(state, answered);
      for (const minute of refused) if (minute < answered) state.refused.delete(minute);
      if (answered < closedBefore) return;
    }
    state.refill = false;
    for (const minute of refused) state.refused.delete(minute);
  }

  async close() {
    this.closed = true;
    for (const wake of this.wakers) wake();
    await Promise.all(this.connections.map((exchange) => exchange.close().catch(() => {})));
    await this.done.catch(() => {});
  }
}

/** The candle feeds of every configured venue: streamed where ccxt pro can, REST alone where not. */
export class CandleFeeds {
  /** the feeds of the venues this process holds (its share of the venue leases) */
  private readonly feeds = new Map<string, CandleFeed>();
  private readonly sql: Sql | null;
  private readonly open: (id: string) => CandleFeed;
  private readonly source: ExchangesSource;
  private readonly query: Query;
  private readonly waitMs: number;
  private readonly logger: Logger | undefined;
  /** per venue: the minutes (starts in ms) and coins written whose index bars are still to be built */
  private pending = new Map<string, { from: number; to: number; coins: Set<number>; since: number }>();
  private readonly finishTimer: NodeJS.Timeout;
  private finishing: Promise<void> | null = null;
  /** minutes finished (market.finish_stream_minutes calls), for tests and logs */
  finished = 0;

  /**
   * database: the candles' writes and index bars on a connection of their own, so that a minute's
   * candles never hold up the live prices written on the holder's (`query`, else theirs too)
   */
  constructor(source: ExchangesSource, options: Omit<CandleFeedOptions, 'baseUrl'>, markets: (venue: string) => Promise<string[]>, query: Query, logger?: Logger, database?: Config['database']) {
    this.sql = database ? createSql(database, { max: 1 }) : null;
    const own = this.sql ? queryOf(this.sql) : query;
    this.source = source;
    this.query = own;
    this.waitMs = options.waitMs;
    this.logger = logger;
    this.open = (id) => new CandleFeed(source, id, { ...options, baseUrl: source.settings.urls?.[id] }, () => markets(id), own, (venue, first, last, coins) => this.written(venue, first, last, coins), logger);
    this.finishTimer = setInterval(() => void (this.finishing ??= this.finish().finally(() => (this.finishing = null))), FINISH_EVERY_MS);
    this.finishTimer.unref();
  }

  private written(venue: string, first: number, last: number, coins: number[]) {
    const pending = this.pending.get(venue);
    // since: real time, so that the wait is bounded even on a clock that stands still (a replay's)
    if (!pending) this.pending.set(venue, { from: first, to: last, coins: new Set(coins), since: Date.now() });
    else {
      pending.from = Math.min(pending.from, first);
      pending.to = Math.max(pending.to, last);
      for (const coin of coins) pending.coins.add(coin);
    }
  }

  /**
   * The minutes written reach the index: once every held market's candle of the newest closed minute
   * is in, or its wait has passed (STREAM_CANDLE_WAIT_SECONDS after the minute's close, or after its first
   * candle here; a candle later still finishes its minute again), the index bars,
   * their delays, the coin state and the data version (market.finish_stream_minutes); older minutes
   * (a REST fill after a gap) at once.
   */
  async finish(): Promise<void> {
    if (this.pending.size === 0) return;
    const now = this.source.now();
    const closedBefore = Math.floor(now / MINUTE) * MINUTE;
    const newest = closedBefore - MINUTE;
    const settled = now - closedBefore >= this.waitMs || [...this.feeds.values()].every((feed) => feed.complete(newest));
    const ready = [...this.pending].filter(([, minutes]) => settled || minutes.to < newest || Date.now() - minutes.since >= this.waitMs);
    if (ready.length === 0) return;
    for (const [venue] of ready) this.pending.delete(venue);
    try {
      await this.query('select * from market.finish_stream_minutes($1::text[], $2::timestamptz[], $3::timestamptz[], $4::int[], $5::timestamptz)', [
        ready.map(([venue]) => venue),
        ready.map(([, minutes]) => new Date(minutes.from).toISOString()),
        ready.map(([, minutes]) => new Date(minutes.to).toISOString()),
        [...new Set(ready.flatMap(([, minutes]) => [...minutes.coins]))],
        new Date(now).toISOString(),
      ]);
      this.finished++;
    } catch (error) {
      // tried again at the next look
      for (const [venue, minutes] of ready) this.written(venue, minutes.from, minutes.to, [...minutes.coins]);
      this.logger?.warn(`stream candles: finishing the minutes failed (${(error as Error).message})`);
    }
  }

  /** Feeds exactly the venues held: one opened for each newly held, closed for each given up. */
  async hold(venues: readonly string[]): Promise<void> {
    const held = new Set(venues);
    const dropped = [...this.feeds.values()].filter((feed) => !held.has(feed.id));
    for (const feed of dropped) this.feeds.delete(feed.id);
    await Promise.all(dropped.map((feed) => feed.close()));
    for (const id of held) if (!this.feeds.has(id)) this.feeds.set(id, this.open(id));
  }

  /** What market.record_venue_candle_markets records: per venue held, its markets streamed and on REST fallback. */
  marketCounts(): Record<string, { streamed: number; fallback: number }> {
    return Object.fromEntries([...this.feeds.values()].map((feed) => [feed.id, {
      streamed: feed.streamingMarkets, fallback: Math.max(feed.candleMarkets - feed.streamingMarkets, 0),
    }]));
  }

  async close() {
    clearInterval(this.finishTimer);
    await this.hold([]);
    await this.finishing?.catch(() => {});
    // what the closed feeds wrote last still reaches the index
    await this.finish().catch(() => {});
    await this.sql?.end({ timeout: 5 });
  }
}
