// ccxt, configured by createVenue, against the loopback replay of each venue: the formats parse into
// the scenario's markets, prices and candles, history pages back to the first trade, and every fault
// surfaces as the error the exchange source has to handle. No network, no database.
import test from 'ava';
import ccxt from 'ccxt';
import { createVenue, DEFAULT_VENUE_IDS, parseExchangeUrls, parseExchanges, rebaseUrl, VENUE_IDS, type VenueId } from '../../src/sources/exchanges/venues.ts';
import { MINUTE, HOUR, makeScenario, startVenueReplay, type ReplayScenario, type VenueReplay } from '../../dev/venues/replay.ts';

const now = Date.now();
const FIRST = Math.floor((now - 600 * MINUTE) / MINUTE) * MINUTE;
const scenario: ReplayScenario = {
  coins: [
    { symbol: 'BTC', price: 60000, volumeUsd: 3e10 },
    { symbol: 'ETH', price: 3000, volumeUsd: 1e10 },
    { symbol: 'USDT', price: 1, volumeUsd: 5e10, volatility: 0.01 },
    { symbol: 'NEW', price: 2, volumeUsd: 1e6, firstTradeAt: FIRST },
    { symbol: 'OLD', price: 0.5, volumeUsd: 1e5 },
  ],
  venues: Object.fromEntries(
    VENUE_IDS.map((id) => [id, { markets: ['BTC/USD', 'BTC/USDT', 'ETH/USDT', 'ETH/BTC', 'BTC/EUR', 'NEW/USDT', 'OLD/USDT'], bias: id === 'kraken' ? 0.01 : 0, ...(id === 'okx' ? { swaps: ['BTC', 'ETH'] } : {}) }]),
  ),
};

let replay: VenueReplay;
test.before(async () => {
  replay = await startVenueReplay(scenario);
});
test.after.always(async () => {
  await replay?.close();
});

const venue = (id: VenueId, timeoutMs?: number) => createVenue(id, { baseUrl: replay.baseUrl(id), ...(timeoutMs ? { timeoutMs } : {}) });
type Candle = [number, number, number, number, number, number];
const realOhlc = (c: Candle) => c[2] >= Math.max(c[1], c[4]) && c[3] <= Math.min(c[1], c[4]) && c[3] > 0;

test('config: EXCHANGES and EXCHANGE_URLS parse, unknown venues are named', (t) => {
  t.deepEqual(parseExchanges(undefined), [...DEFAULT_VENUE_IDS]);
  t.deepEqual(parseExchanges('mexc,htx'), ['mexc', 'htx']);
  t.deepEqual(parseExchanges('gate, bitget'), ['gate', 'bitget']);
  t.deepEqual(parseExchanges(' OKX, binance,okx '), ['okx', 'binance']);
  t.throws(() => parseExchanges('binance,mtgox'), { message: /unknown exchange venue "mtgox"/ });
  t.deepEqual(parseExchangeUrls('binance=http://127.0.0.1:9/binance, okx=http://proxy:8080'), { binance: 'http://127.0.0.1:9/binance', okx: 'http://proxy:8080' });
  t.throws(() => parseExchangeUrls('ftx=http://x'), { message: /unknown exchange venue "ftx"/ });
  t.throws(() => parseExchangeUrls('binance'), { message: /venue=url/ });
  t.is(rebaseUrl('https://api.{hostname}/v5', 'http://127.0.0.1:1/bybit/'), 'http://127.0.0.1:1/bybit/v5');
});

test('createVenue: every API URL of every venue is rebased, rate limiting on, spot only', (t) => {
  for (const id of VENUE_IDS) {
    const exchange = venue(id);
    const urls = JSON.stringify(exchange.urls['api']);
    t.false(/https?:\/\/(?!127\.0\.0\.1)/.test(urls), `${id}: ${urls}`);
    t.true(exchange.enableRateLimit);
    t.is(exchange.options['defaultType'], 'spot');
  }
});

