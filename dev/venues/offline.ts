// Everything MARKET_SOURCE=exchanges reaches over the network, served from one loopback replay:
// the venues of replay.ts, the ECB's daily rates as recorded (recorded/), and CoinPaprika's
// /v1/coins and /v1/tickers (metadata.ts; up to COMPACT_COINS coins the tickers are the recorded
// answer). Used by `make venues-replay`, the service test and the live-minute bench.
import { readFileSync } from 'node:fs';
import { parseEcbDaily } from '../../src/sources/ecb.ts';
import { metadataLists, type CatalogueEntry, type MetadataCases } from './metadata.ts';
import { COMPACT_COINS, makeScenario, REPLAY_VENUES, startVenueReplay, type ReplayFile, type ReplayScenario, type VenueReplay } from './replay.ts';

const fixture = (path: string) => readFileSync(new URL(`./recorded/${path}`, import.meta.url), 'utf8');

/** where the recorded answers are served: ECB_URL is the document's URL, COINPAPRIKA_URL the API base */
export const ECB_PATH = '/ecb/stats/eurofxref/eurofxref-daily.xml';
export const COINPAPRIKA_PATH = '/coinpaprika';

const ECB_DAY = 'ecb/eurofxref-daily-2025-07-02.xml';

export function recordedFiles(): Record<string, ReplayFile> {
  return {
    [ECB_PATH]: { contentType: 'text/xml', body: fixture(ECB_DAY) },
    [`${COINPAPRIKA_PATH}/v1/tickers`]: { contentType: 'application/json', body: fixture('coinpaprika/tickers.json') },
    [`${COINPAPRIKA_PATH}/v1/coins`]: { contentType: 'application/json', body: fixture('coinpaprika/coins.json') },
  };
}

/** USD per EUR, GBP, TRY and BRL of the recorded ECB day: the venues' fiat markets are priced at the rates the service reads */
export function recordedFiatUsd(): Record<string, number> {
  const { ratesPerEur } = parseEcbDaily(fixture(ECB_DAY));
  const usdPerEur = Number(ratesPerEur.USD);
  return { EUR: usdPerEur, GBP: usdPerEur / Number(ratesPerEur.GBP), TRY: usdPerEur / Number(ratesPerEur.TRY), BRL: usdPerEur / Number(ratesPerEur.BRL) };
}

/**
 * The catalogue's symbols by rank, each once (a symbol two coins share is one replayed asset; the
 * venues' overrides decide which coin it is), so that the venues' coins map to catalogue coins.
 */
export function catalogueSymbols(count: number): string[] {
  return [...new Set(rankedCatalogue().map((coin) => coin.symbol))].slice(0, count);
}

function rankedCatalogue() {
  const catalogue = JSON.parse(readFileSync(new URL('../../src/sources/catalogue/coins.json', import.meta.url), 'utf8')) as {
    coins: Array<Omit<CatalogueEntry, 'rank' | 'coinpaprika'> & { rank?: number; ids?: { coinpaprika?: string } }>;
  };
  return catalogue.coins.filter((coin) => coin.rank !== undefined).sort((a, b) => a.rank! - b.rank!);
}

/** The catalogue's coins as CoinPaprika's lists know them. */
function catalogueEntries(): CatalogueEntry[] {
  return rankedCatalogue().map(({ ids, ...coin }) => ({ ...coin, rank: coin.rank!, ...(ids?.coinpaprika ? { coinpaprika: ids.coinpaprika } : {}) }));
}

/** Plausible prices for the catalogue's coins: a market cap falling with rank over their circulating supply. */
export function cataloguePrices(): Record<string, number> {
  const prices: Record<string, number> = {};
  for (const coin of rankedCatalogue()) {
    const supply = Number(coin.circulating_supply ?? 0);
    if (supply > 0 && !(coin.symbol in prices)) prices[coin.symbol] = Number((2e12 / coin.rank! ** 1.6 / supply).toPrecision(6));
  }
  return prices;
}

/** The environment that points the service at the replay: venues, FX rates, coin metadata and supplies. */
export function replayEnvironment(replay: Pick<VenueReplay, 'url' | 'baseUrl'>): Record<string, string> {
  return {
    MARKET_SOURCE: 'exchanges',
    // every venue the replay serves, beyond an unset EXCHANGES' default six
    EXCHANGES: REPLAY_VENUES.join(','),
    EXCHANGE_URLS: REPLAY_VENUES.map((venue) => `${venue}=${replay.baseUrl(venue)}`).join(','),
    ECB_URL: replay.url + ECB_PATH,
    COINPAPRIKA_URL: replay.url + COINPAPRIKA_PATH,
    METADATA_SOURCE: 'coinpaprika',
  };
}

export interface OfflineReplay {
  replay: VenueReplay;
  scenario: ReplayScenario;
  /** CoinPaprika's lists as served: how many /v1/coins entries, and the collision cases built into them */
  metadata: { coins: number; cases: MetadataCases };
}

/**
 * The replay of `coins` coins on the replay's venues with the reference answers: the catalogue's
 * coins by rank, then (beyond them) made-up ones; the venues' lists at real proportions beyond
 * COMPACT_COINS (replay.ts REAL_SIZE). Up to COMPACT_COINS coins CoinPaprika's tickers are the recorded
 * answer (with its deliberate faults), beyond it a list of the scenario's coins with the catalogue's supplies.
 */
export async function startOfflineReplay(options: { coins: number; port?: number; seed?: number; now?: () => number }): Promise<OfflineReplay> {
  const catalogue = catalogueEntries();
  const scenario = {
    ...makeScenario({
      coins: options.coins, symbols: catalogueSymbols(options.coins), reserved: catalogue.map((coin) => coin.symbol), prices: cataloguePrices(),
      ...(options.seed !== undefined ? { seed: options.seed } : {}), ...(options.now ? { now: options.now } : {}),
    }),
    fiatUsd: recordedFiatUsd(),
  };
  const files = recordedFiles();
  const replay = await startVenueReplay(scenario, { port: options.port, files });
  const lists = metadataLists(scenario, replay.model, catalogue);
  // served from here on: nothing has asked yet
  files[`${COINPAPRIKA_PATH}/v1/coins`] = { contentType: 'application/json', body: JSON.stringify(lists.coins) };
  if (options.coins > COMPACT_COINS) files[`${COINPAPRIKA_PATH}/v1/tickers`] = { contentType: 'application/json', body: lists.tickers };
  return { replay, scenario, metadata: { coins: lists.coins.length, cases: lists.cases } };
}
