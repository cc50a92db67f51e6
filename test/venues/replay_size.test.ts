// The loopback replay at real size (issue 45): `make venues-replay COINS=2500` serves 2 500 coins on
// the ten venues with market lists of the venues' own sizes, loaded through ccxt as the service loads
// them, and CoinPaprika's /v1/coins and /v1/tickers with the collision cases built in.
import { readFileSync } from 'node:fs';
import test from 'ava';
import { WebSocket } from 'ws';
import { createVenue, type VenueId } from '../../src/sources/exchanges/venues.ts';
import { COMPACT_COINS, makeScenario, MINUTE, REPLAY_VENUES, type ReplayScenario } from '../../dev/venues/replay.ts';
import { COINPAPRIKA_PATH, catalogueSymbols, cataloguePrices, replayEnvironment, startOfflineReplay, type OfflineReplay } from '../../dev/venues/offline.ts';
import { METADATA_CASES, type PaprikaCoin } from '../../dev/venues/metadata.ts';
import { serveVenueStreams } from '../../dev/venues/streams.ts';

const COINS = 2500;
/** the bands each venue's spot list falls in at 2 500 coins: around the venues' real list sizes (replay.ts REAL_SIZE) */
const BANDS: Record<VenueId, [number, number]> = {
  gate: [2000, 2600], mexc: [1750, 2300], binance: [1200, 1600], kucoin: [1000, 1400], bitget: [780, 1050],
  kraken: [600, 800], htx: [600, 800], okx: [600, 800], bybit: [520, 700], coinbase: [520, 700],
};
const catalogue = JSON.parse(readFileSync(new URL('../../src/sources/catalogue/coins.json', import.meta.url), 'utf8')) as {
  coins: Array<{ symbol: string; ids?: { coinpaprika?: string } }>;
};
const catalogueSymbolSet = new Set(catalogue.coins.map((coin) => coin.symbol));

let clock = Math.floor(Date.now() / MINUTE) * MINUTE + 20_000;
let offline: OfflineReplay;
test.before(async () => {
  offline = await startOfflineReplay({ coins: COINS, now: () => clock });
});
test.after.always(async () => {
  await offline?.replay.close();
});

const symbols = (scenario: ReplayScenario, venue: VenueId) => (scenario.venues[venue]?.markets ?? []).map((market) => (typeof market === 'string' ? market : market.symbol));
const getJson = async <T>(path: string): Promise<T> => {
  const response = await fetch(offline.replay.url + path);
  if (response.status !== 200) throw new Error(`${path}: HTTP ${response.status}`);
  return (await response.json()) as T;
};

test('2 500 coins: all traded, ≥ 8 000 spot markets, each venue near its real size, in several quotes, deterministic', (t) => {
  const { scenario } = offline;
  t.is(scenario.coins.length, COINS);
  const bases = new Set<string>();
  const quotes = new Set<string>();
  let total = 0;
  for (const venue of REPLAY_VENUES) {
    const markets = symbols(scenario, venue);
    t.is(new Set(markets).size, markets.length, `${venue}: no market twice`);
    const [low, high] = BANDS[venue];
    t.true(markets.length >= low && markets.length <= high, `${venue}: ${markets.length} markets, expected ${low}–${high}`);
    for (const market of markets) {
      const [base, quote] = market.split('/') as [string, string];
      bases.add(base);
      quotes.add(quote);
    }
    total += markets.length;
  }
  t.true(bases.size >= 2500, `${bases.size} distinct bases`);
  t.true(total >= 8000, `${total} spot markets`);
  for (const quote of ['USDT', 'USDC', 'USD', 'EUR', 'BTC', 'ETH']) t.true(quotes.has(quote), quote);
  // quotes the service does not convert: the quote filter has something to filter
  const binanceQuotes = symbols(scenario, 'binance').map((market) => market.split('/')[1]);
  t.true(binanceQuotes.filter((quote) => quote === 'TRY').length >= 50 && binanceQuotes.includes('BRL'));

  // the catalogue's symbols first, then made-up tickers that look like real ones and are no catalogue symbol
  const catalogueCount = catalogueSymbols(COINS).length;
  t.deepEqual(scenario.coins.slice(0, catalogueCount).map((coin) => coin.symbol), catalogueSymbols(COINS));
  const madeUp = scenario.coins.slice(catalogueCount).map((coin) => coin.symbol);
  t.is(madeUp.length, COINS - catalogueCount);
  t.deepEqual(madeUp.filter((symbol) => !/^[A-Z0-9]{2,6}$/.test(symbol) || catalogueSymbolSet.has(symbol)), []);
  t.is(new Set(scenario.coins.map((coin) => coin.symbol)).size, COINS);

  const again = makeScenario({ coins: COINS, symbols: catalogueSymbols(COINS), reserved: catalogueSymbolSet, prices: cataloguePrices(), now: () => clock });
  t.deepEqual(again.coins.map((coin) => coin.symbol), scenario.coins.map((coin) => coin.symbol), 'same seed, same coins');
  for (const venue of REPLAY_VENUES) t.deepEqual(symbols(again, venue), symbols(scenario, venue), `same seed, same ${venue} list`);
  const other = makeScenario({ coins: COINS, symbols: catalogueSymbols(COINS), reserved: catalogueSymbolSet, prices: cataloguePrices(), seed: 14, now: () => clock });
  t.notDeepEqual(symbols(other, 'gate'), symbols(scenario, 'gate'), 'another seed, other lists');
});

