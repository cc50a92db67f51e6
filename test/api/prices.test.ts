// Prices group over HTTP: /prices with its selectors and fiat conversion, /prices/{slug} and
// /historical-price, against the fixture market of ./fixtures.ts.
import test from 'ava';
import { Decimal } from 'decimal.js';
import { useApi } from '../helpers/http.ts';
import { DAY, byId, bySlug, expected, iso, isoDate, nullsLast, loadCoinFixture, type Expected, type Fixture } from './fixtures.ts';

let fixture: Fixture;
const handles = useApi(test, { setup: async ({ db }) => void (fixture = await loadCoinFixture(db)) });
const state = expected();

let proKey: Promise<string> | undefined;
const get = async (path: string) => handles.api.get(path, await (proKey ??= handles.api.key({ plan: 'pro' })));

/** The price row of a coin, in USD or converted at `rate` (money fields only). */
function priceRow(e: Expected, rate?: string) {
  const convert = (value: string | null, round?: number) => {
    if (value === null || rate === undefined) return value;
    const product = new Decimal(value).mul(rate);
    return round === undefined ? product.toString() : product.toFixed(round);
  };
  const marketcap = e.marketcap === null ? null : new Decimal(e.price!).mul(e.coin.circulating!).toFixed(2);
  return {
    id: e.coin.id,
    slug: e.coin.slug,
    symbol: e.coin.symbol,
    name: e.coin.name,
    rank: e.rank,
    price: convert(e.price),
    marketcap: convert(marketcap, 2),
    volume_24h: rate === undefined ? e.volume_24h : new Decimal(e.volume_24h).mul(rate).toNumber(),
    change_24h: e.change_24h,
    change_7d: e.change_7d,
    change_rank_24h: e.change_rank_24h,
    change_rank_7d: e.change_rank_7d,
    last_updated: e.coin.prices ? iso(fixture.barTimes[2]) : null,
  };
}
const byRank = (ids: number[]) => ids.map((id) => state.get(id)!).sort((a, b) => nullsLast(a.rank, b.rank) || a.coin.id - b.coin.id);

test('/prices: a row per selected coin by rank; price and marketcap decimal strings', async (t) => {
  const response = await get('/api/v1/prices?slugs=alpha,beta,gamma');
  t.is(response.status, 200);
  t.deepEqual(response.body.data, byRank([101, 102, 103]).map((e) => priceRow(e)));
  t.deepEqual(response.body.meta, { currency: 'USD', count: 3 });
  const beta = response.body.data.find((row: { slug: string }) => row.slug === 'beta');
  t.is(beta.price, '30');
  t.is(beta.marketcap, '3000000.00', 'marketcap is a decimal string here');
  t.is(typeof beta.volume_24h, 'number');
  t.is(response.body.data.find((row: { slug: string }) => row.slug === 'gamma').marketcap, null);
});

test('/prices selectors: ids, slugs, case-insensitive symbols; an ambiguous symbol is the best-ranked active coin', async (t) => {
  const ids = async (query: string) => (await get(`/api/v1/prices?${query}`)).body.data.map((row: { id: number }) => row.id);
  t.deepEqual(await ids('ids=104,110'), byRank([104, 110]).map((e) => e.coin.id));
  // ALP: alpha (rank above zeta); BET: beta (eta is delisted, whatever its marketcap)
  t.deepEqual(await ids('symbols=alp,bEt'), byRank([101, 102]).map((e) => e.coin.id));
  t.deepEqual(await ids('symbols=del'), [104], 'a symbol no active coin has: its only coin');
  t.deepEqual(await ids('ids=101&slugs=alpha&symbols=ALP'), [101], 'each coin once');
  t.deepEqual(await ids('slugs=alpha,no-such-coin&ids=999'), [101], 'unknown selectors are skipped');
  t.deepEqual(await ids('slugs=epsilon'), [105], 'a coin without a price has a row');
  t.is((await get('/api/v1/prices?slugs=epsilon')).body.data[0].price, null);
});

test('/prices needs a selector, caps them at 100 combined and checks each list', async (t) => {
  for (const query of ['', '?convert=EUR', '?ids=&slugs=']) {
    const response = await get(`/api/v1/prices${query}`);
    t.is(response.status, 422, query);
    t.deepEqual(response.body.error.details.errors.ids, ['Pass at least one selector: ids, slugs or symbols.']);
  }
  const slugs = (n: number) => Array.from({ length: n }, (_, i) => `coin-${i}`).join(',');
  t.is((await get(`/api/v1/prices?slugs=${slugs(100)}`)).status, 200);
  const over = await get(`/api/v1/prices?slugs=${slugs(99)}&ids=1,2`);
  t.is(over.status, 422);
  // the cap is on the selectors combined: each one sent is named
  t.deepEqual(Object.keys(over.body.error.details.errors).sort(), ['ids', 'slugs']);
  t.is((await get(`/api/v1/prices?ids=${'1'.repeat(1001)}`)).status, 422, 'ids over 1000 characters');
  t.is((await get(`/api/v1/prices?symbols=${'B'.repeat(1001)}`)).status, 422, 'symbols over 1000 characters');
  t.is((await get(`/api/v1/prices?slugs=${'c'.repeat(2001)}`)).status, 422, 'slugs over 2000 characters');
  t.is((await get('/api/v1/prices?ids=-3')).status, 422);
  t.is((await get('/api/v1/prices?slugs=Not%20A%20Slug')).status, 422);
});

