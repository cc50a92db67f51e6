// A loopback replay of the spot venues' public REST APIs: one HTTP server on 127.0.0.1 serving
// each venue under its own path prefix (/binance/api/v3/klines, /okx/api/v5/market/candles, …) in
// that venue's documented response format, from a deterministic scenario. Point a venue's base URL
// at `baseUrl(venue)` (createVenue's `baseUrl`, or EXCHANGE_URLS) and ccxt talks to it as to the venue.
// Faults (status codes, down, slow, malformed, truncated, cut short; on one path or all) and listings can be changed while it runs.
// Only node:http at run time: the bench and `make venues-replay` use it too.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { VenueId } from '../../src/sources/exchanges/venues.ts';
import { sleep } from '../wait.ts';

export const REPLAY_VENUES = ['binance', 'coinbase', 'kraken', 'okx', 'bybit', 'kucoin', 'gate', 'bitget', 'mexc', 'htx'] as const satisfies readonly VenueId[];

export interface ReplayCoin {
  symbol: string;
  /** USD price the deterministic path oscillates around */
  price: number;
  /** 24h USD volume across all venues and quotes */
  volumeUsd: number;
  /** ms; no candle starts before it */
  firstTradeAt?: number;
  /** amplitude factor of the price path, default 1 (stablecoins: ~0.01) */
  volatility?: number;
}
/** `BASE/QUOTE` in unified coin symbols; ids default to the venue's own naming (kraken XXBTZUSD, okx BTC-USDT, …). */
export interface ReplayMarketSpec {
  symbol: string;
  id?: string;
  baseId?: string;
  quoteId?: string;
}
export interface ReplayVenueSpec {
  markets: Array<string | ReplayMarketSpec>;
  /** relative price bias of the venue, e.g. 0.05 = 5 % above the others */
  bias?: number;
  /** okx only: coin symbols with a USDT-margined perpetual swap (instruments, liquidations) */
  swaps?: string[];
}
export interface ReplayScenario {
  coins: ReplayCoin[];
  venues: Partial<Record<VenueId, ReplayVenueSpec>>;
  /** the clock, default Date.now */
  now?: () => number;
  seed?: number;
  /** USD per unit of fiat quotes, over the fixed defaults (to agree with the FX rates the service reads) */
  fiatUsd?: Record<string, number>;
}
export interface ReplayFault {
  /** answer every request with this status and the venue's error body (429 carries Retry-After) */
  status?: 429 | 418 | 500 | 503;
  retryAfterSeconds?: number;
  /** reset every connection before answering */
  down?: boolean;
  /** answer this late */
  delayMs?: number;
  /** a 200 whose JSON does not parse */
  malformed?: boolean;
  /** a 200 whose body stops half-way: full Content-Length announced, then the connection is cut */
  truncated?: boolean;
  /** a 200 whose JSON stops at this share of its length, delivered as complete (what a proxy that lost its upstream sends) */
  cutAt?: number;
  /** the one path (without the venue prefix, e.g. /api/v3/klines) the fault applies to; default every path */
  path?: string;
}
export interface VenueReplay {
  url: string;
  /** the HTTP server, for a test that serves a venue's WebSocket stream beside its REST answers */
  server: import('node:http').Server;
  baseUrl(venue: VenueId): string;
  /** requests per path (without the venue prefix, without the query) */
  requests(venue: VenueId): Record<string, number>;
  faults: {
    set(venue: VenueId, fault: ReplayFault): void;
    clear(venue?: VenueId): void;
  };
  list(venue: VenueId, market: string | ReplayMarketSpec): void;
  delist(venue: VenueId, symbol: string): void;
  /** the market as served (ids, coin), for tests */
  market(venue: VenueId, symbol: string): ReplayMarket | undefined;
  /** the market of a venue's market id (kraken: also its altname), as the venue's requests name it */
  marketById(venue: VenueId, id: string): ReplayMarket | undefined;
  /** the pricing every answer comes from: expected candles and tickers for tests */
  model: ReplayMarketModel;
  close(): Promise<void>;
}

