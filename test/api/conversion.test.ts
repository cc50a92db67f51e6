// Conversion group over HTTP against the fixture market (alpha 110 USD, beta 30 USD, EUR at 0.9 per
// USD): conversions through USD in numeric, round trips, fiat to fiat, the fiat and leg lists.
import test from 'ava';
import { Decimal } from 'decimal.js';
import { useApi } from '../helpers/http.ts';
import { bySlug, expected, loadCoinFixture, type Fixture } from './fixtures.ts';

Decimal.set({ precision: 60 });
let fixture: Fixture;
let rates: Record<string, string> = {};
const handles = useApi(test, {
  setup: async ({ db }) => {
    fixture = await loadCoinFixture(db);
    rates = Object.fromEntries((await db.sql`select currency, rate::text from market.fx_latest`).map((r) => [r.currency, r.rate as string]));
  },
});
let key: Promise<string> | undefined;
const get = async (path: string) => handles.api.get(path, await (key ??= handles.api.key({ plan: 'free' })));
const sig15 = (value: Decimal) => value.toSignificantDigits(15).toFixed();
const price = (slug: string) => bySlug(slug).prices![2];

test('/convert: a coin into coins and fiats through USD, values decimal strings, amount a JSON number', async (t) => {
  const response = await get('/api/v1/convert?from=alpha&to=beta,usd,EUR&amount=2.5');
  t.is(response.status, 200);
  t.deepEqual(response.body.data, {
    from: { slug: 'alpha', symbol: 'ALP', name: 'Alpha', type: 'coin' },
    amount: 2.5,
    results: [
      { slug: 'beta', symbol: 'BET', name: 'Beta', type: 'token', value: sig15(new Decimal('2.5').mul(price('alpha')).div(price('beta'))) },
      { slug: 'usd', symbol: 'USD', name: 'US Dollar', type: 'fiat', value: sig15(new Decimal('2.5').mul(price('alpha'))) },
      { slug: 'eur', symbol: 'EUR', name: 'Euro', type: 'fiat', value: sig15(new Decimal('2.5').mul(price('alpha')).mul(fixture.eurRate)) },
    ],
  });
  t.is((await get('/api/v1/convert?from=alpha&to=usd')).body.data.amount, 1, 'amount defaults to 1');
  // the exact digits in the JSON text, not a float round trip in SQL
  t.is((await get('/api/v1/convert?from=alpha&to=usd&amount=0.1000')).body.data.amount, 0.1);
});

test('round trips: A -> B -> A gives the amount back within rounding', async (t) => {
  for (const [from, to, amount] of [['alpha', 'beta', '2.5'], ['beta', 'eur', '1234.5678'], ['eur', 'gamma', '0.01'], ['jpy', 'alpha', '1000000']] as const) {
    const there = (await get(`/api/v1/convert?from=${from}&to=${to}&amount=${amount}`)).body.data.results[0].value as string;
    const back = (await get(`/api/v1/convert?from=${to}&to=${from}&amount=${there}`)).body.data.results[0].value as string;
    t.true(new Decimal(back).minus(amount).abs().lte(new Decimal(amount).mul('1e-13')), `${from} -> ${to} -> ${from}: ${amount} vs ${back}`);
  }
});

test('fiat to fiat goes through USD: amount / rate(from) * rate(to)', async (t) => {
  const response = await get('/api/v1/convert?from=EUR&to=jpy,gbp,usd&amount=100');
  t.is(response.status, 200);
  const values = response.body.data.results.map((r: { value: string }) => r.value);
  t.deepEqual(values, ['JPY', 'GBP', 'USD'].map((code) => sig15(new Decimal(100).div(rates.EUR!).mul(rates[code]!))));
  t.is(response.body.data.from.type, 'fiat');
});

test('404 for unknown or inactive assets, 422 for bad parameters', async (t) => {
  const unknown = await get('/api/v1/convert?from=dogecoinx&to=usd');
  t.is(unknown.status, 404);
  t.deepEqual(unknown.body.error.code, 'not_found');
  t.is(unknown.body.error.message, 'Unknown currency: dogecoinx.');
  t.is((await get('/api/v1/convert?from=alpha&to=usd,nosuch')).status, 404);
  t.is((await get('/api/v1/convert?from=delta&to=usd')).status, 404, 'a delisted coin is no conversion leg');
  t.is((await get('/api/v1/convert?from=hrk&to=usd')).status, 404, 'an inactive fiat is no conversion leg');
  for (const query of ['to=usd', 'from=alpha', 'from=alpha&to=usd&amount=-1', 'from=alpha&to=usd&amount=abc',
    `from=alpha&to=${Array(11).fill('usd').join(',')}`, 'from=al%20pha!&to=usd']) {
    const response = await get(`/api/v1/convert?${query}`);
    t.is(response.status, 422, query);
    t.is(response.body.error.code, 'validation', query);
  }
});

test('/fiats: active fiats with a rate, USD first, rates both ways as decimal strings', async (t) => {
  const response = await get('/api/v1/fiats');
  t.is(response.status, 200);
  const data = response.body.data as Record<string, unknown>[];
  t.is(data[0]!.symbol, 'USD');
  t.like(data[0], { slug: 'usd', rate_per_usd: '1', usd_value: '1', sign: '$' });
  const eur = data.find((row) => row.symbol === 'EUR')!;
  t.like(eur, { slug: 'eur', name: 'Euro', rate_per_usd: fixture.eurRate, usd_value: sig15(new Decimal(1).div(fixture.eurRate)), source: 'fx-seed', demo: true });
  t.false(data.some((row) => row.symbol === 'HRK'), 'inactive currencies are left out');
  t.is(data.length, Object.keys(rates).length - 1);
  t.deepEqual(response.body.meta, { base: 'USD', count: data.length });
  for (const row of data) {
    t.is(typeof row.rate_per_usd, 'string');
    t.is(typeof row.usd_value, 'string');
  }
});

test('/rates: the fiat legs, then the ranked coins, each with its USD value', async (t) => {
  const response = await get('/api/v1/rates');
  t.is(response.status, 200);
  const data = response.body.data as { slug: string; type: string; usd_value: string }[];
  const fiats = data.filter((row) => row.type === 'fiat');
  t.is(fiats.length, Object.keys(rates).length - 1);
  t.deepEqual(data.slice(0, fiats.length), fiats, 'fiats first');
  const ranked = [...expected().values()].filter((e) => e.rank !== null).sort((a, b) => a.rank! - b.rank!);
  t.deepEqual(data.slice(fiats.length).map((row) => [row.slug, row.type, row.usd_value]), ranked.map((e) => [e.coin.slug, e.coin.type, e.price]));
  t.is(data.find((row) => row.slug === 'eur')!.usd_value, sig15(new Decimal(1).div(fixture.eurRate)));
  t.deepEqual(response.body.meta, { base: 'USD', count: data.length });
});
