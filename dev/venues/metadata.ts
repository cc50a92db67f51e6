// CoinPaprika's two public keyless lists as the replay serves them for a scenario:
// - GET /v1/coins: every asset CoinPaprika knows (about 56 000 in 2025), a JSON array of
//   {"id": "btc-bitcoin", "name": "Bitcoin", "symbol": "BTC", "rank": 1, "is_new": false, "is_active": true, "type": "coin"},
//   rank 0 = unranked; ids are "<symbol lower>-<name slug>";
// - GET /v1/tickers: the ranked active ones with supplies and a USD quote (the format of
//   recorded/coinpaprika/tickers.json).
// The scenario's coins come under the catalogue's CoinPaprika ids (ids.coinpaprika; else an id in
// CoinPaprika's form from its symbol and name), made-up coins under made-up names, beside ten times
// as many entries no venue trades. Supplies agree with the replay's prices: a market cap falling with
// the rank, over the coin's price. The collisions the service has to resolve are built in on purpose
// (METADATA_CASES) and named in `cases` so tests can find them.
import { seededRandom } from '../random.ts';
import { COIN_QUOTES, DAY, MINUTE, madeUpTickers, type ReplayCoin, type ReplayMarketModel, type ReplayScenario } from './replay.ts';

export interface PaprikaCoin {
  id: string;
  name: string;
  symbol: string;
  /** 0: unranked */
  rank: number;
  is_new: boolean;
  is_active: boolean;
  type: 'coin' | 'token';
}

/** A catalogue coin as the lists need it. */
export interface CatalogueEntry {
  symbol: string;
  name: string;
  type: 'coin' | 'token';
  rank: number;
  coinpaprika?: string;
  circulating_supply?: string | null;
  total_supply?: string | null;
  max_supply?: string | null;
}

/** The collision cases of the lists, by name (the names of MetadataCases). */
export const METADATA_CASES = ['sharedTicker', 'inactiveShadow', 'inactiveOnly', 'unnamed', 'untickered', 'catalogueShadow', 'unconvertedOnly'] as const;

/** Which symbols and ids carry each collision case; empty where the scenario has no made-up coins (up to the catalogue's ~300). */
export interface MetadataCases {
  /** a venue-traded made-up symbol with two active entries of different ranks: the better-ranked is the venues' asset (priced in /v1/tickers), the other another asset */
  sharedTicker: Array<{ symbol: string; best: string; other: string }>;
  /** a venue-traded made-up symbol whose inactive entry ranks ahead of its active one: only is_active tells them apart */
  inactiveShadow: Array<{ symbol: string; active: string; inactive: string }>;
  /** venue-traded made-up symbols whose only entry is inactive (unranked, no ticker) */
  inactiveOnly: string[];
  /** venue-traded made-up symbols absent from /v1/coins and /v1/tickers: the venues name them */
  unnamed: string[];
  /** venue-traded made-up symbols in /v1/coins (unranked) but not in /v1/tickers: no supply, no market cap */
  untickered: string[];
  /** a catalogue symbol with a second, worse-ranked active entry of another asset: the catalogue decides */
  catalogueShadow: Array<{ symbol: string; catalogue: string; other: string }>;
  /** made-up symbols the venues trade only in quotes that make no coin (binance's TRY and BRL; replay.ts COIN_QUOTES), listed in /v1/coins all the same */
  unconvertedOnly: string[];
}

export interface MetadataLists {
  coins: PaprikaCoin[];
  /** the /v1/tickers body at the model's clock (recomputed once a minute) */
  tickers(): string;
  cases: MetadataCases;
}

const SUFFIXES = ['Network', 'Protocol', 'Finance', 'Token', 'Chain', 'AI', 'Labs', 'Swap', 'DAO', 'Coin', 'Games', 'Verse', 'Bridge', 'Capital', 'Exchange'];
const SYLLABLES = ['ra', 'lo', 'ni', 'ta', 'ven', 'mi', 'sa', 'ko', 'dex', 'ria', 'on', 'lex'];
const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
/** market cap of the coin ranked `rank` (as cataloguePrices in offline.ts) */
const marketCap = (rank: number) => 2e12 / rank ** 1.6;
const significant = (value: number, digits = 8) => Number(value.toPrecision(digits));

