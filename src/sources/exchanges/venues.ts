// The spot venues the exchange source reads, as configured ccxt instances: public data only
// (no keys), ccxt's own rate limiter on, spot markets only (OKX also swaps, for contract sizes
// and liquidations), and an optional base URL standing in for the venue's hosts (a mirror, a
// proxy, a testnet or the loopback replay server of the tests).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Exchange } from 'ccxt';

let library: typeof import('ccxt') | undefined;
/**
 * ccxt, loaded when first needed rather than with the service: its hundred-odd exchanges take most
 * of a second of CPU to load, which the API, the CLI and every test file would pay at start without
 * reading a venue. Required as the ES module it is, so that it is the very instance an
 * `import('ccxt')` elsewhere gets (its error classes are the same classes).
 */
export function ccxtLibrary(): typeof import('ccxt') {
  return (library ??= createRequire(import.meta.url)(fileURLToPath(import.meta.resolve('ccxt'))) as typeof import('ccxt'));
}

export const VENUE_IDS = ['binance', 'coinbase', 'kraken', 'okx', 'bybit', 'kucoin', 'gate', 'bitget', 'mexc', 'htx'] as const;
export type VenueId = (typeof VENUE_IDS)[number];
/** What an unset `EXCHANGES` reads: the venues beyond these are verified on the replay but read only when named. */
export const DEFAULT_VENUE_IDS = ['binance', 'coinbase', 'kraken', 'okx', 'bybit', 'kucoin'] as const satisfies readonly VenueId[];

export interface VenueOptions {
  /** replaces scheme and host of every API URL of the venue; the URL's path is kept */
  baseUrl?: string;
  /** per-request timeout (ccxt's `timeout`), default ccxt's 10 s */
  timeoutMs?: number;
  /** ccxt's pacing (ms per request cost) instead of the venue's own: only for a loopback replay */
  rateLimitMs?: number;
}

/**
 * Per venue, what restricts ccxt's loadMarkets to the markets we read (facts from ccxt 4.5.84's
 * js/src/<id>.js): the `fetchMarkets.types` it walks, `defaultType` for fetchTickers, and
 * whether loadMarkets' fetchCurrencies call is worth its requests.
 */
const SETUP: Record<VenueId, { types: string[]; currencies: boolean; extra?: Record<string, unknown>; stream?: false }> = {
  binance: { types: ['spot'], currencies: false }, // its fetchCurrencies needs keys (sapi)
  coinbase: { types: ['spot'], currencies: false }, // markets only need product ids; currencies cost 2 requests
  kraken: { types: ['spot'], currencies: true }, // /0/public/Assets maps X/Z-prefixed ids (XXBT → BTC) by altname
  okx: { types: ['spot', 'swap'], currencies: false }, // its fetchCurrencies needs keys
  bybit: { types: ['spot'], currencies: false }, // its fetchCurrencies needs keys
  kucoin: { types: ['spot'], currencies: false, extra: { fetchTickersFees: false } }, // fees come with keys anyway
  gate: { types: ['spot'], currencies: false }, // its pair ids carry the currency ids (BTC_USDT); currencies are another request
  bitget: { types: ['spot'], currencies: false }, // its symbols carry baseCoin and quoteCoin; currencies are another request
  // its fetchMarkets ignores `types` and also reads the contract list (one request); fetchCurrencies needs keys
  // its ccxt pro refuses watchTickers for spot (NotSupported) and its spot watchTicker reads the
  // protobuf book ticker (bid and ask, no last price): read through REST alone
  mexc: { types: ['spot'], currencies: false, stream: false },
  // its `types` is a map of spot/linear/inverse; its spot ids are lowercase base+quote, which ccxt upper-cases alone
  // (its ccxt pro has no watchTickers: the stream holder watches one market.<id>.detail per market)
  htx: { types: ['spot'], currencies: false, extra: { types: { spot: true, linear: false, inverse: false } } },
};

/**
 * Whether the stream holder watches the venue's spot tickers through ccxt pro; if not, the venue is
 * read through REST alone. An unverified venue (a ccxt id beyond VENUE_IDS) is: its stream format
 * was never checked on the replay.
 */
export function streamsTickers(id: string): boolean {
  return isVenueId(id) && SETUP[id].stream !== false;
}

export function isVenueId(id: string): id is VenueId {
  return (VENUE_IDS as readonly string[]).includes(id);
}

function unknownVenue(id: string): Error {
  return new Error(`unknown exchange venue "${id}" (verified: ${VENUE_IDS.join(', ')}; or any other ccxt id with public tickers and one-minute candles)`);
}

type ExchangeClass = new (config: Record<string, unknown>) => Exchange;
/** ccxt's REST class of an exchange id, if it is one */
function restClass(id: string): ExchangeClass | undefined {
  const classes = ccxtLibrary().exchanges as unknown as Record<string, ExchangeClass>;
  return Object.hasOwn(classes, id) ? classes[id] : undefined;
}

