// The `coinpaprika` metadata source, CoinPaprika's public API, keyless: circulating, total and
// maximum supply from one GET /v1/tickers for all coins (documented fields id, name, symbol, rank,
// circulating_supply, total_supply, max_supply, quotes.USD ...), matched to coins by their
// CoinPaprika id (market.coin_source_ids: the catalogue's ids.coinpaprika, the discovered coins');
// and, at most once a day, the whole coin list GET /v1/coins ({id, name, symbol, rank, is_new,
// is_active, type}) that names the coins the venues bring (market.load_coin_metadata_list).
// A failed, malformed or truncated response fails the run before anything of it is written.
import type { Query } from '../db/query.ts';
import { ensureCoinCatalogue } from './catalogue/index.ts';
import type { Source } from './source.ts';

export const SOURCE_NAME = 'coinpaprika';
export const COINPAPRIKA_URL = 'https://api.coinpaprika.com';
/** the coin list changes slowly: one request a day is enough */
const COIN_LIST_EVERY = '1 day';

/** A response that is not a complete list (of tickers, of coins); nothing of it is written. */
export class CoinPaprikaError extends Error {
  constructor(message: string, list = 'tickers') {
    super(`CoinPaprika ${list}: ${message}`);
    this.name = 'CoinPaprikaError';
  }
}

export interface SupplyResult {
  /** tickers in the response */
  tickers: number;
  /** coins whose supplies changed */
  updated: number;
  /** the coin list, when it was due and loaded: entries, coins the venues named that it now names, coins renamed */
  coinList?: { coins: number; adopted: number; renamed: number };
}

/**
 * Downloads one of CoinPaprika's lists and checks its shape: a non-empty JSON array of objects with
 * string `fields`. The text itself goes to PostgreSQL, which reads the numbers as numeric (no float on the way).
 */
async function fetchList(baseUrl: string, path: string, list: string, fields: string[], timeoutMs: number): Promise<{ text: string; count: number }> {
  const url = `${baseUrl.replace(/\/+$/, '')}${path}`;
  const fail = (message: string) => new CoinPaprikaError(message, list);
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
    text = await response.text();
  } catch (error) {
    const reason = (error as Error).name === 'TimeoutError' ? `no complete answer within ${timeoutMs} ms` : `${(error as Error).message} (${String((error as { cause?: unknown }).cause ?? '')})`;
    throw fail(`request to ${url} failed: ${reason}.`);
  }
  if (response.status !== 200) throw fail(`HTTP ${response.status} from ${url}.`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    // a cut connection leaves half a document: no part of it is used
    throw fail(`not JSON or truncated (${(error as Error).message}).`);
  }
  if (!Array.isArray(json)) throw fail(`expected a JSON array of ${list}.`);
  const item = list.replace(/s$/, '');
  for (const field of fields) {
    const bad = json.findIndex((entry) => typeof entry !== 'object' || entry === null || typeof (entry as Record<string, unknown>)[field] !== 'string');
    if (bad >= 0) throw fail(`${item} [${bad}] has no string ${field}.`);
  }
  if (json.length === 0) throw fail(`empty list of ${list}.`);
  return { text, count: json.length };
}

/** GET /v1/tickers: every coin's supplies and USD quote. */
export async function fetchTickers(baseUrl = COINPAPRIKA_URL, timeoutMs = 30_000): Promise<{ text: string; tickers: number }> {
  const { text, count } = await fetchList(baseUrl, '/v1/tickers', 'tickers', ['id'], timeoutMs);
  return { text, tickers: count };
}

/** GET /v1/coins: every coin CoinPaprika lists, with its symbol, name, rank, activity and type. */
export async function fetchCoinList(baseUrl = COINPAPRIKA_URL, timeoutMs = 30_000): Promise<{ text: string; coins: number }> {
  const { text, count } = await fetchList(baseUrl, '/v1/coins', 'coins', ['id', 'symbol', 'name'], timeoutMs);
  return { text, coins: count };
}

/**
 * Loads the coin list when the one stored is a day old (or there is none): the database takes it
 * whole or refuses it (cut short, garbage), so a bad list leaves every coin as it was.
 */
export async function refreshCoinList(query: Query, baseUrl = COINPAPRIKA_URL, timeoutMs?: number): Promise<SupplyResult['coinList']> {
  const [due] = await query(
    `select coalesce((settings ->> 'coin_list_loaded_at')::timestamptz <= now() - $2::interval, true) as due from market.data_sources where name = $1`,
    [SOURCE_NAME, COIN_LIST_EVERY],
  );
  if (due?.due === false) return undefined;
  const { text } = await fetchCoinList(baseUrl, timeoutMs);
  let loaded: { loaded: NonNullable<SupplyResult['coinList']> } | undefined;
  try {
    [loaded] = await query<{ loaded: NonNullable<SupplyResult['coinList']> }>('select market.load_coin_metadata_list($1, $2::text::jsonb) as loaded', [SOURCE_NAME, text]);
  } catch (error) {
    // refused by the database (cut short, an entry without a name): the run fails, nothing changed
    if ((error as { code?: string }).code === '22P02') throw new CoinPaprikaError(`${(error as Error).message}.`, 'coins');
    throw error;
  }
  const { coins, adopted, renamed } = loaded!.loaded;
  return { coins, adopted, renamed };
}

/**
 * Fetches the tickers and applies their supplies (market.apply_coin_supplies), then the daily coin
 * list; a failed list fails the run after the supplies were applied.
 */
export async function refreshCoinSupplies(query: Query, baseUrl = COINPAPRIKA_URL, timeoutMs?: number): Promise<SupplyResult> {
  const { text, tickers } = await fetchTickers(baseUrl, timeoutMs);
  // the CoinPaprika ids come with the catalogue
  await ensureCoinCatalogue(query);
  const [row] = await query('select market.apply_coin_supplies($1, $2::text::jsonb) as updated', [SOURCE_NAME, text]);
  const coinList = await refreshCoinList(query, baseUrl, timeoutMs);
  return { tickers, updated: row!.updated as number, ...(coinList ? { coinList } : {}) };
}

/** CoinPaprika's supplies and coin list as a source (METADATA_SOURCE=coinpaprika). */
export const coinpaprikaSupplies = (baseUrl = COINPAPRIKA_URL, timeoutMs?: number): Source<SupplyResult> => ({
  name: SOURCE_NAME,
  run: (query) => refreshCoinSupplies(query, baseUrl, timeoutMs),
});