test('every venue\'s list loads through ccxt with the replay\'s count, made-up coins under their own symbols', async (t) => {
  const { scenario, replay } = offline;
  const catalogueCount = catalogueSymbols(COINS).length;
  const madeUp = new Set(scenario.coins.slice(catalogueCount).map((coin) => coin.symbol));
  await Promise.all(REPLAY_VENUES.map(async (venue) => {
    const exchange = createVenue(venue, { baseUrl: replay.baseUrl(venue) });
    const markets = await exchange.loadMarkets();
    const spot = Object.values(markets).filter((market) => market?.spot);
    const listed = symbols(scenario, venue);
    t.is(spot.length, listed.length, `${venue}: ccxt's spot markets`);
    const loaded = new Set(spot.map((market) => market!.symbol));
    t.deepEqual(listed.filter((symbol) => madeUp.has(symbol.split('/')[0]!) && !loaded.has(symbol)), [], `${venue}: made-up coins keep their symbol`);
  }));
});

// serial (ava runs it before the others): it moves the clock a minute on
test.serial('fetchTickers of the biggest venue: every market at the model\'s prices; the next minute answers fast', async (t) => {
  const { scenario, replay } = offline;
  const gate = createVenue('gate', { baseUrl: replay.baseUrl('gate') });
  await gate.loadMarkets();
  const tickers = await gate.fetchTickers();
  const listed = symbols(scenario, 'gate');
  t.is(Object.keys(tickers).length, listed.length);
  for (const symbol of listed.filter((_, i) => i % 97 === 0)) {
    const expected = replay.model.ticker(replay.market('gate', symbol)!)!;
    t.true(Math.abs(tickers[symbol]!.last! / expected.last - 1) < 1e-6, `${symbol} ${tickers[symbol]!.last} vs ${expected.last}`);
    t.true(Math.abs(tickers[symbol]!.baseVolume! / expected.v - 1) < 1e-6, `${symbol} volume`);
  }
  // the two biggest lists' day of statistics counted once; a minute on, moved along by one minute, not
  // counted again: a few prices per market, where a count of the day takes 1 440 minutes' prices
  const model = replay.model;
  const usdPrice = model.usdPrice.bind(model);
  let prices = 0;
  const everyTicker = () => {
    prices = 0;
    for (const venue of ['gate', 'mexc'] as const) for (const symbol of symbols(scenario, venue)) model.ticker(replay.market(venue, symbol)!);
    return prices;
  };
  model.usdPrice = (...args) => (prices++, usdPrice(...args));
  try {
    everyTicker();
    clock += MINUTE;
    const markets = symbols(scenario, 'gate').length + symbols(scenario, 'mexc').length;
    const next = everyTicker();
    t.true(next < 30 * markets, `the next minute's tickers: ${next} prices for ${markets} markets`);
  } finally {
    model.usdPrice = usdPrice;
  }
  const again = await gate.fetchTickers();
  t.is(Object.keys(again).length, listed.length);
});