export interface ReplayMarket {
  venue: VenueId;
  symbol: string;
  coin: ReplayCoin;
  quote: string;
  id: string;
  baseId: string;
  quoteId: string;
  /** share of the coin's USD volume traded on this market */
  share: number;
  bias: number;
}
export interface ReplayCandle {
  t: number;
  o: number;
  h: number;
  l: number;
  c: number;
  /** base volume */
  v: number;
  /** quote volume */
  q: number;
  closed: boolean;
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
const TIMEFRAMES = { '1m': MINUTE, '1h': HOUR, '1d': DAY } as const;
export type Timeframe = keyof typeof TIMEFRAMES;

// ---------- the deterministic market ----------

function hashString(text: string, seed: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
/** uniform [0, 1) from two integers */
function unit(a: number, b: number): number {
  let h = Math.imul(a ^ Math.imul(b | 0, 0x9e3779b1), 0x85ebca6b) ^ Math.floor(b / 4294967296);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

const FIAT_USD: Record<string, number> = { USD: 1, EUR: 1.08, GBP: 1.27, TRY: 0.029, BRL: 0.18, USDT: 1, USDC: 1 };

interface DayStats {
  minute: number;
  v: number;
  q: number;
  h: number;
  l: number;
}

/** The scenario's pricing: every venue's candles and tickers are functions of it. */
export class ReplayMarketModel {
  readonly coins = new Map<string, ReplayCoin>();
  private readonly keys = new Map<string, number>();
  private readonly seed: number;
  private readonly clock: () => number;
  /** per market (the object: a market listed again starts afresh) */
  private readonly stats = new WeakMap<ReplayMarket, DayStats>();
  /** minutes nobody traded, per market: no candle of them on any path, as a venue leaves such a minute out */
  readonly quietMinutes = new WeakMap<ReplayMarket, Set<number>>();
  /** per market: the hash its candles' noise comes from */
  private readonly marketKeys = new WeakMap<ReplayMarket, number>();
  private readonly fiatUsd: Record<string, number>;

  constructor(scenario: ReplayScenario) {
    this.seed = scenario.seed ?? 13;
    this.fiatUsd = { ...FIAT_USD, ...scenario.fiatUsd };
    this.clock = scenario.now ?? Date.now;
    for (const coin of scenario.coins) {
      this.coins.set(coin.symbol, coin);
      this.keys.set(coin.symbol, hashString(coin.symbol, this.seed));
    }
  }

  now(): number {
    return this.clock();
  }

  /** USD price of a coin at t (ms), continuous in t: a daily and a 97-minute wave plus interpolated noise. */
  usdPrice(coin: ReplayCoin, t: number): number {
    const key = this.keys.get(coin.symbol) ?? hashString(coin.symbol, this.seed);
    const x = t / MINUTE;
    const m = Math.floor(x);
    const noise = unit(key, m) + (x - m) * (unit(key, m + 1) - unit(key, m)) - 0.5;
    const phase1 = unit(key, -1) * 2 * Math.PI;
    const phase2 = unit(key, -2) * 2 * Math.PI;
    const wave = 0.02 * Math.sin((2 * Math.PI * x) / 1440 + phase1) + 0.008 * Math.sin((2 * Math.PI * x) / 97 + phase2) + 0.006 * noise;
    return coin.price * (1 + (coin.volatility ?? 1) * wave);
  }

  /** USD value of one unit of a quote: a scenario coin's own price, else fixed fiat/stable rates. */
  quoteUsd(quote: string, t: number): number {
    const coin = this.coins.get(quote);
    if (coin) return this.usdPrice(coin, t);
    return this.fiatUsd[quote] ?? 1;
  }

  price(market: ReplayMarket, t: number): number {
    return (this.usdPrice(market.coin, t) * (1 + market.bias)) / this.quoteUsd(market.quote, t);
  }

  /** First candle start of a timeframe holding trades (the minute at or after firstTradeAt, floored to the timeframe). */
  firstStart(market: ReplayMarket, tf: number): number {
    const first = market.coin.firstTradeAt;
    if (first === undefined) return -Infinity;
    const minute = Math.ceil(first / MINUTE) * MINUTE;
    return Math.floor(minute / tf) * tf;
  }

  /** One minute: open at the minute's price, close at its end (or now, for the open minute), extremes beyond both. */
  minute(market: ReplayMarket, start: number, now = this.now()): ReplayCandle | null {
    if (start < this.firstStart(market, MINUTE) || start > now || this.quietMinutes.get(market)?.has(start)) return null;
    const fraction = Math.min(1, (now - start) / MINUTE);
    const key = this.marketKey(market);
    const m = start / MINUTE;
    const o = this.price(market, start);
    const c = this.price(market, start + fraction * MINUTE);
    const h = Math.max(o, c) * (1 + 0.0015 * unit(key, m * 3 + 1) * fraction);
    const l = Math.min(o, c) * (1 - 0.0015 * unit(key, m * 3 + 2) * fraction);
    const usd = ((market.coin.volumeUsd * market.share) / 1440) * (0.5 + unit(key, m * 3 + 3)) * fraction;
    const v = usd / ((this.usdPrice(market.coin, start) * (1 + market.bias)) || 1);
    return { t: start, o, h, l, c, v, q: (v * (o + c)) / 2, closed: fraction >= 1 };
  }

  /** A candle of any timeframe: the aggregate of its minutes (so 1h/1d agree exactly with 1m). */
  candle(market: ReplayMarket, timeframe: Timeframe, start: number, now = this.now()): ReplayCandle | null {
    const tf = TIMEFRAMES[timeframe];
    if (tf === MINUTE) return this.minute(market, start, now);
    let result: ReplayCandle | null = null;
    for (let t = Math.max(start, this.firstStart(market, MINUTE)); t < start + tf && t <= now; t += MINUTE) {
      const one = this.minute(market, t, now);
      if (!one) continue;
      if (!result) result = { ...one, t: start };
      else {
        result.h = Math.max(result.h, one.h);
        result.l = Math.min(result.l, one.l);
        result.c = one.c;
        result.v += one.v;
        result.q += one.q;
      }
    }
    if (result) result.closed = start + tf <= now;
    return result;
  }

  /**
   * Candles with start in [from, to] (ms, inclusive), at most `limit`, taken from the `from` end or
   * the `to` end (as each venue pages), ascending.
   */
  range(market: ReplayMarket, timeframe: Timeframe, opts: { from?: number; to?: number; limit: number; anchor: 'from' | 'to' }): ReplayCandle[] {
    const tf = TIMEFRAMES[timeframe];
    const now = this.now();
    const first = Math.max(Math.ceil((opts.from ?? -Infinity) / tf) * tf, this.firstStart(market, tf));
    const last = Math.min(Math.floor((opts.to ?? Infinity) / tf) * tf, Math.floor(now / tf) * tf);
    if (!(first <= last) || opts.limit <= 0) return [];
    const starts: number[] = [];
    if (opts.anchor === 'from' && Number.isFinite(first)) {
      for (let t = first; t <= last && starts.length < opts.limit; t += tf) starts.push(t);
    } else {
      for (let t = last; t >= first && starts.length < opts.limit; t -= tf) starts.unshift(t);
    }
    return starts.map((t) => this.candle(market, timeframe, t, now)).filter((c): c is ReplayCandle => c !== null);
  }

  /**
   * Last price and the rolling 24 h statistics the venues' tickers carry. The closed minutes' sums
   * are kept per market and moved along minute by minute (a full recount only when the clock jumps or
   * the window's extreme leaves it): at thousands of markets a venue's ticker list stays cheap.
   */
  ticker(market: ReplayMarket): { last: number; open24h: number; high: number; low: number; v: number; q: number; ts: number } | null {
    const now = this.now();
    const current = Math.floor(now / MINUTE) * MINUTE;
    const live = this.minute(market, current, now);
    if (!live) return null;
    const closed = this.closedDay(market, current, now);
    const openStart = Math.max(current - 1439 * MINUTE, this.firstStart(market, MINUTE));
    return {
      last: live.c,
      open24h: this.price(market, openStart),
      high: Math.max(closed.h, live.h),
      low: Math.min(closed.l, live.l),
      v: closed.v + live.v,
      q: closed.q + live.q,
      ts: now,
    };
  }

  /** The 1439 closed minutes before `current`: volumes summed, extremes. */
  private closedDay(market: ReplayMarket, current: number, now: number): DayStats {
    const known = this.stats.get(market);
    if (known && known.minute === current) return known;
    const steps = known ? (current - known.minute) / MINUTE : Infinity;
    if (known && steps > 0 && steps <= 60) {
      const next = { ...known, minute: current };
      let recount = false;
      for (let t = known.minute - 1439 * MINUTE; t < current - 1439 * MINUTE; t += MINUTE) {
        const gone = this.minute(market, t, now);
        if (!gone) continue;
        next.v -= gone.v;
        next.q -= gone.q;
        // the window's high or low leaves it: count again
        if (gone.h >= known.h || gone.l <= known.l) recount = true;
      }
      for (let t = known.minute; t < current; t += MINUTE) {
        const added = this.minute(market, t, now);
        if (!added) continue;
        next.v += added.v;
        next.q += added.q;
        next.h = Math.max(next.h, added.h);
        next.l = Math.min(next.l, added.l);
      }
      if (!recount) {
        this.stats.set(market, next);
        return next;
      }
    }
    // the full count: minute() of each closed minute, spelled out on the coins' price series (shared by their markets)
    const day: DayStats = { minute: current, v: 0, q: 0, h: -Infinity, l: Infinity };
    const from = current - 1439 * MINUTE;
    const coin = this.series(market.coin, current);
    const quoteCoin = this.coins.get(market.quote);
    const quote = quoteCoin ? this.series(quoteCoin, current) : null;
    const fiat = this.fiatUsd[market.quote] ?? 1;
    const key = this.marketKey(market);
    const first = this.firstStart(market, MINUTE);
    const volume = (market.coin.volumeUsd * market.share) / 1440;
    for (let i = 0; i < 1439; i++) {
      const t = from + i * MINUTE;
      if (t < first) continue;
      const m = t / MINUTE;
      const o = (coin[i]! * (1 + market.bias)) / (quote ? quote[i]! : fiat);
      const c = (coin[i + 1]! * (1 + market.bias)) / (quote ? quote[i + 1]! : fiat);
      const v = (volume * (0.5 + unit(key, m * 3 + 3))) / ((coin[i]! * (1 + market.bias)) || 1);
      day.v += v;
      day.q += (v * (o + c)) / 2;
      day.h = Math.max(day.h, Math.max(o, c) * (1 + 0.0015 * unit(key, m * 3 + 1)));
      day.l = Math.min(day.l, Math.min(o, c) * (1 - 0.0015 * unit(key, m * 3 + 2)));
    }
    this.stats.set(market, day);
    return day;
  }

  private seriesMinute = NaN;
  private readonly seriesByCoin = new Map<string, Float64Array>();
  /** A coin's USD price at the 1441 minute starts of the day before `current` (its last: `current`). */
  private series(coin: ReplayCoin, current: number): Float64Array {
    if (this.seriesMinute !== current) {
      this.seriesByCoin.clear();
      this.seriesMinute = current;
    }
    let prices = this.seriesByCoin.get(coin.symbol);
    if (!prices) {
      prices = new Float64Array(1441);
      for (let i = 0; i <= 1440; i++) prices[i] = this.usdPrice(coin, current - 1439 * MINUTE + i * MINUTE);
      this.seriesByCoin.set(coin.symbol, prices);
    }
    return prices;
  }

  private marketKey(market: ReplayMarket): number {
    let key = this.marketKeys.get(market);
    if (key === undefined) {
      key = (this.keys.get(market.coin.symbol) ?? 0) ^ hashString(market.venue + market.quote, this.seed);
      this.marketKeys.set(market, key);
    }
    return key;
  }

  /** OKX liquidation orders of a swap underlying: about one every 3 minutes, deterministic, the last 7 days. */
  liquidations(coin: ReplayCoin, from: number, to: number): Array<{ ts: number; bkPx: number; sz: number; side: 'buy' | 'sell'; posSide: 'long' | 'short' }> {
    const key = (this.keys.get(coin.symbol) ?? 0) ^ 0x5a5a;
    const out = [];
    for (let m = Math.floor(from / MINUTE); m * MINUTE <= to; m++) {
      if (unit(key, m) > 0.33) continue;
      const ts = m * MINUTE + Math.floor(unit(key, m + 0.5) * (MINUTE - 1));
      if (ts < from || ts > to || ts < (coin.firstTradeAt ?? -Infinity)) continue;
      const long = unit(key, -m) < 0.5;
      out.push({
        ts,
        bkPx: this.usdPrice(coin, ts) * (long ? 0.998 : 1.002),
        sz: 1 + Math.floor(unit(key, m * 7) * 200),
        // a liquidated long is closed by a sell
        side: long ? ('sell' as const) : ('buy' as const),
        posSide: long ? ('long' as const) : ('short' as const),
      });
    }
    return out;
  }
}

// ---------- venue naming ----------

const KRAKEN_LEGACY: Record<string, string> = {
  BTC: 'XXBT', ETH: 'XETH', LTC: 'XLTC', XRP: 'XXRP', XLM: 'XXLM', DOGE: 'XXDG', ETC: 'XETC', XMR: 'XXMR', ZEC: 'XZEC', MLN: 'XMLN', REP: 'XREP',
  USD: 'ZUSD', EUR: 'ZEUR', GBP: 'ZGBP', JPY: 'ZJPY', CAD: 'ZCAD', AUD: 'ZAUD',
};
/** Kraken's altname of an asset: legacy X-prefixed crypto drop the X (XXBT → XBT); Z-fiat keep it, as Kraken lists them. */
function krakenAltname(assetId: string): string {
  if (/^X[A-Z]{3}$/.test(assetId)) return assetId.slice(1);
  return assetId;
}
function krakenPairAltname(assetId: string): string {
  return /^[XZ][A-Z]{3}$/.test(assetId) ? assetId.slice(1) : assetId;
}

function venueIds(venue: VenueId, base: string, quote: string): { id: string; baseId: string; quoteId: string } {
  switch (venue) {
    case 'binance':
    case 'bybit':
    case 'bitget':
      return { id: base + quote, baseId: base, quoteId: quote };
    case 'gate':
      return { id: `${base}_${quote}`, baseId: base, quoteId: quote };
    case 'mexc':
      return { id: base + quote, baseId: base, quoteId: quote };
    case 'htx':
      return { id: (base + quote).toLowerCase(), baseId: base.toLowerCase(), quoteId: quote.toLowerCase() };
    case 'kraken': {
      const baseId = KRAKEN_LEGACY[base] ?? base;
      const quoteId = KRAKEN_LEGACY[quote] ?? quote;
      const legacy = baseId !== base && quoteId !== quote;
      return { id: legacy ? baseId + quoteId : krakenPairAltname(baseId) + krakenPairAltname(quoteId), baseId, quoteId };
    }
    default:
      return { id: `${base}-${quote}`, baseId: base, quoteId: quote };
  }
}

// ---------- the server ----------

class ReplayError extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown) {
    super('replay error');
    this.status = status;
    this.body = body;
  }
}

type Query = URLSearchParams;
/** a price or volume as the venues write it: a decimal string of about 8 significant digits, never an exponent (a sat-priced coin in BTC is 0.00000017…) */
export const num = (value: number): string => {
  if (!Number.isFinite(value)) return '0';
  const digits = Math.max(2, 8 - Math.floor(Math.log10(Math.abs(value) || 1)));
  const text = Number(value.toFixed(Math.min(12, digits))).toString();
  return text.includes('e') ? value.toFixed(Math.min(20, digits)).replace(/\.?0+$/, '') : text;
};
const int = (value: string | null): number | undefined => (value === null || value === '' ? undefined : Number(value));

/** A fixed answer served at an exact path beside the venues (the recorded ECB and CoinPaprika answers of `make venues-replay`). */
export interface ReplayFile {
  contentType: string;
  /** the body, or what makes it at each request (a list that moves with the clock) */
  body: string | (() => string);
}

export async function startVenueReplay(scenario: ReplayScenario, options: { port?: number; files?: Record<string, ReplayFile> } = {}): Promise<VenueReplay> {
  const model = new ReplayMarketModel(scenario);
  const markets = new Map<VenueId, Map<string, ReplayMarket>>();
  const listingsPerCoin = new Map<string, number>();
  const faults = new Map<VenueId, ReplayFault>();
  const counts = new Map<VenueId, Record<string, number>>();

  const resolve = (venue: VenueId, spec: string | ReplayMarketSpec): ReplayMarket => {
    const { symbol, ...ids } = typeof spec === 'string' ? { symbol: spec } : spec;
    const [base = '', quote = ''] = symbol.split('/');
    const coin = model.coins.get(base);
    if (!coin) throw new Error(`replay: ${venue} lists ${symbol} but the scenario has no coin ${base}`);
    const named = venueIds(venue, base, quote);
    return { venue, symbol, coin, quote, id: ids.id ?? named.id, baseId: ids.baseId ?? named.baseId, quoteId: ids.quoteId ?? named.quoteId, share: 0, bias: scenario.venues[venue]?.bias ?? 0 };
  };
  // Volume is shared evenly among a coin's listings (fixed at start, so shares stay put when markets come and go).
  for (const venue of REPLAY_VENUES) {
    const table = new Map<string, ReplayMarket>();
    for (const spec of scenario.venues[venue]?.markets ?? []) {
      const market = resolve(venue, spec);
      table.set(market.symbol, market);
      listingsPerCoin.set(market.coin.symbol, (listingsPerCoin.get(market.coin.symbol) ?? 0) + 1);
    }
    markets.set(venue, table);
  }
  const shareOf = (market: ReplayMarket) => (market.share = 1 / Math.max(1, listingsPerCoin.get(market.coin.symbol) ?? 1));
  for (const table of markets.values()) for (const market of table.values()) shareOf(market);

  const listed = (venue: VenueId) => [...(markets.get(venue)?.values() ?? [])];
  // each venue's markets by id (kraken's also by altname), rebuilt after a listing changes: thousands of candle requests a minute look them up
  const idIndex = new Map<VenueId, Map<string, ReplayMarket>>();
  const byId = (venue: VenueId, id: string | null): ReplayMarket | undefined => {
    let index = idIndex.get(venue);
    if (!index) {
      index = new Map();
      for (const m of listed(venue)) if (!index.has(m.id)) index.set(m.id, m);
      if (venue === 'kraken') {
        for (const m of listed(venue)) {
          const altname = krakenPairAltname(m.baseId) + krakenPairAltname(m.quoteId);
          if (!index.has(altname)) index.set(altname, m);
        }
      }
      idIndex.set(venue, index);
    }
    return id === null ? undefined : index.get(id);
  };
  const swaps = () => (scenario.venues.okx?.swaps ?? []).map((symbol) => model.coins.get(symbol)).filter((c): c is ReplayCoin => !!c);
  const swapMarket = (coin: ReplayCoin): ReplayMarket => ({ venue: 'okx', symbol: `${coin.symbol}/USDT:USDT`, coin, quote: 'USDT', id: `${coin.symbol}-USDT-SWAP`, baseId: coin.symbol, quoteId: 'USDT', share: 0, bias: scenario.venues.okx?.bias ?? 0 });

  /** Binance's (and MEXC's) 24 h ticker: one object for a `symbol`, else the list; an unknown symbol is a 400. */
  const oneOrAll = (rows: unknown[], wanted: string | null): unknown => {
    if (!wanted) return rows;
    if (!rows[0]) throw new ReplayError(400, { code: -1121, msg: 'Invalid symbol.' });
    return rows[0];
  };

  const handlers: Record<VenueId, (path: string, q: Query) => unknown> = {
    binance: (path, q) => binance(path, q),
    coinbase: (path, q) => coinbase(path, q),
    kraken: (path, q) => kraken(path, q),
    okx: (path, q) => okx(path, q),
    bybit: (path, q) => bybit(path, q),
    kucoin: (path, q) => kucoin(path, q),
    gate: (path, q) => gate(path, q),
    bitget: (path, q) => bitget(path, q),
    mexc: (path, q) => mexc(path, q),
    htx: (path, q) => htx(path, q),
  };

  // --- Binance spot, https://api.binance.com/api/v3 ---
  function binance(path: string, q: Query): unknown {
    const intervals: Record<string, Timeframe> = { '1m': '1m', '1h': '1h', '1d': '1d' };
    if (path === '/api/v3/exchangeInfo') {
      return {
        timezone: 'UTC',
        serverTime: model.now(),
        rateLimits: [{ rateLimitType: 'REQUEST_WEIGHT', interval: 'MINUTE', intervalNum: 1, limit: 6000 }],
        exchangeFilters: [],
        symbols: listed('binance').map((m) => ({
          symbol: m.id, status: 'TRADING', baseAsset: m.baseId, baseAssetPrecision: 8, quoteAsset: m.quoteId, quotePrecision: 8, quoteAssetPrecision: 8,
          orderTypes: ['LIMIT', 'LIMIT_MAKER', 'MARKET'], icebergAllowed: true, ocoAllowed: true, isSpotTradingAllowed: true, isMarginTradingAllowed: false,
          filters: [
            { filterType: 'PRICE_FILTER', minPrice: '0.00000001', maxPrice: '1000000.00000000', tickSize: '0.00000001' },
            { filterType: 'LOT_SIZE', minQty: '0.00000001', maxQty: '9000000.00000000', stepSize: '0.00000001' },
          ],
          permissions: [], permissionSets: [['SPOT']], defaultSelfTradePreventionMode: 'EXPIRE_MAKER',
        })),
      };
    }
    if (path === '/api/v3/ticker/24hr') {
      const wanted = q.get('symbol') ?? null;
      const rows = listed('binance').filter((m) => !wanted || m.id === wanted).flatMap((m) => {
        const t = model.ticker(m);
        if (!t) return [];
        return [{
          symbol: m.id, priceChange: num(t.last - t.open24h), priceChangePercent: ((t.last / t.open24h - 1) * 100).toFixed(3), weightedAvgPrice: num(t.q / (t.v || 1)),
          prevClosePrice: num(t.open24h), lastPrice: num(t.last), lastQty: '0.01000000', bidPrice: num(t.last * 0.99975), bidQty: '1.00000000', askPrice: num(t.last * 1.00025), askQty: '1.00000000',
          openPrice: num(t.open24h), highPrice: num(t.high), lowPrice: num(t.low), volume: num(t.v), quoteVolume: num(t.q), openTime: t.ts - DAY, closeTime: t.ts, firstId: 1, lastId: 1000, count: 1000,
        }];
      });
      return oneOrAll(rows, wanted);
    }
    if (path === '/api/v3/klines') {
      const market = byId('binance', q.get('symbol'));
      if (!market) throw new ReplayError(400, { code: -1121, msg: 'Invalid symbol.' });
      const timeframe = intervals[q.get('interval') ?? ''];
      if (!timeframe) throw new ReplayError(400, { code: -1120, msg: 'Invalid interval.' });
      const limit = Math.min(int(q.get('limit')) ?? 500, 1000);
      const from = int(q.get('startTime'));
      const candles = model.range(market, timeframe, { from, to: int(q.get('endTime')), limit, anchor: from !== undefined ? 'from' : 'to' });
      return candles.map((c) => [c.t, num(c.o), num(c.h), num(c.l), num(c.c), num(c.v), c.t + TIMEFRAMES[timeframe] - 1, num(c.q), 100, num(c.v / 2), num(c.q / 2), '0']);
    }
    throw new ReplayError(404, { code: -1, msg: 'replay: unknown endpoint' });
  }

  // --- Coinbase Advanced Trade public market data, https://api.coinbase.com/api/v3/brokerage/market ---
  function coinbase(path: string, q: Query): unknown {
    const granularities: Record<string, Timeframe> = { ONE_MINUTE: '1m', ONE_HOUR: '1h', ONE_DAY: '1d' };
    if (path === '/api/v3/brokerage/market/products') {
      // ccxt also asks for FUTURE products; a spot-only replay has none
      if (q.get('product_type') && q.get('product_type') !== 'SPOT') return { products: [], num_products: 0 };
      const products = listed('coinbase').map((m) => {
        const t = model.ticker(m);
        return {
          product_id: m.id, price: t ? num(t.last) : '', price_percentage_change_24h: t ? ((t.last / t.open24h - 1) * 100).toFixed(8) : '',
          volume_24h: t ? num(t.v) : '0', volume_percentage_change_24h: '0', approximate_quote_24h_volume: t ? num(t.q) : '0',
          base_increment: '0.00000001', quote_increment: '0.01', price_increment: '0.00000001', quote_min_size: '1', quote_max_size: '150000000', base_min_size: '0.00000001', base_max_size: '3400',
          base_name: m.coin.symbol, quote_name: m.quote, watched: false, is_disabled: false, new: false, status: 'online', cancel_only: false, limit_only: false, post_only: false,
          trading_disabled: false, auction_mode: false, product_type: 'SPOT', quote_currency_id: m.quoteId, base_currency_id: m.baseId, mid_market_price: '',
          alias: '', alias_to: [], base_display_symbol: m.baseId, quote_display_symbol: m.quoteId, view_only: false, display_name: `${m.baseId}-${m.quoteId}`, product_venue: 'CBE',
        };
      });
      return { products, num_products: products.length };
    }
    const candles = /^\/api\/v3\/brokerage\/market\/products\/([^/]+)\/candles$/.exec(path);
    if (candles) {
      const market = byId('coinbase', decodeURIComponent(candles[1] ?? ''));
      if (!market) throw new ReplayError(404, { error: 'NOT_FOUND', error_details: 'product not found', message: 'product not found' });
      const timeframe = granularities[q.get('granularity') ?? ''];
      if (!timeframe) throw new ReplayError(400, { error: 'INVALID_ARGUMENT', error_details: 'invalid granularity', message: 'invalid granularity' });
      const tf = TIMEFRAMES[timeframe];
      const end = (int(q.get('end')) ?? model.now() / 1000) * 1000;
      const start = (int(q.get('start')) ?? end / 1000 - 300 * (tf / 1000)) * 1000;
      // Coinbase refuses ranges of more than 350 candles rather than cutting them
      if ((end - start) / tf > 350) throw new ReplayError(400, { error: 'INVALID_ARGUMENT', error_details: 'number of candles requested should be less than 350', message: 'number of candles requested should be less than 350' });
      const rows = model.range(market, timeframe, { from: start, to: end, limit: 351, anchor: 'to' });
      return { candles: rows.reverse().map((c) => ({ start: String(c.t / 1000), low: num(c.l), high: num(c.h), open: num(c.o), close: num(c.c), volume: num(c.v) })) };
    }
    throw new ReplayError(404, { error: 'NOT_FOUND', error_details: 'replay: unknown endpoint', message: 'replay: unknown endpoint' });
  }

  // --- Kraken spot REST, https://api.kraken.com/0/public ---
  function kraken(path: string, q: Query): unknown {
    const ok = (result: unknown) => ({ error: [], result });
    if (path === '/0/public/Assets') {
      const assets: Record<string, unknown> = {};
      for (const m of listed('kraken')) {
        for (const id of [m.baseId, m.quoteId]) assets[id] = { aclass: 'currency', altname: krakenAltname(id), decimals: 10, display_decimals: 5, collateral_value: 1, status: 'enabled' };
      }
      return ok(assets);
    }
    if (path === '/0/public/AssetPairs') {
      const pairs: Record<string, unknown> = {};
      for (const m of listed('kraken')) {
        const alt = krakenPairAltname(m.baseId) + krakenPairAltname(m.quoteId);
        pairs[m.id] = {
          altname: alt, wsname: `${krakenPairAltname(m.baseId)}/${krakenPairAltname(m.quoteId)}`, aclass_base: 'currency', base: m.baseId, aclass_quote: 'currency', quote: m.quoteId,
          lot: 'unit', cost_decimals: 5, pair_decimals: 5, lot_decimals: 8, lot_multiplier: 1, leverage_buy: [], leverage_sell: [],
          fees: [[0, 0.4], [10000, 0.35]], fees_maker: [[0, 0.25], [10000, 0.2]], fee_volume_currency: 'ZUSD', margin_call: 80, margin_stop: 40,
          ordermin: '0.0001', costmin: '0.5', tick_size: '0.00001', status: 'online',
        };
      }
      return ok(pairs);
    }
    if (path === '/0/public/Ticker') {
      const wanted = q.get('pair') ? new Set(q.get('pair')!.split(',').map((id) => byId('kraken', id))) : null;
      const result: Record<string, unknown> = {};
      for (const m of listed('kraken')) {
        if (wanted && !wanted.has(m)) continue;
        const t = model.ticker(m);
        if (!t) continue;
        result[m.id] = {
          a: [num(t.last * 1.00025), '1', '1.000'], b: [num(t.last * 0.99975), '1', '1.000'], c: [num(t.last), '0.01000000'],
          v: [num(t.v / 2), num(t.v)], p: [num(t.q / (t.v || 1)), num(t.q / (t.v || 1))], t: [500, 1000], l: [num(t.low), num(t.low)], h: [num(t.high), num(t.high)], o: num(t.open24h),
        };
      }
      if (wanted && Object.keys(result).length === 0) return { error: ['EQuery:Unknown asset pair'] };
      return ok(result);
    }
    if (path === '/0/public/OHLC') {
      const market = byId('kraken', q.get('pair'));
      if (!market) return { error: ['EQuery:Unknown asset pair'] };
      const intervals: Record<string, Timeframe> = { '1': '1m', '60': '1h', '1440': '1d' };
      const timeframe = intervals[q.get('interval') ?? '1'];
      if (!timeframe) return { error: ['EGeneral:Invalid arguments'] };
      const tf = TIMEFRAMES[timeframe];
      // Kraken keeps only the most recent 720 entries of each interval; `since` (seconds) is exclusive
      const since = int(q.get('since'));
      const recent = Math.floor(model.now() / tf) * tf - 719 * tf;
      const from = Math.max(recent, since !== undefined ? since * 1000 + 1 : -Infinity);
      const rows = model.range(market, timeframe, { from, limit: 720, anchor: 'to' });
      const committed = rows.filter((c) => c.closed);
      return ok({
        [market.id]: rows.map((c) => [c.t / 1000, num(c.o), num(c.h), num(c.l), num(c.c), num(c.q / (c.v || 1)), num(c.v), 10]),
        last: (committed.at(-1)?.t ?? recent) / 1000,
      });
    }
    return { error: ['EGeneral:Unknown method'] };
  }

  // --- OKX v5, https://www.okx.com/api/v5 ---
  function okx(path: string, q: Query): unknown {
    const ok = (data: unknown[]) => ({ code: '0', msg: '', data });
    const bars: Record<string, Timeframe> = { '1m': '1m', '1H': '1h', '1Dutc': '1d', '1D': '1d' };
    if (path === '/api/v5/public/instruments') {
      const type = q.get('instType');
      if (type === 'SPOT') {
        return ok(listed('okx').map((m) => ({
          instType: 'SPOT', instId: m.id, uly: '', instFamily: '', baseCcy: m.baseId, quoteCcy: m.quoteId, settleCcy: '', ctVal: '', ctMult: '', ctValCcy: '',
          optType: '', stk: '', listTime: String(m.coin.firstTradeAt ?? 1600000000000), expTime: '', lever: '10', tickSz: '0.00000001', lotSz: '0.00000001', minSz: '0.00001',
          ctType: '', alias: '', state: 'live', maxLmtSz: '9999999999', maxMktSz: '1000000', maxTwapSz: '', maxIcebergSz: '', maxTriggerSz: '', maxStopSz: '',
        })));
      }
      if (type === 'SWAP') {
        return ok(swaps().map((coin) => ({
          instType: 'SWAP', instId: `${coin.symbol}-USDT-SWAP`, uly: `${coin.symbol}-USDT`, instFamily: `${coin.symbol}-USDT`, baseCcy: '', quoteCcy: '', settleCcy: 'USDT',
          ctVal: contractValue(coin), ctMult: '1', ctValCcy: coin.symbol, optType: '', stk: '', listTime: String(coin.firstTradeAt ?? 1600000000000), expTime: '', lever: '100',
          tickSz: '0.1', lotSz: '1', minSz: '1', ctType: 'linear', alias: '', state: 'live', maxLmtSz: '100000', maxMktSz: '3000',
        })));
      }
      return ok([]);
    }
    if (path === '/api/v5/market/tickers') {
      if (q.get('instType') !== 'SPOT') return ok([]);
      return ok(listed('okx').flatMap((m) => {
        const t = model.ticker(m);
        if (!t) return [];
        return [{
          instType: 'SPOT', instId: m.id, last: num(t.last), lastSz: '0.01', askPx: num(t.last * 1.00025), askSz: '1', bidPx: num(t.last * 0.99975), bidSz: '1',
          open24h: num(t.open24h), high24h: num(t.high), low24h: num(t.low), volCcy24h: num(t.q), vol24h: num(t.v), ts: String(t.ts), sodUtc0: num(t.open24h), sodUtc8: num(t.open24h),
        }];
      }));
    }
    if (path === '/api/v5/market/candles' || path === '/api/v5/market/history-candles') {
      const market = byId('okx', q.get('instId'));
      if (!market) return { code: '51001', msg: "Instrument ID doesn't exist", data: [] };
      const timeframe = bars[q.get('bar') ?? '1m'];
      if (!timeframe) return { code: '51000', msg: 'Parameter bar error', data: [] };
      const tf = TIMEFRAMES[timeframe];
      const limit = Math.min(int(q.get('limit')) ?? 100, 300);
      // `after`: older than (exclusive), `before`: newer than (exclusive); newest first.
      // market/candles only reaches back 1440 bars; history-candles reaches the first trade
      const after = int(q.get('after'));
      const before = int(q.get('before'));
      const recentOnly = path === '/api/v5/market/candles' ? Math.floor(model.now() / tf) * tf - 1439 * tf : -Infinity;
      const rows = model.range(market, timeframe, { from: Math.max(recentOnly, before !== undefined ? before + 1 : -Infinity), to: after !== undefined ? after - 1 : undefined, limit, anchor: 'to' });
      return ok(rows.reverse().map((c) => [String(c.t), num(c.o), num(c.h), num(c.l), num(c.c), num(c.v), num(c.q), num(c.q), c.closed ? '1' : '0']));
    }
    if (path === '/api/v5/public/liquidation-orders') {
      if (q.get('instType') !== 'SWAP') return { code: '51000', msg: 'Parameter instType error', data: [] };
      const family = q.get('uly') ?? q.get('instFamily');
      const coin = swaps().find((c) => `${c.symbol}-USDT` === family);
      if (!coin) return { code: '51001', msg: "Instrument ID doesn't exist", data: [] };
      const now = model.now();
      const limit = Math.min(int(q.get('limit')) ?? 100, 100);
      const after = int(q.get('after'));
      const before = int(q.get('before'));
      const rows = model.liquidations(coin, Math.max(now - 7 * DAY, before !== undefined ? before + 1 : -Infinity), Math.min(now, after !== undefined ? after - 1 : Infinity));
      const details = rows.reverse().slice(0, limit).map((l) => ({ bkLoss: '0', bkPx: num(l.bkPx), ccy: '', posSide: l.posSide, side: l.side, sz: String(l.sz), ts: String(l.ts) }));
      return ok([{ details, instFamily: family, instId: `${coin.symbol}-USDT-SWAP`, instType: 'SWAP', totalLoss: '0', uly: family }]);
    }
    return { code: '50030', msg: 'replay: unknown endpoint', data: [] };
  }

  // --- Bybit v5, https://api.bybit.com/v5/market ---
  function bybit(path: string, q: Query): unknown {
    const ok = (result: unknown) => ({ retCode: 0, retMsg: 'OK', result, retExtInfo: {}, time: model.now() });
    const intervals: Record<string, Timeframe> = { '1': '1m', '60': '1h', D: '1d' };
    if (q.get('category') !== 'spot' && path.startsWith('/v5/market/')) return ok({ category: q.get('category'), list: [] });
    if (path === '/v5/market/instruments-info') {
      return ok({
        category: 'spot', nextPageCursor: '',
        list: listed('bybit').map((m) => ({
          symbol: m.id, baseCoin: m.baseId, quoteCoin: m.quoteId, innovation: '0', status: 'Trading', marginTrading: 'none', stTag: '0',
          lotSizeFilter: { basePrecision: '0.000001', quotePrecision: '0.00000001', minOrderQty: '0.000048', maxOrderQty: '71.73956243', minOrderAmt: '1', maxOrderAmt: '2000000' },
          priceFilter: { tickSize: '0.00000001' }, riskParameters: { priceLimitRatioX: '0.01', priceLimitRatioY: '0.02' },
        })),
      });
    }
    if (path === '/v5/market/tickers') {
      return ok({
        category: 'spot',
        list: listed('bybit').filter((m) => !q.get('symbol') || m.id === q.get('symbol')).flatMap((m) => {
          const t = model.ticker(m);
          if (!t) return [];
          return [{
            symbol: m.id, bid1Price: num(t.last * 0.99975), bid1Size: '1', ask1Price: num(t.last * 1.00025), ask1Size: '1', lastPrice: num(t.last), prevPrice24h: num(t.open24h),
            price24hPcnt: (t.last / t.open24h - 1).toFixed(4), highPrice24h: num(t.high), lowPrice24h: num(t.low), turnover24h: num(t.q), volume24h: num(t.v), usdIndexPrice: '',
          }];
        }),
      });
    }
    if (path === '/v5/market/kline') {
      const market = byId('bybit', q.get('symbol'));
      if (!market) return { retCode: 10001, retMsg: 'Not supported symbols', result: {}, retExtInfo: {}, time: model.now() };
      const timeframe = intervals[q.get('interval') ?? ''];
      if (!timeframe) return { retCode: 10001, retMsg: 'Invalid period!', result: {}, retExtInfo: {}, time: model.now() };
      const limit = Math.min(int(q.get('limit')) ?? 200, 1000);
      const start = int(q.get('start'));
      const end = int(q.get('end'));
      const rows = model.range(market, timeframe, { from: start, to: end, limit, anchor: start !== undefined && end === undefined ? 'from' : 'to' });
      return ok({ category: 'spot', symbol: market.id, list: rows.reverse().map((c) => [String(c.t), num(c.o), num(c.h), num(c.l), num(c.c), num(c.v), num(c.q)]) });
    }
    return { retCode: 10001, retMsg: 'replay: unknown endpoint', result: {}, retExtInfo: {}, time: model.now() };
  }

  // --- KuCoin spot, https://api.kucoin.com/api/v1|v2 ---
  function kucoin(path: string, q: Query): unknown {
    const ok = (data: unknown) => ({ code: '200000', data });
    const types: Record<string, Timeframe> = { '1min': '1m', '1hour': '1h', '1day': '1d' };
    if (path === '/api/v2/symbols') {
      return ok(listed('kucoin').map((m) => ({
        symbol: m.id, name: m.id, baseCurrency: m.baseId, quoteCurrency: m.quoteId, feeCurrency: m.quoteId, market: m.quote === 'BTC' ? 'BTC' : 'USDS',
        baseMinSize: '0.00001', quoteMinSize: '0.1', baseMaxSize: '10000000000', quoteMaxSize: '99999999', baseIncrement: '0.00000001', quoteIncrement: '0.000001',
        priceIncrement: '0.00000001', priceLimitRate: '0.1', minFunds: '0.1', isMarginEnabled: false, enableTrading: true, feeCategory: 1, makerFeeCoefficient: '1.00', takerFeeCoefficient: '1.00', st: false,
      })));
    }
    if (path === '/api/v1/market/allTickers') {
      return ok({
        time: model.now(),
        ticker: listed('kucoin').flatMap((m) => {
          const t = model.ticker(m);
          if (!t) return [];
          return [{
            symbol: m.id, symbolName: m.id, buy: num(t.last * 0.99975), bestBidSize: '1', sell: num(t.last * 1.00025), bestAskSize: '1', changeRate: (t.last / t.open24h - 1).toFixed(4),
            changePrice: num(t.last - t.open24h), high: num(t.high), low: num(t.low), vol: num(t.v), volValue: num(t.q), last: num(t.last), averagePrice: num(t.open24h),
            takerFeeRate: '0.001', makerFeeRate: '0.001', takerCoefficient: '1', makerCoefficient: '1',
          }];
        }),
      });
    }
    if (path === '/api/v1/market/candles') {
      const market = byId('kucoin', q.get('symbol'));
      if (!market) return { code: '400100', msg: 'This pair is not provided at present' };
      const timeframe = types[q.get('type') ?? ''];
      if (!timeframe) return { code: '400100', msg: 'Unsupported type' };
      const startAt = int(q.get('startAt'));
      const endAt = int(q.get('endAt'));
      // [startAt, endAt) in seconds, at most 1500 of the newest, newest first; [time, open, close, high, low, volume, turnover]
      const rows = model.range(market, timeframe, { from: startAt ? startAt * 1000 : undefined, to: endAt ? endAt * 1000 - 1 : undefined, limit: 1500, anchor: 'to' });
      return ok(rows.reverse().map((c) => [String(c.t / 1000), num(c.o), num(c.c), num(c.h), num(c.l), num(c.v), num(c.q)]));
    }
    if (path === '/api/v1/bullet-public') {
      // the token handshake (POST) of its public WebSocket stream: the endpoint is the replay's own (dev/venues/streams.ts)
      return ok({
        token: 'replay-public-token',
        instanceServers: [{ endpoint: `${url.replace(/^http/, 'ws')}/kucoin/ws-api-spot/`, encrypt: false, protocol: 'websocket', pingInterval: 18000, pingTimeout: 10000 }],
      });
    }
    return { code: '404000', msg: 'replay: unknown endpoint' };
  }

  // --- MEXC spot v3, https://api.mexc.com/api/v3 (Binance-like); contracts at /api/v1/contract ---
  function mexc(path: string, q: Query): unknown {
    const intervals: Record<string, Timeframe> = { '1m': '1m', '60m': '1h', '1d': '1d' };
    // ccxt reads the contract list beside the spot one whatever its `types`: a spot-only replay lists none
    if (path === '/api/v1/contract/detail') return { success: true, code: 0, data: [] };
    if (path === '/api/v3/exchangeInfo') {
      return {
        timezone: 'CST',
        serverTime: model.now(),
        rateLimits: [],
        exchangeFilters: [],
        symbols: listed('mexc').map((m) => ({
          symbol: m.id, status: '1', baseAsset: m.baseId, baseAssetPrecision: 8, quoteAsset: m.quoteId, quotePrecision: 8, quoteAssetPrecision: 8,
          baseCommissionPrecision: 8, quoteCommissionPrecision: 8, orderTypes: ['LIMIT', 'MARKET', 'LIMIT_MAKER'], isSpotTradingAllowed: true, isMarginTradingAllowed: false,
          quoteAmountPrecision: '1', baseSizePrecision: '0', permissions: ['SPOT'], filters: [], maxQuoteAmount: '2000000', makerCommission: '0', takerCommission: '0.0005',
          quoteAmountPrecisionMarket: '1', maxQuoteAmountMarket: '100000', fullName: m.coin.symbol, tradeSideType: 1,
        })),
      };
    }
    if (path === '/api/v3/ticker/24hr') {
      const wanted = q.get('symbol') ?? null;
      const rows = listed('mexc').filter((m) => !wanted || m.id === wanted).flatMap((m) => {
        const t = model.ticker(m);
        if (!t) return [];
        return [{
          symbol: m.id, priceChange: num(t.last - t.open24h), priceChangePercent: (t.last / t.open24h - 1).toFixed(4), prevClosePrice: num(t.open24h), lastPrice: num(t.last),
          bidPrice: num(t.last * 0.99975), bidQty: '1', askPrice: num(t.last * 1.00025), askQty: '1', openPrice: num(t.open24h), highPrice: num(t.high), lowPrice: num(t.low),
          volume: num(t.v), quoteVolume: num(t.q), openTime: t.ts - DAY, closeTime: t.ts, count: null,
        }];
      });
      return oneOrAll(rows, wanted);
    }
    if (path === '/api/v3/klines') {
      const market = byId('mexc', q.get('symbol'));
      if (!market) throw new ReplayError(400, { code: -1121, msg: 'Invalid symbol.' });
      const timeframe = intervals[q.get('interval') ?? ''];
      if (!timeframe) throw new ReplayError(400, { code: -1121, msg: 'Invalid interval.' });
      const limit = Math.min(int(q.get('limit')) ?? 500, 500);
      const from = int(q.get('startTime'));
      const endTime = int(q.get('endTime'));
      // endTime is exclusive; [open time, open, high, low, close, volume, close time, quote volume]
      const candles = model.range(market, timeframe, { from, to: endTime !== undefined ? endTime - 1 : undefined, limit, anchor: from !== undefined ? 'from' : 'to' });
      return candles.map((c) => [c.t, num(c.o), num(c.h), num(c.l), num(c.c), num(c.v), c.t + TIMEFRAMES[timeframe], num(c.q)]);
    }
    throw new ReplayError(404, { code: 404, msg: 'replay: unknown endpoint' });
  }

  // --- HTX spot, https://api.huobi.pro (market data under /market, symbols under /v1/common) ---
  function htx(path: string, q: Query): unknown {
    const ok = (data: unknown, extra: Record<string, unknown> = {}) => ({ status: 'ok', ...extra, ts: model.now(), data });
    const failed = (code: string, message: string) => ({ status: 'error', 'err-code': code, 'err-msg': message, data: null });
    const periods: Record<string, Timeframe> = { '1min': '1m', '60min': '1h', '1day': '1d' };
    if (path === '/v1/common/symbols') {
      return ok(listed('htx').map((m) => ({
        'base-currency': m.baseId, 'quote-currency': m.quoteId, 'price-precision': 8, 'amount-precision': 6, 'symbol-partition': 'main', symbol: m.id, state: 'online',
        'value-precision': 8, 'min-order-amt': 0.0001, 'max-order-amt': 1000, 'min-order-value': 5, 'limit-order-min-order-amt': 0.0001, 'limit-order-max-order-amt': 1000,
        'sell-market-min-order-amt': 0.0001, 'sell-market-max-order-amt': 100, 'buy-market-max-order-value': 1000000, 'leverage-ratio': 1, 'api-trading': 'enabled', tags: '',
      })));
    }
    if (path === '/market/tickers') {
      return ok(listed('htx').flatMap((m) => {
        const t = model.ticker(m);
        if (!t) return [];
        return [{
          symbol: m.id, open: num(t.open24h), high: num(t.high), low: num(t.low), close: num(t.last), amount: num(t.v), vol: num(t.q), count: 1000,
          bid: num(t.last * 0.99975), bidSize: 1, ask: num(t.last * 1.00025), askSize: 1,
        }];
      }));
    }
    if (path === '/market/history/candles' || path === '/market/history/kline') {
      const market = byId('htx', q.get('symbol'));
      if (!market) return failed('invalid-parameter', 'invalid symbol');
      const timeframe = periods[q.get('period') ?? ''];
      if (!timeframe) return failed('invalid-parameter', 'invalid period');
      const size = Math.min(int(q.get('size')) ?? 150, path === '/market/history/kline' ? 2000 : 1000);
      // `from` and `to` in seconds, inclusive; the kline endpoint only answers the newest; newest first
      const from = path === '/market/history/candles' ? int(q.get('from')) : undefined;
      const to = path === '/market/history/candles' ? int(q.get('to')) : undefined;
      const rows = model.range(market, timeframe, { from: from !== undefined ? from * 1000 : undefined, to: to !== undefined ? to * 1000 : undefined, limit: size, anchor: from !== undefined ? 'from' : 'to' });
      return ok(rows.reverse().map((c) => ({ id: c.t / 1000, open: num(c.o), close: num(c.c), low: num(c.l), high: num(c.h), amount: num(c.v), vol: num(c.q), count: 100 })), { ch: `market.${market.id}.kline.${q.get('period')}` });
    }
    return failed('invalid-parameter', 'replay: unknown endpoint');
  }

  // --- Gate API v4 spot, https://api.gateio.ws/api/v4 ---
  function gate(path: string, q: Query): unknown {
    const intervals: Record<string, Timeframe> = { '1m': '1m', '1h': '1h', '1d': '1d' };
    if (path === '/api/v4/spot/currency_pairs') {
      return listed('gate').map((m) => ({
        id: m.id, base: m.baseId, base_name: m.coin.symbol, quote: m.quoteId, quote_name: m.quote, fee: '0.2', min_base_amount: '0.0001', min_quote_amount: '3', max_quote_amount: '5000000',
        amount_precision: 6, precision: 8, trade_status: 'tradable', sell_start: Math.floor((m.coin.firstTradeAt ?? 1600000000000) / 1000), buy_start: Math.floor((m.coin.firstTradeAt ?? 1600000000000) / 1000),
        delisting_time: 0, type: 'normal', trade_url: `https://www.gate.com/trade/${m.id}`, st_tag: false,
      }));
    }
    // ccxt merges margin pairs into the spot ones; a spot-only replay lends on none
    if (path === '/api/v4/margin/currency_pairs') return [];
    if (path === '/api/v4/spot/tickers') {
      const wanted = q.get('currency_pair');
      return listed('gate').filter((m) => !wanted || m.id === wanted).flatMap((m) => {
        const t = model.ticker(m);
        if (!t) return [];
        return [{
          currency_pair: m.id, last: num(t.last), lowest_ask: num(t.last * 1.00025), lowest_size: '1', highest_bid: num(t.last * 0.99975), highest_size: '1',
          change_percentage: ((t.last / t.open24h - 1) * 100).toFixed(2), base_volume: num(t.v), quote_volume: num(t.q), high_24h: num(t.high), low_24h: num(t.low),
        }];
      });
    }
    if (path === '/api/v4/spot/candlesticks') {
      const market = byId('gate', q.get('currency_pair'));
      if (!market) throw new ReplayError(400, { label: 'INVALID_CURRENCY_PAIR', message: `Invalid currency pair ${q.get('currency_pair')}` });
      const timeframe = intervals[q.get('interval') ?? '30m'];
      if (!timeframe) throw new ReplayError(400, { label: 'INVALID_PARAM_VALUE', message: 'invalid argument: interval' });
      const tf = TIMEFRAMES[timeframe];
      // `from`/`to` in seconds, from the candle holding `from` to the one holding `to`, or the newest
      // `limit`; never more than 1000 points (ccxt asks from + (limit - 1) intervals for `limit` candles)
      const fromSeconds = int(q.get('from'));
      const from = fromSeconds !== undefined ? Math.floor((fromSeconds * 1000) / tf) * (tf / 1000) : undefined;
      const to = int(q.get('to'));
      if (from !== undefined && ((to ?? model.now() / 1000) - from) * 1000 / tf >= 1000) {
        throw new ReplayError(400, { label: 'INVALID_PARAM_VALUE', message: 'Candlestick range too broad. Maximum 1000 data points are allowed per request' });
      }
      const limit = Math.min(int(q.get('limit')) ?? 100, 1000);
      const rows = model.range(market, timeframe, {
        from: from !== undefined ? from * 1000 : undefined, to: to !== undefined ? to * 1000 : undefined, limit: from !== undefined ? 1000 : limit, anchor: from !== undefined ? 'from' : 'to',
      });
      // [time (s), quote volume, close, high, low, open, base volume, window closed], oldest first
      return rows.map((c) => [String(c.t / 1000), num(c.q), num(c.c), num(c.h), num(c.l), num(c.o), num(c.v), String(c.closed)]);
    }
    throw new ReplayError(404, { label: 'NOT_FOUND', message: 'replay: unknown endpoint' });
  }

  // --- Bitget v2 spot, https://api.bitget.com/api/v2 ---
  function bitget(path: string, q: Query): unknown {
    const ok = (data: unknown) => ({ code: '00000', msg: 'success', requestTime: model.now(), data });
    const granularities: Record<string, Timeframe> = { '1min': '1m', '1h': '1h', '1Dutc': '1d', '1day': '1d' };
    const refuse = (code: string, msg: string) => new ReplayError(400, { code, msg, requestTime: model.now(), data: null });
    if (path === '/api/v2/spot/public/symbols') {
      return ok(listed('bitget').map((m) => ({
        symbol: m.id, baseCoin: m.baseId, quoteCoin: m.quoteId, minTradeAmount: '0', maxTradeAmount: '10000000000', takerFeeRate: '0.001', makerFeeRate: '0.001',
        pricePrecision: '8', quantityPrecision: '6', quotePrecision: '8', status: 'online', minTradeUSDT: '1', buyLimitPriceRatio: '0.05', sellLimitPriceRatio: '0.05',
        areaSymbol: 'no', orderQuantity: '200', openTime: String(m.coin.firstTradeAt ?? 1532454360000), offTime: '',
      })));
    }
    // ccxt reads which pairs lend on margin beside the symbols; a spot-only replay lends on none
    if (path === '/api/v2/margin/currencies') return ok([]);
    if (path === '/api/v2/spot/market/tickers') {
      const wanted = q.get('symbol');
      return ok(listed('bitget').filter((m) => !wanted || m.id === wanted).flatMap((m) => {
        const t = model.ticker(m);
        if (!t) return [];
        return [{
          symbol: m.id, high24h: num(t.high), open: num(t.open24h), low24h: num(t.low), lastPr: num(t.last), quoteVolume: num(t.q), baseVolume: num(t.v), usdtVolume: num(t.q),
          bidPr: num(t.last * 0.99975), askPr: num(t.last * 1.00025), bidSz: '1', askSz: '1', openUtc: num(t.open24h), ts: String(t.ts), changeUtc24h: (t.last / t.open24h - 1).toFixed(5), change24h: (t.last / t.open24h - 1).toFixed(5),
        }];
      }));
    }
    if (path === '/api/v2/spot/market/candles' || path === '/api/v2/spot/market/history-candles') {
      const market = byId('bitget', q.get('symbol'));
      if (!market) throw refuse('40034', 'Parameter symbol does not exist');
      const timeframe = granularities[q.get('granularity') ?? ''];
      if (!timeframe) throw refuse('400172', 'Parameter verification failed');
      const history = path.endsWith('/history-candles');
      const limit = Math.min(int(q.get('limit')) ?? 100, history ? 200 : 1000);
      // both align on endTime (the newest `limit` up to it); only the recent one takes a startTime
      const start = history ? undefined : int(q.get('startTime'));
      const end = int(q.get('endTime'));
      const rows = model.range(market, timeframe, { from: start, to: end, limit, anchor: 'to' });
      // [time (ms), open, high, low, close, base volume, USDT volume, quote volume], oldest first
      return ok(rows.map((c) => [String(c.t), num(c.o), num(c.h), num(c.l), num(c.c), num(c.v), num(c.q), num(c.q)]));
    }
    throw new ReplayError(404, { code: '404', msg: 'replay: unknown endpoint', requestTime: model.now(), data: null });
  }

  function errorBody(venue: VenueId, status: number): unknown {
    const tooMany = status === 429 || status === 418;
    switch (venue) {
      case 'binance':
        return status === 418
          ? { code: -1003, msg: 'Way too much request weight used; IP banned until ' + (model.now() + 120_000) + '.' }
          : tooMany ? { code: -1003, msg: 'Too much request weight used; current limit is 6000 request weight per 1 MINUTE.' } : { code: -1001, msg: 'Internal error; unable to process your request. Please try again.' };
      case 'coinbase':
        return { error: tooMany ? 'rate_limit_exceeded' : 'INTERNAL', error_details: tooMany ? 'Too many requests' : 'internal error', message: tooMany ? 'Too many requests' : 'internal error' };
      case 'kraken':
        return { error: [tooMany ? 'EGeneral:Too many requests' : 'EService:Unavailable'] };
      case 'okx':
        return { code: tooMany ? '50011' : '50001', msg: tooMany ? 'Too Many Requests' : 'Service temporarily unavailable. Please try again later.', data: [] };
      case 'bybit':
        return { retCode: tooMany ? 10006 : 10016, retMsg: tooMany ? 'Too many visits!' : 'Server error', result: {}, retExtInfo: {}, time: model.now() };
      case 'kucoin':
        return { code: tooMany ? '429000' : '500000', msg: tooMany ? 'Too Many Requests' : 'Internal Server Error' };
      case 'gate':
        return { label: tooMany ? 'TOO_MANY_REQUESTS' : 'SERVER_ERROR', message: tooMany ? 'Request Rate limit Exceeded' : 'Internal server error' };
      case 'bitget':
        return { code: tooMany ? '429' : '40015', msg: tooMany ? 'Too Many Requests' : 'System is abnormal, please try again later', requestTime: model.now(), data: null };
      case 'mexc':
        // the codes of MEXC's spot v3 error table
        return tooMany ? { code: 429, msg: 'Too many requests' } : status === 503 ? { code: 503, msg: 'service not available, please try again' } : { code: 500, msg: 'Internal error' };
      case 'htx':
        return { status: 'error', 'err-code': tooMany ? 'too-many-request' : 'base-system-error', 'err-msg': tooMany ? 'Too many requests' : 'System error', data: null };
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://replay');
    const file = options.files?.[url.pathname];
    if (file) {
      const body = typeof file.body === 'string' ? file.body : file.body();
      res.writeHead(200, { 'content-type': file.contentType, 'content-length': String(Buffer.byteLength(body)) }).end(body);
      return;
    }
    const [, prefix = '', ...rest] = url.pathname.split('/');
    if (!(REPLAY_VENUES as readonly string[]).includes(prefix)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `replay: no venue "${prefix}"` }));
      return;
    }
    const venue = prefix as VenueId;
    const path = '/' + rest.join('/');
    const tally = counts.get(venue) ?? {};
    tally[path] = (tally[path] ?? 0) + 1;
    counts.set(venue, tally);

