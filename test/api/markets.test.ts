// Markets group over HTTP: tickers (filters, sort, pagination), a coin's markets, pairs, a pair's
// detail and a coin's raw symbols, against ./exchange_fixtures.ts; and the coin detail's counts.
import test from 'ava';
import { Decimal } from 'decimal.js';
import { useApi } from '../helpers/http.ts';
import { PAIRS, TICKERS, VENUES, loadVenueFixture, pairOf, type FixtureTicker } from './exchange_fixtures.ts';
import { byId } from './fixtures.ts';

const handles = useApi(test, { setup: async ({ db }) => void (await loadVenueFixture(db)) });

let key: Promise<string> | undefined;
const get = async (path: string) => handles.api.get(path, await (key ??= handles.api.key({ plan: 'pro' })));
const ids = (body: { data: { id: number }[] }) => body.data.map((row) => row.id);
const byVolume = (rows: FixtureTicker[]) => [...rows].sort((a, b) => new Decimal(b.volumeUsd).comparedTo(a.volumeUsd) || a.id - b.id);

test('/tickers: every ticker, largest 24h USD volume first, typed as the spec says', async (t) => {
  const response = await get('/api/v1/tickers');
  t.is(response.status, 200);
  t.deepEqual(ids(response.body), byVolume(TICKERS).map((x) => x.id));
  t.is(response.body.meta.total, TICKERS.length);
  const row = response.body.data.find((r: { id: number }) => r.id === 303);
  const fixture = TICKERS.find((x) => x.id === 303)!;
  const venue = VENUES.find((v) => v.id === fixture.exchange)!;
  t.like(row, {
    exchange_id: venue.id, exchange: venue.slug, exchange_name: venue.name, pair_id: pairOf(fixture).id,
    symbol: 'MU/BET', exchange_symbol: 'MUBET', base: 'MU', base_slug: 'mu', quote: 'BET', quote_slug: 'beta',
    instrument: 'spot', price: fixture.price, price_usd: fixture.priceUsd, bid: fixture.bid, ask: fixture.ask,
    spread: fixture.spread, volume: fixture.volume, volume_usd: Number(fixture.volumeUsd), change_24h: fixture.change,
  });
  for (const field of ['price', 'price_usd', 'bid', 'ask', 'volume']) t.is(typeof row[field], 'string', `${field} is a decimal string`);
  for (const field of ['volume_usd', 'spread', 'change_24h']) t.is(typeof row[field], 'number', `${field} is a number`);
  t.regex(row.last_trade_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
  t.is(response.body.data.find((r: { id: number }) => r.id === 301).quote_slug, null, 'a fiat quote has no coin');
});

test('/tickers filters: exchange, pair, instrument (plurals accepted), search, volume and change bounds', async (t) => {
  const expectIds = async (query: string, pick: (x: FixtureTicker) => boolean) => {
    const response = await get(`/api/v1/tickers?${query}`);
    t.is(response.status, 200, query);
    t.deepEqual(ids(response.body), byVolume(TICKERS.filter(pick)).map((x) => x.id), query);
  };
  await expectIds('exchange=amm-dex', (x) => x.exchange === 202);
  await expectIds('pair=401', (x) => pairOf(x).id === 401);
  await expectIds('instrument=swap', (x) => x.instrument === 'swap');
  await expectIds('instrument=spots', (x) => x.instrument === 'spot');
  await expectIds('search=alp-usd', (x) => x.symbol.toUpperCase().includes('ALP-USD'));
  await expectIds('search=/usd', (x) => `/${x.quote}`.includes('/USD'));
  await expectIds('min_volume=7000&max_volume=1000000', (x) => Number(x.volumeUsd) >= 7000 && Number(x.volumeUsd) <= 1000000);
  await expectIds('min_change=-2&max_change=10', (x) => x.change !== null && x.change >= -2 && x.change <= 10);
  await expectIds('exchange=no-such-venue', () => false);
});

test('/tickers sort: price_usd ascending, change_24h with nulls last, updated; pagination', async (t) => {
  const price = await get('/api/v1/tickers?sort=price_usd');
  t.deepEqual(ids(price.body), [...TICKERS].sort((a, b) => new Decimal(a.priceUsd).comparedTo(b.priceUsd) || Number(b.volumeUsd) - Number(a.volumeUsd)).map((x) => x.id));
  for (const sort of ['change_24h', '-change_24h']) {
    const response = await get(`/api/v1/tickers?sort=${sort}`);
    const sign = sort.startsWith('-') ? -1 : 1;
    const withChange = TICKERS.filter((x) => x.change !== null).sort((a, b) => sign * (a.change! - b.change!));
    t.deepEqual(ids(response.body), [...withChange, ...TICKERS.filter((x) => x.change === null)].map((x) => x.id), sort);
  }
  // updated_at is the fixture minute minus (id - 300) minutes: newest first is ascending id
  t.deepEqual(ids((await get('/api/v1/tickers?sort=-updated')).body), TICKERS.map((x) => x.id));
  const page = await get('/api/v1/tickers?per_page=2&page=3');
  t.deepEqual(ids(page.body), byVolume(TICKERS).slice(4, 6).map((x) => x.id));
  t.is(page.body.links.next, null);
});

test('/tickers rejects bad parameters with 422', async (t) => {
  for (const query of ['instrument=forward', 'sort=name', 'exchange=Big_CEX', 'pair=0', 'min_volume=-1', 'min_change=x', 'search=' + 'x'.repeat(51), 'per_page=251']) {
    const response = await get(`/api/v1/tickers?${query}`);
    t.is(response.status, 422, query);
    t.is(response.body.error.code, 'validation');
  }
});

test('/coins/{slug}/markets: tickers with the coin as base or quote; 404 for an unknown coin', async (t) => {
  const beta = await get('/api/v1/coins/beta/markets');
  t.is(beta.status, 200);
  t.deepEqual(ids(beta.body), byVolume(TICKERS.filter((x) => x.base === 102 || x.quoteCoin === 102)).map((x) => x.id));
  const alphaSwaps = await get('/api/v1/coins/alpha/markets?instrument=swap');
  t.deepEqual(ids(alphaSwaps.body), [302]);
  const missing = await get('/api/v1/coins/no-such-coin/markets');
  t.is(missing.status, 404);
  t.is(missing.body.error.message, 'Coin not found.');
});

test('/coins/{slug}/symbols: the raw per-venue symbols of the coin as base', async (t) => {
  const response = await get('/api/v1/coins/alpha/symbols');
  t.is(response.status, 200);
  const own = TICKERS.filter((x) => x.base === 101);
  t.deepEqual(
    response.body.data.map((r: { exchange: string; exchange_symbol: string; instrument: string }) => [r.exchange, r.exchange_symbol, r.instrument]),
    own
      .map((x) => [VENUES.find((v) => v.id === x.exchange)!.slug, x.symbol, x.instrument])
      .sort((a, b) => a[0]!.localeCompare(b[0]!) || a[2]!.localeCompare(b[2]!)),
  );
  t.is(response.body.meta.count, own.length);
  t.is((await get('/api/v1/coins/no-such-coin/symbols')).status, 404);
});

test('/pairs: venue-aggregated, summed volume and volume-weighted price; filters and sort', async (t) => {
  const response = await get('/api/v1/pairs');
  t.is(response.status, 200);
  const aggregate = PAIRS.map((p) => {
    const own = TICKERS.filter((x) => pairOf(x).id === p.id);
    const volume = own.reduce((sum, x) => sum.plus(x.volumeUsd), new Decimal(0));
    const weighted = own.reduce((sum, x) => sum.plus(new Decimal(x.priceUsd).mul(x.volumeUsd)), new Decimal(0)).div(volume);
    return { ...p, volume, exchanges: new Set(own.map((x) => x.exchange)).size, tickers: own.length, priceUsd: weighted };
  });
  const order = [...aggregate].sort((a, b) => b.volume.comparedTo(a.volume) || a.id - b.id);
  t.deepEqual(ids(response.body), order.map((p) => p.id));
  const alp = response.body.data.find((r: { id: number }) => r.id === 401);
  const expected = aggregate.find((p) => p.id === 401)!;
  t.like(alp, { symbol: 'ALP/USD', base: 'ALP', base_slug: 'alpha', quote: 'USD', quote_slug: null, exchanges: expected.exchanges, tickers: expected.tickers, volume_usd: expected.volume.toNumber() });
  t.is(typeof alp.price_usd, 'string');
  t.true(new Decimal(alp.price_usd).minus(expected.priceUsd).abs().lt('0.0001'), `${alp.price_usd} ~ ${expected.priceUsd}`);
  t.deepEqual(ids((await get('/api/v1/pairs?coin=beta')).body), order.filter((p) => p.base === 102 || p.quoteCoin === 102).map((p) => p.id));
  t.deepEqual(ids((await get('/api/v1/pairs?search=gam')).body), [403]);
  t.deepEqual(ids((await get('/api/v1/pairs?sort=volume_usd')).body), [...order].reverse().map((p) => p.id));
  t.deepEqual(ids((await get('/api/v1/pairs?min_volume=7000&max_volume=50000')).body), order.filter((p) => p.volume.gte(7000) && p.volume.lte(50000)).map((p) => p.id));
  for (const query of ['sort=price', 'coin=Bad Slug', 'search=' + 'x'.repeat(51)]) t.is((await get(`/api/v1/pairs?${query}`)).status, 422, query);
});

test('/pairs/{id}: the pair with every venue listing it; 404 for an unknown id, 422 for a bad one', async (t) => {
  const response = await get('/api/v1/pairs/401');
  t.is(response.status, 200);
  t.is(response.body.data.symbol, 'ALP/USD');
  t.deepEqual(response.body.data.markets.map((r: { id: number }) => r.id), byVolume(TICKERS.filter((x) => pairOf(x).id === 401)).map((x) => x.id));
  const missing = await get('/api/v1/pairs/999999');
  t.is(missing.status, 404);
  t.is(missing.body.error.message, 'Pair not found.');
  t.is((await get('/api/v1/pairs/abc')).status, 422);
});

test('coin detail counts venues, pairs and tickers of the coin as base or quote', async (t) => {
  for (const coin of [101, 102, 104]) {
    const own = TICKERS.filter((x) => x.base === coin || x.quoteCoin === coin);
    const response = await get(`/api/v1/coins/${byId(coin).slug}`);
    t.deepEqual(response.body.data.counts, {
      exchanges: new Set(own.map((x) => x.exchange)).size, pairs: new Set(own.map((x) => pairOf(x).id)).size, tickers: own.length, wallets: 0,
    });
  }
});