test('/v1/coins and /v1/tickers: the documented fields, ten entries per coin, the collision cases', async (t) => {
  const { scenario, metadata, replay } = offline;
  const coins = await getJson<PaprikaCoin[]>(`${COINPAPRIKA_PATH}/v1/coins`);
  t.is(coins.length, metadata.coins);
  t.true(coins.length >= 10 * COINS, `${coins.length} entries`);
  t.deepEqual(coins.filter((coin) => !(
    typeof coin.id === 'string' && /^[a-z0-9]+(-[a-z0-9]+)+$/.test(coin.id) && typeof coin.name === 'string' && coin.name !== '' && typeof coin.symbol === 'string' &&
    Number.isInteger(coin.rank) && coin.rank >= 0 && typeof coin.is_new === 'boolean' && typeof coin.is_active === 'boolean' && (coin.type === 'coin' || coin.type === 'token')
  )), []);
  t.is(new Set(coins.map((coin) => coin.id)).size, coins.length, 'ids unique');
  const ranks = coins.filter((coin) => coin.rank > 0).map((coin) => coin.rank);
  t.is(new Set(ranks).size, ranks.length, 'ranks unique');
  const byId = new Map(coins.map((coin) => [coin.id, coin]));
  const bySymbol = new Map<string, PaprikaCoin[]>();
  for (const coin of coins) bySymbol.set(coin.symbol, [...(bySymbol.get(coin.symbol) ?? []), coin]);
  // the catalogue's coins under their CoinPaprika ids; BTC ranked first
  for (const coin of catalogue.coins.filter((coin) => coin.ids?.coinpaprika)) t.is(byId.get(coin.ids!.coinpaprika!)?.symbol, coin.symbol, coin.ids!.coinpaprika);
  t.is(byId.get('btc-bitcoin')?.rank, 1);

  const tickers = await getJson<Array<{ id: string; symbol: string; rank: number; circulating_supply: number; total_supply: number; max_supply: number; last_updated: string; quotes: { USD: { price: number; market_cap: number; volume_24h: number } } }>>(`${COINPAPRIKA_PATH}/v1/tickers`);
  const tickerIds = new Set(tickers.map((ticker) => ticker.id));
  const scenarioCoins = new Map(scenario.coins.map((coin) => [coin.symbol, coin]));
  for (const ticker of tickers) {
    t.true(typeof ticker.id === 'string' && byId.get(ticker.id)?.rank === ticker.rank && ticker.rank > 0, ticker.id);
    const { price, market_cap } = ticker.quotes.USD;
    t.true(price > 0 && ticker.circulating_supply > 0 && Math.abs(market_cap / (price * ticker.circulating_supply) - 1) < 1e-6, `${ticker.id}: market cap = price × supply`);
  }
  const covered = new Set(tickers.map((ticker) => ticker.symbol).filter((symbol) => scenarioCoins.has(symbol)));
  t.true(covered.size >= 0.9 * COINS, `tickers cover ${covered.size} scenario coins`);
  // prices agree with the replay's, supplies with the catalogue's
  const doge = tickers.find((ticker) => ticker.id === 'doge-dogecoin')!;
  const expected = replay.model.usdPrice(scenarioCoins.get('DOGE')!, Date.parse(doge.last_updated));
  t.true(Math.abs(doge.quotes.USD.price / expected - 1) < 1e-6, `DOGE ${doge.quotes.USD.price} vs ${expected}`);
  t.is(tickers.find((ticker) => ticker.id === 'btc-bitcoin')!.circulating_supply, 19950000);

  const cases = metadata.cases;
  for (const name of METADATA_CASES) t.true(cases[name].length > 0, `case ${name}`);
  const traded = new Set(REPLAY_VENUES.flatMap((venue) => symbols(scenario, venue).map((market) => market.split('/')[0]!)));
  for (const { symbol, best, other } of cases.sharedTicker) {
    t.true(traded.has(symbol), `shared ${symbol} traded`);
    t.deepEqual(bySymbol.get(symbol)!.map((coin) => coin.id).sort(), [best, other].sort());
    t.true(byId.get(best)!.is_active && byId.get(other)!.is_active && byId.get(best)!.rank < byId.get(other)!.rank, `${best} ranks ahead of ${other}`);
    t.true(tickerIds.has(best) && tickerIds.has(other), 'both in the tickers');
  }
  for (const { symbol, active, inactive } of cases.inactiveShadow) {
    t.true(traded.has(symbol), `inactive shadow ${symbol} traded`);
    t.true(byId.get(active)!.is_active && !byId.get(inactive)!.is_active && byId.get(inactive)!.rank < byId.get(active)!.rank, 'the inactive one ranks ahead');
  }
  for (const symbol of cases.inactiveOnly) {
    t.true(traded.has(symbol), `inactive ${symbol} traded`);
    t.true(bySymbol.get(symbol)!.every((coin) => !coin.is_active));
  }
  for (const symbol of cases.unnamed) {
    t.true(traded.has(symbol), `unnamed ${symbol} traded`);
    t.false(bySymbol.has(symbol), `${symbol} not in /v1/coins`);
  }
  for (const symbol of cases.untickered) {
    t.true(traded.has(symbol) && bySymbol.has(symbol), `untickered ${symbol} traded and listed`);
    t.false(tickers.some((ticker) => ticker.symbol === symbol), `${symbol} not in /v1/tickers`);
  }
  for (const { symbol, catalogue: id, other } of cases.catalogueShadow) {
    t.true(traded.has(symbol) && catalogueSymbolSet.has(symbol), `catalogue shadow ${symbol}`);
    t.true(byId.get(id)!.rank < byId.get(other)!.rank && byId.get(other)!.is_active, `${id} ranks ahead of ${other}`);
  }
  for (const symbol of cases.unconvertedOnly) {
    const markets = REPLAY_VENUES.flatMap((venue) => symbols(scenario, venue).filter((market) => market.startsWith(`${symbol}/`)).map((market) => `${venue} ${market}`));
    t.deepEqual(markets.sort(), [`binance ${symbol}/BRL`, `binance ${symbol}/TRY`], `${symbol} only in TRY and BRL`);
    t.true(bySymbol.get(symbol)?.some((coin) => coin.is_active), `${symbol} in /v1/coins`);
  }
  // extras no venue trades share no symbol with a traded coin but the cases'
  const designed = new Set([...cases.sharedTicker, ...cases.inactiveShadow, ...cases.catalogueShadow].map((one) => one.symbol));
  const catalogueNamed = new Set(catalogue.coins.map((coin) => coin.symbol));
  t.deepEqual([...traded].filter((symbol) => !designed.has(symbol) && !catalogueNamed.has(symbol) && (bySymbol.get(symbol)?.length ?? 0) > 1), []);
});