for (const id of VENUE_IDS) {
  test(`${id}: markets, tickers and candles in the venue's format`, async (t) => {
    const exchange = venue(id);
    const markets = await exchange.loadMarkets();
    for (const symbol of ['BTC/USD', 'BTC/USDT', 'ETH/USDT', 'ETH/BTC', 'BTC/EUR', 'NEW/USDT']) {
      const market = markets[symbol];
      t.truthy(market, `${id} ${symbol}`);
      t.true(market?.spot);
      t.is(market?.id, replay.market(id, symbol)?.id);
    }
    if (id === 'kraken') t.is(markets['BTC/USD']?.id, 'XXBTZUSD'); // XBT → BTC
    if (id === 'okx') t.is(markets['BTC/USDT:USDT']?.contractSize, 0.01);
    else t.is(Object.values(markets).filter((m) => !m?.spot).length, 0);

    const tickers = await exchange.fetchTickers();
    const btc = tickers['BTC/USDT'];
    if (!btc) return t.fail(`${id} tickers: ${Object.keys(tickers).join(' ')}`);
    const model = replay.model;
    const expected = model.ticker(replay.market(id, 'BTC/USDT')!)!;
    t.true(Math.abs(btc!.last! / expected.last - 1) < 0.002, `${id} last ${btc?.last} vs ${expected.last}`);
    t.true(Math.abs(btc!.last! / (60000 * (id === 'kraken' ? 1.01 : 1)) - 1) < 0.05);
    t.true(Math.abs(btc!.baseVolume! / expected.v - 1) < 0.01);
    if (id !== 'coinbase') t.true(btc!.bid! < btc!.last! && btc!.ask! > btc!.last!); // Coinbase's product list has no book
    // the model's prices walk with the clock: compare with the model's own cross rate, and that with the anchors
    const ethBtc = model.ticker(replay.market(id, 'ETH/BTC')!)!;
    t.true(Math.abs(tickers['ETH/BTC']!.last! / ethBtc.last - 1) < 0.002, `${id} ETH/BTC ${tickers['ETH/BTC']!.last} vs ${ethBtc.last}`);
    t.true(Math.abs(ethBtc.last / (3000 / 60000) - 1) < 0.15);

    const candles = (await exchange.fetchOHLCV('BTC/USDT', '1m', undefined, 5)) as Candle[];
    t.true(candles.length >= 5 && candles.every(realOhlc));
    const last = candles.at(-1)!;
    t.is(last[0], Math.floor(Date.now() / MINUTE) * MINUTE); // the open, unfinished minute
    const closed = candles.at(-2)!;
    const truth = model.minute(replay.market(id, 'BTC/USDT')!, closed[0])!;
    t.true(Math.abs(closed[1] / truth.o - 1) < 1e-6 && Math.abs(closed[2] / truth.h - 1) < 1e-6 && Math.abs(closed[4] / truth.c - 1) < 1e-6);

    const hours = (await exchange.fetchOHLCV('BTC/USDT', '1h', now - 6 * HOUR, 5)) as Candle[];
    // ccxt asks gate for from … from + (limit - 1) hours, then drops the candle holding an unaligned since
    t.is(hours.length, id === 'gate' ? 4 : 5);
    t.true(hours.every(realOhlc) && hours.every((c, i) => i === 0 || c[0] - hours[i - 1]![0] === HOUR));
    const days = (await exchange.fetchOHLCV('ETH/USDT', '1d', undefined, 3)) as Candle[];
    t.true(days.length >= 1 && days.every(realOhlc));
  });
}

// ccxt 4.5.84: coinbase caps a paginated call at 300 candles (it clamps `limit` before paginating) and
// kucoin's spot pagination filters its rows by a 'timestamp' key they do not have; both are walked by
// `since` below, the way the source has to for them. Gate's pages after the first ask `from` one
// second before a candle (since steps by the page less 1 ms, cut to seconds) and `to` one page less
// an interval on: the candle between two pages is never asked for, so it is walked by `since` too.
const PAGINATED: VenueId[] = ['binance', 'kraken', 'okx', 'bybit', 'bitget', 'mexc', 'htx'];
for (const id of VENUE_IDS) {
  test(`${id}: history walks back to the first trade without gaps or duplicates`, async (t) => {
    const exchange = venue(id);
    await exchange.loadMarkets();
    const since = FIRST - 300 * MINUTE;
    let candles: Candle[];
    if (PAGINATED.includes(id)) {
      candles = (await exchange.fetchOHLCV('NEW/USDT', '1m', since, undefined, { paginate: true, maxEntriesPerRequest: id === 'kraken' ? 720 : 200 })) as Candle[];
    } else {
      candles = [];
      for (let from = since; from < Date.now(); ) {
        const page = (await exchange.fetchOHLCV('NEW/USDT', '1m', from, 300)) as Candle[];
        const next = page.filter((c) => c[0] >= from);
        candles.push(...next);
        from = next.length ? next.at(-1)![0] + MINUTE : from + 300 * MINUTE;
      }
      if (id === 'coinbase') {
        const capped = await exchange.fetchOHLCV('NEW/USDT', '1m', since, undefined, { paginate: true });
        t.is(capped.length, 300);
      }
    }
    t.is(candles[0]![0], FIRST, `${id} starts at the first trade`);
    const current = Math.floor(Date.now() / MINUTE) * MINUTE;
    t.true(candles.at(-1)![0] >= current - MINUTE);
    t.true(candles.every((c, i) => i === 0 || c[0] - candles[i - 1]![0] === MINUTE), `${id}: no gap, no duplicate`);
    t.true(candles.every(realOhlc));
  });
}