test('/prices convert: price, marketcap and volume in the fiat currency at its latest rate', async (t) => {
  const response = await get('/api/v1/prices?slugs=alpha,kappa,gamma&convert=eur');
  t.is(response.status, 200);
  t.deepEqual(response.body.data, byRank([101, 110, 103]).map((e) => priceRow(e, fixture.eurRate)));
  t.deepEqual(response.body.meta, { currency: 'EUR', count: 3 });
  t.is(response.body.data.find((row: { slug: string }) => row.slug === 'alpha').price, new Decimal('110').mul(fixture.eurRate).toString());
  const usd = await get('/api/v1/prices?slugs=alpha&convert=USD');
  t.deepEqual(usd.body.data, [priceRow(state.get(101)!)]);
  const unknown = await get('/api/v1/prices?slugs=alpha&convert=XXX');
  t.is(unknown.status, 422);
  t.deepEqual(Object.keys(unknown.body.error.details.errors), ['convert']);
  t.is((await get('/api/v1/prices?slugs=alpha&convert=EURO')).status, 422);
});

test('/prices/{slug}: one coin, optionally converted; an unknown slug is a 404', async (t) => {
  const response = await get('/api/v1/prices/mu');
  t.is(response.status, 200);
  t.deepEqual(response.body, { data: priceRow(state.get(112)!), meta: { currency: 'USD', count: 1 } });
  const eur = await get('/api/v1/prices/mu?convert=EUR');
  t.deepEqual(eur.body, { data: priceRow(state.get(112)!, fixture.eurRate), meta: { currency: 'EUR', count: 1 } });
  const missing = await get('/api/v1/prices/no-such-coin');
  t.is(missing.status, 404);
  t.is(missing.body.error.code, 'not_found');
  t.is((await get('/api/v1/prices/mu?convert=QQQ')).status, 422);
});

test('/historical-price: the day’s close, else the nearest day’s within 3 days', async (t) => {
  const weekAgo = fixture.barTimes[0];
  const exact = await get(`/api/v1/historical-price?slug=alpha&date=${isoDate(weekAgo)}`);
  t.is(exact.status, 200);
  t.deepEqual(exact.body, {
    data: { slug: 'alpha', symbol: 'ALP', date: isoDate(weekAgo), price: bySlug('alpha').prices![0], currency: 'USD' },
    meta: { price_date: isoDate(weekAgo) },
  });
  // two days later there is no bar; the nearest day with one is a week ago
  const near = await get(`/api/v1/historical-price?slug=alpha&date=${isoDate(weekAgo + 2 * DAY)}`);
  t.deepEqual(near.body, {
    data: { slug: 'alpha', symbol: 'ALP', date: isoDate(weekAgo + 2 * DAY), price: '80', currency: 'USD' },
    meta: { price_date: isoDate(weekAgo) },
  });
  const far = await get(`/api/v1/historical-price?slug=alpha&date=${isoDate(weekAgo - 4 * DAY)}`);
  t.is(far.status, 404);
  t.is(far.body.error.code, 'not_found');
  t.is((await get(`/api/v1/historical-price?slug=no-such-coin&date=${isoDate(weekAgo)}`)).status, 404);
});

test('/historical-price validates its date and needs both parameters', async (t) => {
  const tomorrow = isoDate(Date.now() + DAY);
  for (const query of ['slug=alpha&date=2008-12-31', `slug=alpha&date=${tomorrow}`, 'slug=alpha&date=2021-02-29', 'slug=alpha&date=14.04.2021', 'slug=alpha', 'date=2021-04-14']) {
    const response = await get(`/api/v1/historical-price?${query}`);
    t.is(response.status, 422, query);
    t.is(response.body.error.code, 'validation');
  }
  t.is((await get('/api/v1/historical-price?slug=alpha&date=2009-01-01')).status, 404, 'valid, but no price then');
});

test('an analyst gets the same rows from api.prices, api.coin_price and api.historical_price', async (t) => {
  const http = await get('/api/v1/prices?symbols=ALP,BET&ids=112&convert=EUR');
  const rows = await handles.db.sql`select * from api.prices(array[112], null, array['ALP', 'BET'], 'EUR')`;
  t.deepEqual([...rows], http.body.data);
  const [one] = await handles.db.sql`select * from api.coin_price('alpha')`;
  t.deepEqual(one, (await get('/api/v1/prices/alpha')).body.data);
  const [past] = await handles.db.sql`select * from api.historical_price('alpha', ${isoDate(fixture.barTimes[0])}::text::date)`;
  t.is(past!.price, byId(101).prices![0]);
});