test('the binance ticker stream of make venues-replay: a thousand subscribed markets at the replay\'s prices', async (t) => {
  const { scenario, replay } = offline;
  const streams = serveVenueStreams(replay, { intervalMs: 1000, modelPrices: true });
  const ws = new WebSocket(`${replay.url.replace('http', 'ws')}/binance/ws`);
  try {
    const wanted = symbols(scenario, 'binance').slice(0, 1000).map((symbol) => replay.market('binance', symbol)!);
    const seen = new Map<string, number>();
    await new Promise<void>((resolve, reject) => {
      ws.once('error', reject);
      ws.once('open', () => ws.send(JSON.stringify({ method: 'SUBSCRIBE', params: wanted.map((market) => `${market.id.toLowerCase()}@miniTicker`), id: 1 })));
      ws.on('message', (raw) => {
        const message = JSON.parse(String(raw)) as { e?: string; s: string; c: string };
        if (message.e !== '24hrMiniTicker') return;
        if (!/^\d+(\.\d+)?$/.test(message.c)) reject(new Error(`${message.s}: price ${message.c} is no decimal`));
        seen.set(message.s, Number(message.c));
        if (seen.size === wanted.length) resolve();
      });
    });
    for (const market of wanted.filter((_, i) => i % 50 === 0)) {
      const expected = replay.model.price(market, replay.model.now());
      t.true(Math.abs(seen.get(market.id)! / expected - 1) < 1e-6, `${market.symbol} ${seen.get(market.id)} vs ${expected}`);
    }
  } finally {
    ws.terminate();
    streams.close();
  }
});

test(`up to ${COMPACT_COINS} coins: the recorded tickers as they are, a coin list of the catalogue and extras, the environment names the metadata source`, async (t) => {
  const small = await startOfflineReplay({ coins: 30 });
  try {
    const served = await (await fetch(`${small.replay.url}${COINPAPRIKA_PATH}/v1/tickers`)).text();
    t.is(served, readFileSync(new URL('../../dev/venues/recorded/coinpaprika/tickers.json', import.meta.url), 'utf8'));
    const coins = (await (await fetch(`${small.replay.url}${COINPAPRIKA_PATH}/v1/coins`)).json()) as PaprikaCoin[];
    t.true(coins.length >= 2000 && coins.some((coin) => coin.id === 'eth-ethereum'));
    t.deepEqual(Object.values(small.metadata.cases).flat(), []);
    t.is(replayEnvironment(small.replay).METADATA_SOURCE, 'coinpaprika');
  } finally {
    await small.replay.close();
  }
});