    const set = faults.get(venue);
    const fault = set && (!set.path || set.path === path) ? set : {};
    if (fault.down) {
      req.socket.destroy();
      return;
    }
    if (fault.delayMs) await sleep(fault.delayMs);
    if (res.destroyed) return;
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      let body = JSON.stringify(payload);
      if (status === 200 && fault.malformed) body = body.slice(0, body.length >> 1) + '",,}<html>' + body.slice(body.length >> 1);
      if (status === 200 && fault.cutAt !== undefined) body = body.slice(0, Math.floor(body.length * fault.cutAt));
      const head = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers };
      if (status === 200 && fault.truncated) {
        // announce the whole body, send half of it, then cut the connection
        res.writeHead(200, head);
        res.write(body.slice(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
        return;
      }
      res.writeHead(status, head).end(body);
    };
    if (fault.status) {
      const headers: Record<string, string> = fault.status === 429 || fault.status === 418 ? { 'retry-after': String(fault.retryAfterSeconds ?? 1) } : {};
      send(fault.status, errorBody(venue, fault.status), headers);
      return;
    }
    try {
      send(200, handlers[venue](path, url.searchParams));
    } catch (error) {
      if (error instanceof ReplayError) send(error.status, error.body);
      else send(500, errorBody(venue, 500));
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  // keep-alive sockets would hold close() open
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    server,
    baseUrl: (venue) => `${url}/${venue}`,
    requests: (venue) => ({ ...(counts.get(venue) ?? {}) }),
    faults: {
      set: (venue, fault) => void faults.set(venue, { ...fault }),
      clear: (venue) => (venue ? void faults.delete(venue) : faults.clear()),
    },
    list(venue, spec) {
      const market = resolve(venue, spec);
      market.share = 1 / Math.max(1, listingsPerCoin.get(market.coin.symbol) ?? 1);
      markets.get(venue)?.set(market.symbol, market);
      idIndex.delete(venue);
    },
    delist(venue, symbol) {
      markets.get(venue)?.delete(symbol);
      idIndex.delete(venue);
    },
    market: (venue, symbol) => markets.get(venue)?.get(symbol),
    marketById: (venue, id) => byId(venue, id),
    model,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** OKX linear swap contract value in the base coin: OKX's own for BTC and ETH, else about 10 USD rounded to a power of ten. */
function contractValue(coin: ReplayCoin): string {
  const known: Record<string, string> = { BTC: '0.01', ETH: '0.1' };
  if (known[coin.symbol]) return known[coin.symbol]!;
  const exponent = Math.round(Math.log10(10 / coin.price));
  return exponent >= 0 ? String(10 ** exponent) : (10 ** exponent).toFixed(-exponent);
}
export { contractValue as okxContractValue };

// ---------- a big scenario for the bench and manual runs ----------

const MAJORS = [
  ['BTC', 60000], ['ETH', 3000], ['USDT', 1], ['BNB', 580], ['SOL', 150], ['USDC', 1], ['XRP', 0.6], ['DOGE', 0.15], ['TRX', 0.12], ['ADA', 0.45],
  ['AVAX', 30], ['SHIB', 0.00002], ['LINK', 14], ['DOT', 6], ['BCH', 400], ['LTC', 75], ['NEAR', 5], ['MATIC', 0.6], ['UNI', 8], ['XLM', 0.1],
  ['ATOM', 7], ['ETC', 25], ['XMR', 160], ['FIL', 5], ['APT', 8], ['ARB', 0.9], ['OP', 2], ['INJ', 25], ['AAVE', 95], ['MKR', 2500],
  ['DAI', 1], ['ALGO', 0.15], ['GRT', 0.2], ['SAND', 0.4], ['MANA', 0.4], ['AXS', 6], ['EOS', 0.7], ['XTZ', 0.9], ['ZEC', 25], ['PEPE', 0.00001],
] as const;
const STABLES = new Set(['USDT', 'USDC', 'DAI']);
/** Per venue: share of the ranked coins listed, and the quotes with the probability a listed coin has each. */
const VENUE_PROFILE: Record<VenueId, { share: number; quotes: Array<[string, number]> }> = {
  binance: { share: 0.85, quotes: [['USDT', 1], ['USDC', 0.4], ['BTC', 0.3], ['EUR', 0.1]] },
  coinbase: { share: 0.5, quotes: [['USD', 1], ['USDT', 0.2], ['EUR', 0.15], ['BTC', 0.1]] },
  kraken: { share: 0.45, quotes: [['USD', 1], ['EUR', 0.6], ['USDT', 0.15], ['BTC', 0.1]] },
  okx: { share: 0.65, quotes: [['USDT', 1], ['USDC', 0.3], ['BTC', 0.2], ['EUR', 0.05]] },
  bybit: { share: 0.7, quotes: [['USDT', 1], ['USDC', 0.3], ['BTC', 0.1], ['EUR', 0.05]] },
  kucoin: { share: 0.9, quotes: [['USDT', 1], ['USDC', 0.2], ['BTC', 0.3]] },
  gate: { share: 0.95, quotes: [['USDT', 1], ['USDC', 0.15], ['BTC', 0.2], ['ETH', 0.05]] },
  bitget: { share: 0.8, quotes: [['USDT', 1], ['USDC', 0.25], ['BTC', 0.05], ['EUR', 0.05]] },
  mexc: { share: 0.95, quotes: [['USDT', 1], ['USDC', 0.3], ['BTC', 0.05], ['EUR', 0.03]] },
  htx: { share: 0.6, quotes: [['USDT', 1], ['BTC', 0.3], ['USDC', 0.15]] },
};

/** Up to this many coins a scenario is the compact one above (the tests', the bench's and the default replay's); beyond it the venues take their real proportions. */
export const COMPACT_COINS = 300;
/** The size REAL_SIZE describes; other sizes scale every venue's list with the coin count. */
export const REAL_SIZE_COINS = 2500;
/**
 * The venues' spot lists at real size (REAL_SIZE_COINS coins): how many base assets each lists, how
 * far down the ranks it reaches (`depth`: 0 = strictly the best-ranked, 8 = almost any), and the
 * chance a listed base has each quote. Markets ≈ bases × Σ chances, aimed at the sizes of the venues'
 * public spot lists in 2025 as issue 45 gives them (gate ~2 300, mexc ~2 000, binance ~1 400, kucoin
 * ~1 200, bitget ~900, kraken, htx and okx ~700, bybit and coinbase ~600; not measured again here).
 * The quote mixes follow the venues' own: binance's TRY, BRL and BNB books, kraken's and coinbase's
 * USD and EUR, the others mostly USDT. TRY, BRL, GBP and BNB are quotes that alone make no coin
 * (COIN_QUOTES); a few made-up coins trade only in them. `markets` is the figure aimed at (the tests' bands).
 */
export const REAL_SIZE: Record<VenueId, { markets: number; bases: number; depth: number; quotes: Array<[string, number]> }> = {
  gate: { markets: 2300, bases: 2035, depth: 8, quotes: [['USDT', 1], ['USDC', 0.05], ['BTC', 0.04], ['ETH', 0.03], ['TRY', 0.01]] },
  mexc: { markets: 2000, bases: 1852, depth: 8, quotes: [['USDT', 1], ['USDC', 0.06], ['BTC', 0.01], ['EUR', 0.01]] },
  binance: { markets: 1400, bases: 490, depth: 1.5, quotes: [['USDT', 1], ['USDC', 0.55], ['BTC', 0.45], ['TRY', 0.35], ['EUR', 0.15], ['ETH', 0.15], ['BRL', 0.1], ['BNB', 0.1]] },
  kucoin: { markets: 1200, bases: 876, depth: 4, quotes: [['USDT', 1], ['USDC', 0.1], ['BTC', 0.2], ['ETH', 0.05], ['TRY', 0.02]] },
  bitget: { markets: 900, bases: 776, depth: 4, quotes: [['USDT', 1], ['USDC', 0.1], ['BTC', 0.02], ['EUR', 0.03], ['BRL', 0.01]] },
  kraken: { markets: 700, bases: 323, depth: 1.5, quotes: [['USD', 1], ['EUR', 0.85], ['USDT', 0.1], ['USDC', 0.05], ['BTC', 0.08], ['GBP', 0.05], ['ETH', 0.04]] },
  htx: { markets: 700, bases: 560, depth: 3, quotes: [['USDT', 1], ['BTC', 0.15], ['ETH', 0.05], ['USDC', 0.05]] },
  okx: { markets: 700, bases: 360, depth: 2, quotes: [['USDT', 1], ['USDC', 0.6], ['BTC', 0.15], ['EUR', 0.1], ['ETH', 0.05], ['TRY', 0.05]] },
  bybit: { markets: 600, bases: 460, depth: 2.5, quotes: [['USDT', 1], ['USDC', 0.2], ['BTC', 0.03], ['EUR', 0.05], ['BRL', 0.02]] },
  coinbase: { markets: 600, bases: 260, depth: 1.5, quotes: [['USD', 1], ['USDT', 0.3], ['EUR', 0.35], ['GBP', 0.2], ['BTC', 0.25], ['USDC', 0.2]] },
};

/**
 * Codes a made-up ticker never takes: every quote, and the currency codes ccxt (4.5) renames on one
 * of the ten venues (its commonCurrencies: XBT, GTC, FLUX …), so a made-up coin has one unified symbol everywhere.
 */
const NOT_A_TICKER = new Set([
  'USD', 'EUR', 'GBP', 'JPY', 'CAD', 'AUD', 'TRY', 'BRL', 'USDT', 'USDC', 'DAI', 'BTC', 'ETH', 'BNB', 'FDUSD',
  '88MPH', 'AE', 'ALT', 'APX', 'ASS', 'AXIS', 'BCC', 'BCHSV', 'BIFI', 'BOX', 'BYN', 'CGLD', 'COFI', 'DEGEN', 'DFI', 'DFT', 'DRK', 'EGC', 'EGG', 'EVA',
  'FEE', 'FLUX', 'FLUX1', 'FREE', 'FUD', 'GAS', 'GASNEO', 'GET', 'GMT', 'GTC', 'HERO', 'HIT', 'JADE', 'KALT', 'LUNA', 'LUNA2', 'MIMO', 'MM', 'MPH',
  'NGL', 'OMNI', 'ORT', 'PNT', 'POINT', 'PROS', 'RAI', 'REP', 'REPV2', 'SBTC', 'SIN', 'SOUL', 'STEPN', 'TNC', 'TONCOIN', 'TRAC', 'UST', 'VAI', 'WAX',
  'YOYO',
]);
const CONSONANTS = 'BCDFGHJKLMNPRSTVWY';
const VOWELS = 'AEIOU';

/**
 * `count` made-up tickers that look like real ones: 2–6 upper-case letters, now and then a digit
 * (3 in 100), never starting with X or Z (Kraken's legacy asset prefixes, which ccxt strips), never
 * a code of `reserved`, a quote or a code ccxt renames; distinct and deterministic for a seed.
 */
export function madeUpTickers(count: number, seed: number, reserved: Iterable<string> = [], stream = 'ticker'): string[] {
  const taken = new Set([...reserved, ...NOT_A_TICKER, ...MAJORS.map(([symbol]) => symbol)]);
  const key = hashString(stream, seed);
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) {
    const draw = (n: number) => unit(key, i * 16 + n);
    const r = draw(0);
    const length = r < 0.03 ? 2 : r < 0.38 ? 3 : r < 0.78 ? 4 : r < 0.95 ? 5 : 6;
    let ticker = '';
    let vowel = false;
    for (let k = 0; k < length; k++) {
      // mostly consonant–vowel alternation, now and then two consonants (real tickers are abbreviations), never two vowels
      vowel = !vowel && (k % 2 === 1 ? draw(k + 1) < 0.75 : draw(k + 1) < 0.15);
      const pool = vowel ? VOWELS : k === 0 ? CONSONANTS.replace(/[XZ]/g, '') : CONSONANTS + 'XZ';
      ticker += pool[Math.floor(draw(k + 8) * pool.length)];
    }
    if (draw(15) < 0.03) ticker = ticker.slice(0, Math.max(2, length - 1)) + String(1 + Math.floor(draw(14) * 9));
    if (taken.has(ticker)) continue;
    taken.add(ticker);
    out.push(ticker);
  }
  return out;
}

/**
 * A realistic big scenario: `coins` symbols ranked by volume (real majors first, then the given
 * `symbols`, then C041, C042, … up to COMPACT_COINS coins, or made-up tickers beyond: madeUpTickers,
 * avoiding `reserved`), each venue listing a rank-weighted share of them in several quotes;
 * deterministic for a seed. Up to COMPACT_COINS coins every venue lists a large share (VENUE_PROFILE);
 * beyond, each venue lists its real-size share (REAL_SIZE, scaled with the count) and every coin is
 * listed somewhere.
 */
export function makeScenario(
  options: { coins?: number; venues?: readonly VenueId[]; symbols?: readonly string[]; reserved?: Iterable<string>; prices?: Readonly<Record<string, number>>; seed?: number; now?: () => number } = {},
): ReplayScenario {
  const count = options.coins ?? 300;
  const seed = options.seed ?? 13;
  const venues = options.venues ?? REPLAY_VENUES;
  const now = (options.now ?? Date.now)();
  const compact = count <= COMPACT_COINS;
  const given = options.symbols?.slice(0, count) ?? [];
  const madeUp = compact ? [] : madeUpTickers(count, seed, [...given, ...(options.reserved ?? [])]);
  const coins: ReplayCoin[] = [];
  for (let rank = 0; rank < count; rank++) {
    const symbol = options.symbols?.[rank] ?? MAJORS[rank]?.[0] ?? (compact ? `C${String(rank + 1).padStart(3, '0')}` : madeUp[rank - given.length]!);
    // a real major keeps its own price whatever its rank; others take the given price or a made-up one
    const major = MAJORS.find(([known]) => known === symbol);
    const key = hashString(symbol, seed);
    const price = STABLES.has(symbol) ? 1 : (major?.[1] ?? options.prices?.[symbol] ?? 10 ** (unit(key, 1) * 5 - 3));
    const ageDays = rank < 10 ? 3000 : 30 + Math.floor(unit(key, 2) * 2500);
    coins.push({
      symbol, price, volumeUsd: 3e10 / Math.pow(rank + 1, 1.1), volatility: STABLES.has(symbol) ? 0.01 : 1,
      firstTradeAt: Math.floor((now - ageDays * DAY) / DAY) * DAY,
    });
  }
  const markets = compact ? compactMarkets(coins, venues, seed) : realSizeMarkets(coins, venues, seed, given.length);
  const specs: ReplayScenario['venues'] = {};
  for (const venue of venues) {
    specs[venue] = { markets: markets[venue]!, bias: (unit(hashString(venue, seed), 9) - 0.5) * 0.002, ...(venue === 'okx' ? { swaps: coins.slice(0, 50).filter((c) => !STABLES.has(c.symbol)).map((c) => c.symbol) } : {}) };
  }
  return { coins, venues: specs, seed, ...(options.now ? { now: options.now } : {}) };
}

/**
 * Whether ccxt reads the venue's code of this asset as the code itself: on Kraken a 4-letter or longer
 * code starting with X or Z loses that letter (its legacy asset prefixes) and LUNA is Terra Classic (LUNC).
 * A real-size venue does not list what it would name otherwise (the other venues' renames, e.g. MEXC's
 * GMT, are the catalogue's `venue_symbols` business and stay).
 */
const keepsItsCode = (venue: VenueId, symbol: string) => venue !== 'kraken' || !(/^[XZ][A-Z0-9]{3,}$/.test(symbol) || symbol === 'LUNA');

/** A market of `coin` in `quote`, unless it would be the coin against itself or one stablecoin against another. */
const tradable = (coin: ReplayCoin, quote: string) => quote !== coin.symbol && !(STABLES.has(coin.symbol) && STABLES.has(quote));

function compactMarkets(coins: ReplayCoin[], venues: readonly VenueId[], seed: number): Partial<Record<VenueId, string[]>> {
  const count = coins.length;
  const out: Partial<Record<VenueId, string[]>> = {};
  for (const venue of venues) {
    const profile = VENUE_PROFILE[venue];
    const markets: string[] = [];
    coins.forEach((coin, rank) => {
      const key = hashString(venue + coin.symbol, seed);
      // higher-ranked coins are listed more often
      if (rank >= 10 && unit(key, 0) > profile.share * (1.3 - (0.6 * rank) / count)) return;
      profile.quotes.forEach(([quote, chance], i) => {
        if (!tradable(coin, quote)) return;
        if (i === 0 || unit(key, i + 1) < chance * (rank < 100 ? 1 : 0.5)) markets.push(`${coin.symbol}/${quote}`);
      });
    });
    out[venue] = markets;
  }
  return out;
}

/** Quotes that make a venue's base a coin of the service (issue 45: USD or a USD stablecoin, EUR, BTC, ETH); TRY, BRL, GBP and BNB alone do not. */
export const COIN_QUOTES = new Set(['USD', 'USDT', 'USDC', 'DAI', 'EUR', 'BTC', 'ETH']);
/** Positions among the made-up coins of those binance trades only in TRY and BRL, and nobody else trades. */
const UNCONVERTED_ONLY = [17, 517, 1019];

function realSizeMarkets(coins: ReplayCoin[], venues: readonly VenueId[], seed: number, madeUpFrom: number): Partial<Record<VenueId, string[]>> {
  const scale = coins.length / REAL_SIZE_COINS;
  const listings = new Map<string, number>();
  const out: Partial<Record<VenueId, string[]>> = {};
  for (const venue of venues) {
    const profile = REAL_SIZE[venue];
    // the top ten everywhere, then the best scores: the rank's logarithm blurred by the venue's depth
    const chosen = coins
      .map((coin, rank) => ({ coin, rank, score: rank < 10 ? -1 : Math.log(rank + 1) + profile.depth * unit(hashString(venue + coin.symbol, seed), 0) }))
      .sort((a, b) => a.score - b.score || a.rank - b.rank)
      .slice(0, Math.min(coins.length, Math.round(profile.bases * scale)))
      .sort((a, b) => a.rank - b.rank);
    const markets: string[] = [];
    for (const { coin } of chosen) {
      if (!keepsItsCode(venue, coin.symbol)) continue;
      const key = hashString(venue + coin.symbol, seed);
      // the venue's main quote, or its first the coin can trade in (USDT itself: USD, EUR, TRY …), then the others by chance
      let main = true;
      profile.quotes.forEach(([quote, chance], i) => {
        if (!tradable(coin, quote)) return;
        if (main || unit(key, i + 1) < chance) markets.push(`${coin.symbol}/${quote}`);
        main = false;
      });
      listings.set(coin.symbol, (listings.get(coin.symbol) ?? 0) + 1);
    }
    out[venue] = markets;
  }
  // a coin no venue picked is one of the long tail that only the broadest venues (gate, mexc) list
  const broad = (['gate', 'mexc'] as const).filter((venue) => out[venue]);
  if (broad.length) {
    for (const coin of coins) {
      if (listings.has(coin.symbol)) continue;
      const venue = broad[Math.floor(unit(hashString(coin.symbol, seed), 7) * broad.length)]!;
      out[venue]!.push(`${coin.symbol}/${STABLES.has(coin.symbol) ? 'USD' : 'USDT'}`);
    }
  }
  // a few made-up coins only in quotes that make no coin: the service's quote filter has to leave them out
  if (out.binance) {
    for (const coin of UNCONVERTED_ONLY.map((i) => coins[madeUpFrom + i]).filter((c): c is ReplayCoin => !!c)) {
      for (const venue of venues) out[venue] = out[venue]!.filter((market) => !market.startsWith(`${coin.symbol}/`));
      out.binance.push(`${coin.symbol}/TRY`, `${coin.symbol}/BRL`);
    }
  }
  return out;
}
