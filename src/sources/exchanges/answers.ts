// What a venue answered, checked against what was asked before anything of it is written. ccxt
// does not fail on a body it cannot read: it hands the text on as the answer, and its parsers
// then read characters as rows (Binance's candles) or find no rows at all (Kraken's), or throw a
// TypeError of their own. Every such answer becomes one named error, BadVenueAnswer, naming the
// venue, the endpoint and why; the caller backs the venue off and records it (runOnVenue).
import type { Exchange, OHLCV, Ticker } from 'ccxt';
import { ccxtLibrary } from './venues.ts';

/** A venue answer that came back but cannot be right: unreadable, cut short, or not what was asked. */
export class BadVenueAnswer extends Error {
  override name = 'BadVenueAnswer';
}

/** A request the venue gate refused (src/sources/exchanges/gate.ts): the venue backs off until `until`. */
export class VenueBackingOff extends Error {
  override name = 'VenueBackingOff';
  readonly until: number;
  constructor(venueId: string, until: number) {
    super(`${venueId} backs off until ${new Date(until).toISOString()}`);
    this.until = until;
  }
}

/** The endpoint of a URL, for messages: its path, without the query (which may be long). */
function endpointOf(url: unknown): string {
  try {
    return new URL(String(url)).pathname;
  } catch {
    return String(url).split('?')[0]!;
  }
}

/** Why a body ccxt could not parse is unreadable: cut short (it began as JSON) or not JSON at all. */
function unreadable(body: string): string {
  const text = body.trim();
  if (text === '') return 'an empty body';
  if (text.startsWith('{') || text.startsWith('[')) return `JSON cut short or garbled after ${Buffer.byteLength(text)} bytes`;
  return `not JSON (begins ${JSON.stringify(text.slice(0, 24))})`;
}

/**
 * Wraps a ccxt instance's `fetch` (every HTTP request it makes passes there): counts the request,
 * remembers its endpoint, and refuses an answer ccxt could not parse as JSON.
 */
export function guardAnswers(venueId: string, exchange: Exchange, counted: { requests: number; endpoint?: string }): void {
  const fetch = exchange.fetch.bind(exchange);
  exchange.fetch = async (...args: Parameters<Exchange['fetch']>) => {
    counted.requests++;
    counted.endpoint = endpointOf(args[0]);
    const answer: unknown = await fetch(...args);
    // ccxt returns the body's text when it does not parse (every venue we read answers JSON)
    if (typeof answer === 'string' || answer === undefined || answer === null) {
      throw new BadVenueAnswer(`${venueId} ${counted.endpoint}: ${unreadable(String(answer ?? ''))}`);
    }
    return answer;
  };
}

/**
 * Runs one ccxt call; an error that is not ccxt's own (a TypeError from a parser reading an
 * answer of the wrong shape) becomes BadVenueAnswer naming the venue and the endpoint last asked.
 */
export async function reading<T>(venue: { id: string; endpoint?: string }, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof BadVenueAnswer || error instanceof VenueBackingOff || error instanceof ccxtLibrary().BaseError) throw error;
    throw new BadVenueAnswer(`${venue.id} ${venue.endpoint ?? what}: ${what} unreadable (${(error as Error)?.message ?? String(error)})`);
  }
}

const isDecimal = (value: unknown) => value !== undefined && value !== null && value !== '' && Number.isFinite(Number(value));

/**
 * The candles of one answer as rows to write, or BadVenueAnswer when any is not a candle (a time
 * that is no number, a price that is no decimal): nothing of a bad answer is written.
 */
export function candleRows(venue: { id: string; endpoint?: string }, symbol: string, candles: OHLCV[]): OHLCV[] {
  for (const [at, candle] of candles.entries()) {
    const [time, open, high, low, close] = candle;
    if (typeof time !== 'number' || !Number.isFinite(time) || ![open, high, low, close].every(isDecimal)) {
      throw new BadVenueAnswer(`${venue.id} ${venue.endpoint ?? 'candles'}: candle ${at + 1} of ${candles.length} for ${symbol} is not a candle (${JSON.stringify(candle).slice(0, 80)})`);
    }
  }
  return candles;
}

/** The tickers of one answer, or BadVenueAnswer when there are none or a row names no market. */
export function tickerRows(venue: { id: string; endpoint?: string }, tickers: Record<string, Ticker>): Ticker[] {
  const rows = Object.values(tickers);
  const where = `${venue.id} ${venue.endpoint ?? 'tickers'}`;
  if (rows.length === 0) throw new BadVenueAnswer(`${where}: no tickers in the answer`);
  const nameless = rows.filter((ticker) => typeof ticker?.symbol !== 'string' || ticker.symbol === '').length;
  if (nameless > 0) throw new BadVenueAnswer(`${where}: ${nameless} of ${rows.length} tickers name no market`);
  if (!rows.some((ticker) => isDecimal(ticker.last ?? ticker.close))) throw new BadVenueAnswer(`${where}: no ticker has a price`);
  return rows;
}