test('okx: swap instruments and liquidation orders parse', async (t) => {
  const okx = venue('okx');
  await okx.loadMarkets();
  const swap = okx.market('ETH/USDT:USDT');
  t.is(swap.contractSize, 0.1);
  t.true(swap.swap && swap.linear === true);
  const response = (await okx.request('public/liquidation-orders', 'public', 'GET', { instType: 'SWAP', state: 'filled', uly: 'BTC-USDT' })) as {
    code: string;
    data: Array<{ instId: string; uly: string; details: Array<Record<string, string>> }>;
  };
  t.is(response.code, '0');
  const details = response.data[0]!.details;
  t.is(response.data[0]!.instId, 'BTC-USDT-SWAP');
  t.true(details.length === 100, 'a full page');
  const times = details.map((d) => Number(d['ts']));
  t.true(times.every((ts, i) => i === 0 || ts < times[i - 1]!), 'newest first, distinct');
  for (const d of details) {
    t.true(Number(d['bkPx']) > 50000 && Number(d['sz']) >= 1);
    t.true((d['side'] === 'sell' && d['posSide'] === 'long') || (d['side'] === 'buy' && d['posSide'] === 'short'));
  }
  const older = (await okx.request('public/liquidation-orders', 'public', 'GET', { instType: 'SWAP', state: 'filled', uly: 'BTC-USDT', after: String(times.at(-1)) })) as typeof response;
  t.true(Number(older.data[0]!.details[0]!['ts']) < times.at(-1)!);
  const again = (await okx.request('public/liquidation-orders', 'public', 'GET', { instType: 'SWAP', state: 'filled', uly: 'BTC-USDT' })) as typeof response;
  // the same order again, found by its time: an order newer than the first page may have filled meanwhile
  t.deepEqual(again.data[0]!.details.find((d) => d['ts'] === details[1]!['ts']), details[1], 'deterministic');
});

test('listing and delisting at run time', async (t) => {
  const before = venue('binance');
  await before.loadMarkets();
  t.falsy(before.markets?.['NEW/BTC']);
  replay.list('binance', 'NEW/BTC');
  replay.delist('binance', 'OLD/USDT');
  const after = venue('binance');
  await after.loadMarkets();
  t.truthy(after.markets?.['NEW/BTC']);
  t.falsy(after.markets?.['OLD/USDT']);
  const tickers = await after.fetchTickers();
  t.truthy(tickers['NEW/BTC']);
  t.falsy(tickers['OLD/USDT']);
  // the old instance still knows OLD/USDT; the venue now refuses it
  await t.throwsAsync(before.fetchOHLCV('OLD/USDT', '1m', undefined, 2), { instanceOf: ccxt.BadSymbol });
});

/**
 * What each fault raises, per venue, from fetchOHLCV on loaded markets: the source's contract.
 * ccxt classes unless said otherwise; `[]` = ccxt answers an empty result without an error.
 */