/**
 * Whether the service can read a ccxt id beyond VENUE_IDS (an unverified venue): what it lacks of
 * public tickers (fetchTickers), candles (fetchOHLCV) and a one-minute timeframe; empty: nothing.
 */
export function venueShortcomings(id: string): string[] | null {
  const Class = restClass(id);
  if (!Class) return null;
  const exchange = new Class({});
  const lacks: string[] = [];
  if (!exchange.has['fetchTickers']) lacks.push('public tickers (fetchTickers)');
  if (!exchange.has['fetchOHLCV']) lacks.push('candles (fetchOHLCV)');
  else if (!exchange.timeframes || !('1m' in exchange.timeframes)) lacks.push('one-minute candles (the 1m timeframe)');
  return lacks;
}

/** A configured venue id: one of VENUE_IDS, or a ccxt id the service can read (else a clear error). */
function checkedVenueId(id: string, setting: string): string {
  if (isVenueId(id)) return id;
  const lacks = venueShortcomings(id);
  if (lacks === null) throw unknownVenue(id);
  if (lacks.length > 0) throw new Error(`${setting}: the ccxt exchange "${id}" cannot be read: it lacks ${lacks.join(' and ')}`);
  return id;
}

/** Replaces scheme and host of a URL (templates like https://api.{hostname} included), keeping its path. */
export function rebaseUrl(url: string, baseUrl: string): string {
  const match = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(.*)$/i.exec(url);
  if (!match) return url;
  return baseUrl.replace(/\/+$/, '') + (match[1] ?? '');
}

function rebaseAll(node: unknown, baseUrl: string): unknown {
  if (typeof node === 'string') return rebaseUrl(node, baseUrl);
  if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) (node as Record<string, unknown>)[key] = rebaseAll(value, baseUrl);
  }
  return node;
}

export function createVenue(id: string, options: VenueOptions = {}): Exchange {
  // an unverified venue: ccxt's own market walk, without the currencies call (often behind keys)
  const setup: { types?: string[]; currencies: boolean; extra?: Record<string, unknown> } = isVenueId(id) ? SETUP[id] : { currencies: false };
  // ccxt's pro classes are its REST classes plus websocket parsers (OKX's liquidation parser among them)
  // (an unverified venue ccxt pro lacks: its REST class)
  const Class = (ccxtLibrary().pro as unknown as Record<string, ExchangeClass>)[id] ?? (isVenueId(id) ? undefined : restClass(id));
  if (!Class) throw unknownVenue(id);
  const exchange = new Class({
    enableRateLimit: true,
    ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
    ...(options.rateLimitMs !== undefined ? { rateLimit: options.rateLimitMs } : {}),
  });
  exchange.options['defaultType'] = 'spot';
  if (setup.types) exchange.options['fetchMarkets'] = { ...(exchange.options['fetchMarkets'] as object | undefined), types: setup.types, ...setup.extra };
  if (!setup.currencies) exchange.has['fetchCurrencies'] = false;
  if (options.baseUrl) {
    new URL(options.baseUrl); // a clear error for a malformed URL, before any request
    exchange.urls['api'] = rebaseAll(structuredClone(exchange.urls['api']), options.baseUrl) as Exchange['urls']['api'];
  }
  return exchange;
}

/**
 * `EXCHANGES=binance,okx,…` → the venue ids, in order, without repeats; empty → DEFAULT_VENUE_IDS.
 * Beyond VENUE_IDS any ccxt id with public tickers and one-minute candles (unverified); ccxt is
 * loaded only to check such an id.
 */
export function parseExchanges(value: string | undefined): string[] {
  const ids = (value ?? '').split(',').map((part) => part.trim().toLowerCase()).filter(Boolean);
  if (ids.length === 0) return [...DEFAULT_VENUE_IDS];
  return [...new Set(ids.map((id) => checkedVenueId(id, 'EXCHANGES')))];
}

/** `EXCHANGE_URLS=binance=http://…,okx=http://…` → base URL per venue. */
export function parseExchangeUrls(value: string | undefined): Record<string, string> {
  const urls: Record<string, string> = {};
  for (const part of (value ?? '').split(',').map((item) => item.trim()).filter(Boolean)) {
    const at = part.indexOf('=');
    if (at <= 0) throw new Error(`EXCHANGE_URLS: expected venue=url, got "${part}"`);
    const id = part.slice(0, at).trim().toLowerCase();
    const url = part.slice(at + 1).trim();
    checkedVenueId(id, 'EXCHANGE_URLS');
    try {
      new URL(url);
    } catch {
      throw new Error(`EXCHANGE_URLS: "${url}" for ${id} is not a URL`);
    }
    urls[id] = url;
  }
  return urls;
}
