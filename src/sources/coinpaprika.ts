// The `coinpaprika` metadata source: circulating, total and maximum supply of the catalogue's coins
// from CoinPaprika's public API, keyless: one GET /v1/tickers for all coins (documented fields id,
// name, symbol, rank, circulating_supply, total_supply, max_supply, quotes.USD ...). Coins are
// matched by their CoinPaprika id (market.coin_source_ids, from the catalogue's ids.coinpaprika).
// A failed, malformed or truncated response fails the run before anything is written.
import type { Query } from '../db/query.ts';
import { ensureCoinCatalogue } from './catalogue/index.ts';
import type { Source } from './source.ts';

export const SOURCE_NAME = 'coinpaprika';
export const COINPAPRIKA_URL = 'https://api.coinpaprika.com';

/** A response that is not a complete /v1/tickers list; nothing is written. */
export class CoinPaprikaError extends Error {
  constructor(message: string) {
    super(`CoinPaprika tickers: ${message}`);
    this.name = 'CoinPaprikaError';
  }
}

export interface SupplyResult {
  /** tickers in the response */
  tickers: number;
  /** coins whose supplies changed */
  updated: number;
}

/**
 * Downloads /v1/tickers and checks its shape: a JSON array of objects with a string id. The text
 * itself goes to PostgreSQL, which reads the supplies as numeric (no float on the way).
 */
export async function fetchTickers(baseUrl = COINPAPRIKA_URL, timeoutMs = 30_000): Promise<{ text: string; tickers: number }> {
  const url = `${baseUrl.replace(/\/+$/, '')}/v1/tickers`;
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
    text = await response.text();
  } catch (error) {
    const reason = (error as Error).name === 'TimeoutError' ? `no complete answer within ${timeoutMs} ms` : `${(error as Error).message} (${String((error as { cause?: unknown }).cause ?? '')})`;
    throw new CoinPaprikaError(`request to ${url} failed: ${reason}.`);
  }
  if (response.status !== 200) throw new CoinPaprikaError(`HTTP ${response.status} from ${url}.`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    // a cut connection leaves half a document: no part of it is used
    throw new CoinPaprikaError(`not JSON or truncated (${(error as Error).message}).`);
  }
  if (!Array.isArray(json)) throw new CoinPaprikaError('expected a JSON array of tickers.');
  const bad = json.findIndex((item) => typeof item !== 'object' || item === null || typeof (item as { id?: unknown }).id !== 'string');
  if (bad >= 0) throw new CoinPaprikaError(`ticker [${bad}] has no string id.`);
  if (json.length === 0) throw new CoinPaprikaError('empty list of tickers.');
  return { text, tickers: json.length };
}

/** Fetches the tickers and applies their supplies (market.apply_coin_supplies) to the catalogue's coins. */
export async function refreshCoinSupplies(query: Query, baseUrl = COINPAPRIKA_URL, timeoutMs?: number): Promise<SupplyResult> {
  const { text, tickers } = await fetchTickers(baseUrl, timeoutMs);
  // the CoinPaprika ids come with the catalogue
  await ensureCoinCatalogue(query);
  const [row] = await query('select market.apply_coin_supplies($1, $2::text::jsonb) as updated', [SOURCE_NAME, text]);
  return { tickers, updated: row!.updated as number };
}

/** CoinPaprika's supplies as a source (METADATA_SOURCE=coinpaprika). */
export const coinpaprikaSupplies = (baseUrl = COINPAPRIKA_URL, timeoutMs?: number): Source<SupplyResult> => ({
  name: SOURCE_NAME,
  run: (query) => refreshCoinSupplies(query, baseUrl, timeoutMs),
});