const EXPECTED: Record<VenueId, Record<string, string>> = {
  binance: { '429': 'DDoSProtection', '418': 'DDoSProtection', '500': 'OperationFailed', '503': 'OperationFailed', down: 'NetworkError', slow: 'RequestTimeout', malformed: 'rows of undefined', truncated: 'SocketError' },
  coinbase: { '429': 'RateLimitExceeded', '418': 'RateLimitExceeded', '500': 'ExchangeError', '503': 'ExchangeError', down: 'NetworkError', slow: 'RequestTimeout', malformed: '[]', truncated: 'SocketError' },
  kraken: { '429': 'DDoSProtection', '418': 'DDoSProtection', '500': 'ExchangeNotAvailable', '503': 'ExchangeNotAvailable', down: 'NetworkError', slow: 'RequestTimeout', malformed: '[]', truncated: 'SocketError' },
  okx: { '429': 'RateLimitExceeded', '418': 'RateLimitExceeded', '500': 'OnMaintenance', '503': 'OnMaintenance', down: 'NetworkError', slow: 'RequestTimeout', malformed: '[]', truncated: 'SocketError' },
  bybit: { '429': 'RateLimitExceeded', '418': 'RateLimitExceeded', '500': 'ExchangeError', '503': 'ExchangeError', down: 'NetworkError', slow: 'RequestTimeout', malformed: '[]', truncated: 'SocketError' },
  kucoin: { '429': 'ExchangeError', '418': 'ExchangeError', '500': 'ExchangeNotAvailable', '503': 'ExchangeNotAvailable', down: 'NetworkError', slow: 'RequestTimeout', malformed: '[]', truncated: 'SocketError' },
  gate: { '429': 'RateLimitExceeded', '418': 'RateLimitExceeded', '500': 'ExchangeNotAvailable', '503': 'ExchangeNotAvailable', down: 'NetworkError', slow: 'RequestTimeout', malformed: 'rows of undefined', truncated: 'SocketError' },
  bitget: { '429': 'DDoSProtection', '418': 'DDoSProtection', '500': 'ExchangeError', '503': 'ExchangeError', down: 'NetworkError', slow: 'RequestTimeout', malformed: '[]', truncated: 'SocketError' },
  mexc: { '429': 'RateLimitExceeded', '418': 'RateLimitExceeded', '500': 'ExchangeError', '503': 'ExchangeNotAvailable', down: 'NetworkError', slow: 'RequestTimeout', malformed: 'rows of undefined', truncated: 'SocketError' },
  htx: { '429': 'ExchangeError', '418': 'ExchangeError', '500': 'ExchangeError', '503': 'ExchangeError', down: 'NetworkError', slow: 'RequestTimeout', malformed: '[]', truncated: 'SocketError' },
};
const FAULTS = { '429': { status: 429 }, '418': { status: 418 }, '500': { status: 500 }, '503': { status: 503 }, down: { down: true }, slow: { delayMs: 600 }, malformed: { malformed: true }, truncated: { truncated: true } } as const;

for (const id of VENUE_IDS) {
  test.serial(`${id}: each fault surfaces as the error the source catches, and the venue recovers`, async (t) => {
    const exchange = venue(id, 300);
    await exchange.loadMarkets();
    const seen: Record<string, string> = {};
    for (const [name, fault] of Object.entries(FAULTS)) {
      replay.faults.set(id, fault);
      try {
        const result = await exchange.fetchOHLCV('BTC/USDT', '1m', undefined, 2);
        // a body that does not parse is handed to the parser as text: no error, rows of nothing or none
        seen[name] = result.length === 0 ? '[]' : result.every((row) => row[0] === undefined) ? 'rows of undefined' : `rows ${result.length}`;
      } catch (error) {
        seen[name] = (error as Error).constructor.name;
        if (name === '429' || name === '418' || name === 'down' || name === 'slow') {
          // the family the source backs off on
          t.true(error instanceof ccxt.NetworkError || error instanceof ccxt.ExchangeError, `${id} ${name}`);
        }
      } finally {
        replay.faults.clear(id);
      }
    }
    t.deepEqual(seen, EXPECTED[id]);
    const requests = Object.values(replay.requests(id)).reduce((a, b) => a + b, 0);
    t.true(requests > Object.keys(FAULTS).length);
    const healthy = await exchange.fetchOHLCV('BTC/USDT', '1m', undefined, 2);
    t.is(healthy.length, 2);
  });
}

test('a 429 carries Retry-After', async (t) => {
  replay.faults.set('okx', { status: 429, retryAfterSeconds: 7 });
  try {
    const response = await fetch(`${replay.baseUrl('okx')}/api/v5/market/tickers?instType=SPOT`);
    t.is(response.status, 429);
    t.is(response.headers.get('retry-after'), '7');
    t.is(((await response.json()) as { code: string }).code, '50011');
  } finally {
    replay.faults.clear('okx');
  }
});

test('makeScenario: 300 ranked coins, each venue a realistic share in several quotes', (t) => {
  const big = makeScenario({ coins: 300, now: () => now });
  t.is(big.coins.length, 300);
  t.is(new Set(big.coins.map((c) => c.symbol)).size, 300);
  t.true(big.coins.every((c, i) => i === 0 || c.volumeUsd < big.coins[i - 1]!.volumeUsd));
  for (const id of VENUE_IDS) {
    const markets = big.venues[id]!.markets as string[];
    const bases = new Set(markets.map((m) => m.split('/')[0]));
    t.true(bases.size > 100 && bases.size < 300, `${id} lists ${bases.size}`);
    t.true(new Set(markets.map((m) => m.split('/')[1])).size >= 3);
    t.true(bases.has('BTC'));
  }
  t.deepEqual(makeScenario({ coins: 300, now: () => now }).venues.kraken, big.venues.kraken, 'deterministic');
});