/**
 * The /v1/coins list and a /v1/tickers for `scenario` (its coins by volume rank; the catalogue's by
 * symbol), with `extras` entries no venue trades (default ten per scenario coin, at least 2 000);
 * deterministic for the scenario's seed.
 */
export function metadataLists(
  scenario: ReplayScenario,
  model: ReplayMarketModel,
  catalogue: CatalogueEntry[],
  options: { extras?: number } = {},
): MetadataLists {
  const seed = scenario.seed ?? 13;
  const random = seededRandom(seed ^ 0x70a9a1);
  const bySymbol = new Map<string, CatalogueEntry[]>();
  for (const entry of [...catalogue].sort((a, b) => a.rank - b.rank)) bySymbol.set(entry.symbol, [...(bySymbol.get(entry.symbol) ?? []), entry]);
  const ids = new Set<string>();
  const uniqueId = (symbol: string, name: string) => {
    const base = `${symbol.toLowerCase()}-${slug(name)}`;
    let id = base;
    for (let n = 2; ids.has(id); n++) id = `${base}-${n}`;
    ids.add(id);
    return id;
  };
  const madeUpName = (symbol: string) => {
    const word = symbol.charAt(0) + symbol.slice(1).toLowerCase() + (random() < 0.5 ? SYLLABLES[Math.floor(random() * SYLLABLES.length)] : '');
    return random() < 0.65 ? `${word} ${SUFFIXES[Math.floor(random() * SUFFIXES.length)]}` : word;
  };
  const tokenOrCoin = (): 'coin' | 'token' => (random() < 0.3 ? 'coin' : 'token');

  // every entry, in the order ranks are handed out; rank 0 and is_active decided below
  interface Entry extends PaprikaCoin {
    coin?: ReplayCoin;
    catalogue?: CatalogueEntry;
    ranked: boolean;
    ticker: boolean;
  }
  const traded: Entry[] = [];
  const madeUp: Entry[] = [];
  for (const coin of scenario.coins) {
    const known = bySymbol.get(coin.symbol);
    if (known) {
      for (const entry of known) {
        const id = entry.coinpaprika ?? `${entry.symbol.toLowerCase()}-${slug(entry.name)}`;
        ids.add(id);
        traded.push({ id, name: entry.name, symbol: entry.symbol, rank: 0, is_new: false, is_active: true, type: entry.type, coin, catalogue: entry, ranked: true, ticker: true });
      }
      bySymbol.delete(coin.symbol);
      continue;
    }
    const name = madeUpName(coin.symbol);
    const entry: Entry = { id: uniqueId(coin.symbol, name), name, symbol: coin.symbol, rank: 0, is_new: random() < 0.01, is_active: true, type: tokenOrCoin(), coin, ranked: true, ticker: true };
    traded.push(entry);
    madeUp.push(entry);
  }
  // the catalogue's coins the scenario does not trade are in CoinPaprika's list all the same
  const untraded: Entry[] = [...bySymbol.values()].flat().sort((a, b) => a.rank - b.rank).map((entry) => {
    const id = entry.coinpaprika ?? `${entry.symbol.toLowerCase()}-${slug(entry.name)}`;
    ids.add(id);
    return { id, name: entry.name, symbol: entry.symbol, rank: 0, is_new: false, is_active: true, type: entry.type, catalogue: entry, ranked: true, ticker: true };
  });

  // the collision cases, on made-up coins spread over the ranks (none when every coin is a catalogue one)
  const cases: MetadataCases = { sharedTicker: [], inactiveShadow: [], inactiveOnly: [], unnamed: [], untickered: [], catalogueShadow: [], unconvertedOnly: [] };
  const quotesOf = new Map<string, Set<string>>();
  for (const spec of Object.values(scenario.venues)) {
    for (const market of spec.markets) {
      const [base = '', quote = ''] = (typeof market === 'string' ? market : market.symbol).split('/');
      quotesOf.set(base, (quotesOf.get(base) ?? new Set()).add(quote));
    }
  }
  const madeUpSymbols = new Set(madeUp.map((entry) => entry.symbol));
  for (const [base, quotes] of quotesOf) if (madeUpSymbols.has(base) && ![...quotes].some((quote) => COIN_QUOTES.has(quote))) cases.unconvertedOnly.push(base);
  const shadows: Array<{ after: Entry; entry: Entry }> = [];
  const removed = new Set<Entry>();
  madeUp.forEach((entry, i) => {
    if (i === 3) {
      const name = madeUpName(entry.symbol);
      const other: Entry = { id: uniqueId(entry.symbol, name + ' Classic'), name: name + ' Classic', symbol: entry.symbol, rank: 0, is_new: false, is_active: true, type: 'token', ranked: true, ticker: true };
      shadows.push({ after: madeUp[Math.min(madeUp.length - 1, i + 400)]!, entry: other });
      cases.sharedTicker.push({ symbol: entry.symbol, best: entry.id, other: other.id });
    } else if (i === 7) {
      const name = madeUpName(entry.symbol) + ' Old';
      const inactive: Entry = { id: uniqueId(entry.symbol, name), name, symbol: entry.symbol, rank: 0, is_new: false, is_active: false, type: 'token', ranked: true, ticker: false };
      // ranked just ahead of the active entry
      shadows.push({ after: madeUp[i - 1]!, entry: inactive });
      cases.inactiveShadow.push({ symbol: entry.symbol, active: entry.id, inactive: inactive.id });
    } else if (i % 401 === 11) {
      Object.assign(entry, { is_active: false, ranked: false, ticker: false });
      cases.inactiveOnly.push(entry.symbol);
    } else if (i % 97 === 13) {
      removed.add(entry);
      cases.unnamed.push(entry.symbol);
    } else if (i % 23 === 5) {
      Object.assign(entry, { ranked: false, ticker: false });
      cases.untickered.push(entry.symbol);
    }
  });
  const catalogueTraded = traded.filter((entry) => entry.catalogue);
  const shadowed = catalogueTraded[Math.min(20, catalogueTraded.length - 1)];
  if (madeUp.length && shadowed) {
    const name = madeUpName(shadowed.symbol) + ' Bridged';
    const other: Entry = { id: uniqueId(shadowed.symbol, name), name, symbol: shadowed.symbol, rank: 0, is_new: false, is_active: true, type: 'token', ranked: true, ticker: true };
    shadows.push({ after: madeUp[Math.min(madeUp.length - 1, 200)]!, entry: other });
    cases.catalogueShadow.push({ symbol: shadowed.symbol, catalogue: shadowed.id, other: other.id });
  }

  // entries no venue trades: made-up tickers apart from every traded one, a fifth of them sharing another extra's
  const extras = options.extras ?? Math.max(2000, 10 * scenario.coins.length);
  const reserved = [...traded, ...untraded].map((entry) => entry.symbol);
  const distinct = madeUpTickers(Math.ceil(extras * 0.8), seed, reserved, 'metadata');
  const extraEntries: Entry[] = [];
  for (let i = 0; i < extras; i++) {
    const symbol = i < distinct.length ? distinct[i]! : distinct[Math.floor(random() * distinct.length)]!;
    const name = madeUpName(symbol);
    const ranked = random() < 0.15;
    extraEntries.push({ id: uniqueId(symbol, name), name, symbol, rank: 0, is_new: random() < 0.01, is_active: ranked || random() < 0.7, type: tokenOrCoin(), ranked, ticker: ranked });
  }

  // ranks: the scenario's coins in volume order, every eighth rank an extra's, then the shadows where they belong, then the rest
  const rankedExtras = extraEntries.filter((entry) => entry.ranked);
  const order: Entry[] = [];
  const afterOf = new Map<Entry, Entry[]>();
  for (const { after, entry } of shadows) afterOf.set(after, [...(afterOf.get(after) ?? []), entry]);
  for (const entry of [...traded, ...untraded]) {
    if (order.length % 8 === 7 && rankedExtras.length) order.push(rankedExtras.shift()!);
    if (entry.ranked && !removed.has(entry)) order.push(entry);
    for (const shadow of afterOf.get(entry) ?? []) order.push(shadow);
  }
  order.push(...rankedExtras);
  order.forEach((entry, i) => (entry.rank = i + 1));
  // the inactive shadow ranks ahead of its active entry: swap their ranks
  for (const { active, inactive } of cases.inactiveShadow) {
    const a = order.find((entry) => entry.id === active)!;
    const b = order.find((entry) => entry.id === inactive)!;
    if (b.rank > a.rank) [a.rank, b.rank] = [b.rank, a.rank];
  }

  const all: Entry[] = [...traded.filter((entry) => !removed.has(entry)), ...untraded, ...shadows.map((s) => s.entry), ...extraEntries];
  // CoinPaprika lists ranked coins first by rank, then the unranked
  all.sort((a, b) => (a.rank || Infinity) - (b.rank || Infinity));
  const coins: PaprikaCoin[] = all.map(({ id, name, symbol, rank, is_new, is_active, type }) => ({ id, name, symbol, rank, is_new, is_active, type }));

  // the tickers: supplies fixed at the start (the catalogue's, else a market cap over the price), prices live
  const supplies = new Map<Entry, { circulating: number; total: number; max: number; price: number }>();
  for (const entry of all) {
    if (!entry.ticker || !entry.is_active || !entry.rank) continue;
    const price = entry.coin?.price ?? 10 ** (random() * 5 - 3);
    const catalogueSupply = Number(entry.catalogue?.circulating_supply ?? 0);
    const circulating = catalogueSupply > 0 ? catalogueSupply : Math.round(marketCap(entry.rank) / price);
    const total = Math.max(circulating, Number(entry.catalogue?.total_supply ?? 0)) || circulating;
    const max = Number(entry.catalogue?.max_supply ?? 0) || (random() < 0.4 ? Math.round(total * 1.5) : 0);
    supplies.set(entry, { circulating, total, max, price });
  }
  let cached: { minute: number; body: string } | null = null;
  const tickers = () => {
    const now = model.now();
    const minute = Math.floor(now / MINUTE) * MINUTE;
    if (cached?.minute === minute) return cached.body;
    const updated = new Date(minute).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const rows = [...supplies].map(([entry, supply]) => {
      const price = entry.coin ? model.usdPrice(entry.coin, minute) : supply.price;
      const before = entry.coin ? model.usdPrice(entry.coin, minute - DAY) : supply.price;
      const change = Number(((price / before - 1) * 100).toFixed(2));
      return {
        id: entry.id, name: entry.name, symbol: entry.symbol, rank: entry.rank,
        circulating_supply: supply.circulating, total_supply: supply.total, max_supply: supply.max, beta_value: 1,
        first_data_at: new Date(entry.coin?.firstTradeAt ?? Date.UTC(2021, 0, 1)).toISOString().replace(/\.\d{3}Z$/, 'Z'), last_updated: updated,
        quotes: {
          USD: {
            price: significant(price), volume_24h: significant(entry.coin?.volumeUsd ?? marketCap(entry.rank) / 50, 10), volume_24h_change_24h: 0,
            market_cap: Math.round(price * supply.circulating), market_cap_change_24h: change, percent_change_15m: 0, percent_change_30m: 0, percent_change_1h: 0,
            percent_change_6h: 0, percent_change_12h: 0, percent_change_24h: change, percent_change_7d: 0, percent_change_30d: 0, percent_change_1y: 0,
            ath_price: significant(price * 2), ath_date: '2024-12-05T00:00:00Z', percent_from_price_ath: -50,
          },
        },
      };
    });
    cached = { minute, body: JSON.stringify(rows) };
    return cached.body;
  };
  return { coins, tickers, cases };
}
