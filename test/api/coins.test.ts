// Coins group over HTTP: the four coin lists (filters, selectors, sort, pagination, movers),
// trending and the coin detail, against the fixture market of ./fixtures.ts.
import test from 'ava';
import { Decimal } from 'decimal.js';
import { coinRow } from '../../src/api/coins.ts';
import { priceRoutes } from '../../src/api/prices.ts';
import { absoluteLogos } from '../../src/http/logos.ts';
import { useApi } from '../helpers/http.ts';
import {
  COINS, DAY, PUBLIC_STATUSES, STATUSES, bySlug, expected, iso, isoDate, listOrder, listRow, loadCoinFixture,
  type Expected, type Fixture,
} from './fixtures.ts';

let fixture: Fixture;
const handles = useApi(test, { setup: async ({ db }) => void (fixture = await loadCoinFixture(db)) });
const state = expected();
const publicRows = [...state.values()].filter((e) => PUBLIC_STATUSES.includes(e.coin.status));

let proKey: Promise<string> | undefined;
const get = async (path: string) => handles.api.get(path, await (proKey ??= handles.api.key({ plan: 'pro' })));
const slugs = (body: { data: { slug: string }[] }) => body.data.map((row) => row.slug);
const slugsOf = (rows: Expected[]) => rows.map((e) => e.coin.slug);

test('/coins lists the public statuses by rank, each row typed as the spec says', async (t) => {
  const response = await get('/api/v1/coins');
  t.is(response.status, 200);
  const order = listOrder(publicRows);
  t.deepEqual(response.body.data, order.map((e) => listRow(e, fixture)));
  t.deepEqual(response.body.meta, { current_page: 1, from: 1, last_page: 1, per_page: 100, to: order.length, total: order.length });
  const alpha = response.body.data.find((row: { slug: string }) => row.slug === 'alpha');
  t.is(typeof alpha.price, 'string', 'prices are decimal strings');
  t.is(typeof alpha.circulating_supply, 'string');
  t.is(typeof alpha.marketcap, 'number', 'marketcap is a number on list rows');
  t.is(response.body.data.find((row: { slug: string }) => row.slug === 'gamma').marketcap, null, 'no circulating supply: no marketcap');
  for (const field of ['volume_24h', 'change_24h', 'change_7d', 'rank', 'change_rank_24h', 'dominance']) t.is(typeof alpha[field], 'number', field);
});

test('pagination: pages, links and meta; a page past the end is empty but keeps the total', async (t) => {
  const order = listOrder(publicRows);
  const response = await get('/api/v1/coins?per_page=3&page=2');
  t.deepEqual(slugs(response.body), slugsOf(order.slice(3, 6)));
  const lastPage = Math.ceil(order.length / 3);
  t.deepEqual(response.body.meta, { current_page: 2, from: 4, last_page: lastPage, per_page: 3, to: 6, total: order.length });
  t.is(response.body.links.prev, `${handles.api.base}/api/v1/coins?per_page=3&page=1`, 'absolute, as the reference has them');
  t.is(response.body.links.next, `${handles.api.base}/api/v1/coins?per_page=3&page=3`);
  t.is(response.body.links.last, `${handles.api.base}/api/v1/coins?per_page=3&page=${lastPage}`);
  const past = await get('/api/v1/coins?per_page=3&page=99');
  t.deepEqual(past.body.data, []);
  t.is(past.body.meta.total, order.length);
  t.is(past.body.meta.from, null);
});

test('per_page is capped by plan with a 422, never clamped', async (t) => {
  const free = await handles.api.key({ plan: 'free' });
  const starter = await handles.api.key({ plan: 'starter' });
  t.is((await handles.api.get('/api/v1/coins?per_page=100', free)).status, 200);
  const over = await handles.api.get('/api/v1/coins/gainers?per_page=101', free);
  t.is(over.status, 422);
  t.is(over.body.error.code, 'validation');
  t.deepEqual(Object.keys(over.body.error.details.errors), ['per_page']);
  t.is((await handles.api.get('/api/v1/coins/recently-added?per_page=250', starter)).status, 200);
  t.is((await handles.api.get('/api/v1/coins/losers?per_page=251', starter)).status, 422);
  t.is((await get('/api/v1/coins?per_page=0')).status, 422);
  t.is((await get('/api/v1/coins?page=0')).status, 422);
});

test('status takes each of the six listing statuses; the default is the public ones', async (t) => {
  for (const status of STATUSES) {
    const response = await get(`/api/v1/coins?status=${status}`);
    t.is(response.status, 200, status);
    t.deepEqual(slugs(response.body).sort(), COINS.filter((c) => c.status === status).map((c) => c.slug).sort(), status);
  }
  t.deepEqual(slugs((await get('/api/v1/coins')).body).sort(), slugsOf(publicRows).sort());
  t.is((await get('/api/v1/coins?status=listed')).status, 422);
});

test('type filters coins and tokens', async (t) => {
  t.deepEqual(slugs((await get('/api/v1/coins?type=token')).body), slugsOf(listOrder(publicRows.filter((e) => e.coin.type === 'token'))));
  t.deepEqual(slugs((await get('/api/v1/coins?type=coin&status=progressing')).body), ['nu']);
  t.is((await get('/api/v1/coins?type=nft')).status, 422);
});

test('search matches name or symbol, case-insensitively, up to 100 characters', async (t) => {
  // "alp" is in alpha's name and in zeta's symbol ALP
  t.deepEqual(slugs((await get('/api/v1/coins?search=aLp')).body), slugsOf(listOrder([state.get(101)!, state.get(106)!])));
  t.deepEqual(slugs((await get('/api/v1/coins?search=' + 'x'.repeat(100))).body), []);
  const long = await get('/api/v1/coins?search=' + 'x'.repeat(101));
  t.is(long.status, 422);
  t.deepEqual(Object.keys(long.body.error.details.errors), ['search']);
});

test('min/max bounds are inclusive and a coin without the figure never passes one', async (t) => {
  const within = (pick: (e: Expected) => number | null, min: number, max: number) =>
    slugsOf(listOrder(publicRows.filter((e) => pick(e) !== null && pick(e)! >= min && pick(e)! <= max)));
  t.deepEqual(slugs((await get('/api/v1/coins?min_price=110&max_price=110')).body), ['alpha']);
  t.deepEqual(slugs((await get('/api/v1/coins?min_price=2.5&max_price=99.997')).body), within((e) => Number(e.price), 2.5, 99.997));
  const [mu, beta] = [state.get(112)!.marketcap!, state.get(102)!.marketcap!];
  t.deepEqual(slugs((await get(`/api/v1/coins?min_marketcap=${mu}&max_marketcap=${beta}`)).body), within((e) => e.marketcap, mu, beta));
  t.false(slugs((await get('/api/v1/coins?min_marketcap=0')).body).includes('gamma'));
  t.deepEqual(slugs((await get('/api/v1/coins?min_volume=1000')).body), ['mu']);
  t.deepEqual(slugs((await get('/api/v1/coins?min_volume=40&max_volume=70')).body), within((e) => e.volume_24h, 40, 70));
  for (const bad of ['min_price=-1', 'max_marketcap=abc', 'min_volume=1e6']) t.is((await get(`/api/v1/coins?${bad}`)).status, 422, bad);
});

test('selectors: ids, slugs and case-insensitive symbols; an ambiguous symbol is the best-ranked active coin', async (t) => {
  t.deepEqual(slugs((await get('/api/v1/coins?ids=101,104')).body), slugsOf(listOrder([state.get(101)!, state.get(104)!])));
  t.deepEqual(slugs((await get('/api/v1/coins?slugs=MU,theta')).body), slugsOf(listOrder([state.get(112)!, state.get(108)!])));
  // ALP: alpha outranks zeta; BET: beta is active, eta (larger marketcap) delisted
  t.deepEqual(slugs((await get('/api/v1/coins?symbols=alp,Bet')).body), slugsOf(listOrder([state.get(101)!, state.get(102)!])));
  // the selectors add up
  t.deepEqual(slugs((await get('/api/v1/coins?ids=104&slugs=mu&symbols=gam')).body),
    slugsOf(listOrder([state.get(104)!, state.get(112)!, state.get(103)!])));
  // a symbol resolves among the coins that pass the other filters
  t.deepEqual(slugs((await get('/api/v1/coins?symbols=BET&status=delisted')).body), ['eta']);
  t.deepEqual(slugs((await get('/api/v1/coins?ids=&slugs=')).body).length, publicRows.length, 'empty selectors select nothing in particular');
});

test('selector limits: characters per list and 100 selectors combined', async (t) => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => 1000 + i).join(',');
  t.is((await get(`/api/v1/coins?ids=${ids(100)}`)).status, 200);
  const tooMany = await get(`/api/v1/coins?ids=${ids(60)}&symbols=${Array.from({ length: 41 }, (_, i) => `S${i}`).join(',')}`);
  t.is(tooMany.status, 422);
  t.deepEqual(Object.keys(tooMany.body.error.details.errors).sort(), ['ids', 'symbols']);
  // 100 selectors each time, so that only the length decides
  const list = (width: number, item: (i: number) => string) => Array.from({ length: 100 }, (_, i) => item(i).padStart(width, ' ')).join(',');
  t.is((await get(`/api/v1/coins?ids=${list(9, (i) => String(i + 1))}`)).status, 200, 'ids of 999 characters');
  t.is((await get(`/api/v1/coins?ids=${list(10, (i) => String(i + 1))}`)).status, 422, 'ids over 1000 characters');
  const slugList = (width: number) => Array.from({ length: 100 }, (_, i) => `s${i}`.padEnd(width, 'x')).join(',');
  t.is((await get(`/api/v1/coins?slugs=${slugList(19)}`)).status, 200, 'slugs of 1999 characters');
  t.is((await get(`/api/v1/coins?slugs=${slugList(20)}`)).status, 422, 'slugs over 2000 characters');
  t.is((await get(`/api/v1/coins?symbols=${'A'.repeat(1000)}`)).status, 200, 'symbols of 1000 characters');
  t.is((await get(`/api/v1/coins?symbols=${'A'.repeat(1001)}`)).status, 422, 'symbols over 1000 characters');
  t.is((await get('/api/v1/coins?ids=1,two')).status, 422);
});

test('sort: comma-separated fields, - for descending, nulls last both ways', async (t) => {
  for (const sort of ['-price', 'price', 'marketcap', '-marketcap', 'volume_24h', '-change_7d', 'rank', '-rank', 'change_24h,-volume_24h', '-change_24h,price']) {
    const response = await get(`/api/v1/coins?sort=${sort}`);
    t.deepEqual(slugs(response.body), slugsOf(listOrder(publicRows, sort.split(','))), sort);
  }
  const ascending = slugs((await get('/api/v1/coins?sort=marketcap')).body);
  t.is(ascending.at(-1), 'gamma', 'the coin without marketcap comes last when ascending');
  t.is(slugs((await get('/api/v1/coins?sort=-marketcap')).body).at(-1), 'gamma', 'and when descending');
  const unknown = await get('/api/v1/coins?sort=-name');
  t.is(unknown.status, 422);
  t.deepEqual(Object.keys(unknown.body.error.details.errors), ['sort']);
  t.is((await get('/api/v1/coins?sort=price,-price')).status, 422, 'a field once');
  t.is((await get(`/api/v1/coins?sort=${'price,'.repeat(20)}price`)).status, 422, 'over 100 characters');
});

test('recently-added: status_updated_at newest first, unless sort replaces it', async (t) => {
  // active coins by listing time; a delisted coin's status_updated_at is its delisting: after them
  const active = (e: Expected) => (e.coin.status === 'active' ? 0 : 1);
  const newest = [...publicRows].sort((a, b) => active(a) - active(b) || a.coin.listedHoursAgo - b.coin.listedHoursAgo);
  t.true(newest.findIndex((e) => e.coin.status !== 'active') > 0);
  const response = await get('/api/v1/coins/recently-added');
  t.deepEqual(response.body.data, newest.map((e) => listRow(e, fixture)));
  t.deepEqual(slugs((await get('/api/v1/coins/recently-added?sort=-price')).body), slugsOf(listOrder(publicRows, ['-price'])));
  const delisted = await get('/api/v1/coins/recently-added?status=delisted');
  t.deepEqual(slugs(delisted.body), slugsOf(publicRows.filter((e) => e.coin.status === 'delisted').sort((a, b) => a.coin.listedHoursAgo - b.coin.listedHoursAgo)));
  t.deepEqual(slugs((await get('/api/v1/coins/recently-added?status=preparing')).body), ['epsilon']);
  t.is((await get('/api/v1/coins/recently-added?status=preparing')).body.data[0].listed_at, null, 'not listed yet');
});

const movers = (key: 'change_24h' | 'change_7d', sign: 1 | -1, sort: string[] = []) =>
  slugsOf(
    listOrder(
      publicRows.filter((e) => e[key] !== null && Math.sign(new Decimal(e[key]!).toDecimalPlaces(2).toNumber()) === sign),
      sort,
    ).sort((a, b) => sign * (b[key]! - a[key]!)),
  );

test('gainers: change above 0.00 over the interval, largest first; sort only breaks ties', async (t) => {
  const day = await get('/api/v1/coins/gainers');
  t.deepEqual(slugs(day.body), movers('change_24h', 1));
  // gamma and mu both gained 25 %: rank puts mu first, an ascending price sort gamma
  t.deepEqual(slugs(day.body).slice(0, 2), ['mu', 'gamma']);
  t.deepEqual(slugs((await get('/api/v1/coins/gainers?sort=price')).body), movers('change_24h', 1, ['price']));
  t.deepEqual(slugs((await get('/api/v1/coins/gainers?sort=price')).body).slice(0, 2), ['gamma', 'mu']);
  t.deepEqual(slugs((await get('/api/v1/coins/gainers?interval=7d')).body), movers('change_7d', 1));
  t.deepEqual(day.body.data[0], listRow(state.get(112)!, fixture));
  t.is((await get('/api/v1/coins/gainers?interval=1h')).status, 422);
});

test('losers: change below 0.00, largest loss first; a move that rounds to 0.00 is excluded', async (t) => {
  const day = await get('/api/v1/coins/losers');
  t.deepEqual(slugs(day.body), movers('change_24h', -1));
  t.deepEqual(slugs(day.body), ['beta', 'lambda']);
  t.false(slugs(day.body).includes('kappa'), 'kappa lost 0.003 %: 0.00');
  t.deepEqual(slugs((await get('/api/v1/coins/losers?interval=7d')).body), movers('change_7d', -1));
  t.deepEqual(slugs((await get('/api/v1/coins/losers?type=coin')).body), ['lambda']);
});

test('trending: a score from the volume surge and the size of the 24h move', async (t) => {
  // usual volume: the average daily volume of the 7 whole UTC days before today
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  const score = (e: Expected) => {
    const days = new Map<number, number>();
    fixture.barTimes.forEach((time, i) => {
      const day = Math.floor(time / DAY) * DAY;
      if (day >= today - 7 * DAY && day < today) days.set(day, (days.get(day) ?? 0) + (i === 2 ? e.coin.volume : 10));
    });
    const usual = days.size ? [...days.values()].reduce((a, b) => a + b, 0) / days.size : null;
    const surge = usual ? new Decimal(e.volume_24h).div(usual) : new Decimal(1);
    return Decimal.min(Decimal.max(surge.minus(1), 0), 3).mul(50).div(3)
      .plus(Decimal.min(Math.abs(e.change_24h ?? 0), 20).mul(50).div(20))
      .toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toNumber();
  };
  const trending = [...state.values()]
    .filter((e) => e.coin.status === 'active' && e.rank !== null)
    .map((e) => ({ e, score: score(e) }))
    .sort((a, b) => b.score - a.score || a.e.rank! - b.e.rank!);
  const response = await get('/api/v1/coins/trending');
  t.is(response.status, 200);
  t.deepEqual(response.body.data, trending.slice(0, 10).map(({ e, score }) => ({
    id: e.coin.id, slug: e.coin.slug, name: e.coin.name, symbol: e.coin.symbol, rank: e.rank, price: e.price,
    marketcap: e.marketcap, logo: `https://example.com/${e.coin.slug}.png`, score,
  })));
  t.deepEqual(slugs((await get('/api/v1/coins/trending?limit=2')).body), trending.slice(0, 2).map(({ e }) => e.coin.slug));
  for (const limit of ['0', '21', 'x']) t.is((await get(`/api/v1/coins/trending?limit=${limit}`)).status, 422, limit);
});

test('coin detail: list fields plus supply, today, extremes, fully diluted valuation, links, contracts', async (t) => {
  const response = await get('/api/v1/coins/alpha');
  t.is(response.status, 200);
  const alpha = state.get(101)!;
  const data = response.body.data;
  const { logo, listed_at, last_updated, ...listFields } = listRow(alpha, fixture);
  for (const [field, value] of Object.entries(listFields)) t.deepEqual(data[field], value, field);
  t.deepEqual([data.logo, data.listed_at, data.last_updated], [logo, listed_at, last_updated]);
  t.deepEqual(data.supply, { circulating: '1000', total: '2000', max: '3000' });
  t.is(data.fully_diluted_valuation, new Decimal('110').mul('3000').toNumber(), 'price times max supply');
  // the only bar since midnight UTC, if the latest one is from today
  const latest = fixture.barTimes[2];
  const fromToday = isoDate(latest) === isoDate(Date.now());
  t.deepEqual(data.today, fromToday ? { open: '110', high: '110', low: '110', close: '110' } : { open: null, high: null, low: null, close: null });
  t.deepEqual(data.all_time_high, { price: '110', date: isoDate(latest), percent_from: 0 });
  t.deepEqual(data.all_time_low, {
    price: '80', date: isoDate(fixture.barTimes[0]),
    percent_from: new Decimal(110).div(80).minus(1).mul(100).toDecimalPlaces(2).toNumber(),
  });
  t.deepEqual(data.counts, { exchanges: 0, pairs: 0, tickers: 0, wallets: 0 });
  t.is(data.decimals, 8);
  t.is(data.genesis_date, '2020-02-29');
  t.deepEqual(data.links, [
    { type: 'website', url: 'https://alpha.example' },
    { type: 'whitepaper', url: 'https://alpha.example/paper.pdf' },
    { type: 'twitter', url: 'https://x.com/alpha' },
  ]);
  t.deepEqual(data.contracts, []);
  t.is(data.description, '<p>Alpha</p>');
});

test('fully diluted valuation falls back to total supply and is null when neither is known', async (t) => {
  const beta = (await get('/api/v1/coins/beta')).body.data;
  t.is(beta.fully_diluted_valuation, new Decimal(bySlug('beta').prices![2]).mul(bySlug('beta').total!).toNumber());
  t.deepEqual(beta.contracts, [
    { chain: 'ethereum', address: '0xbeta', decimals: 8 },
    { chain: 'solana', address: 'BetaMint111', decimals: 9 },
  ]);
  t.is(beta.description, null);
  const gamma = (await get('/api/v1/coins/gamma')).body.data;
  t.is(gamma.fully_diluted_valuation, null);
  t.is(gamma.marketcap, null);
  t.deepEqual(gamma.supply, { circulating: null, total: null, max: null });
  const epsilon = (await get('/api/v1/coins/epsilon')).body.data;
  t.is(epsilon.price, null, 'not listed yet: no price');
  t.is(epsilon.fully_diluted_valuation, null);
  t.is(epsilon.listed_at, null);
});

test('locale picks the description language, else its base language, else English', async (t) => {
  const description = async (locale: string) => {
    const response = await get(`/api/v1/coins/alpha?locale=${locale}`);
    return [response.body.data.description, response.body.meta.locale];
  };
  t.deepEqual(await description('de'), ['<p>Alpha (de)</p>', 'de']);
  t.deepEqual(await description('pt-BR'), ['<p>Alpha (pt)</p>', 'pt']);
  t.deepEqual(await description('pt_br'), ['<p>Alpha (pt)</p>', 'pt']);
  t.deepEqual(await description('fr'), ['<p>Alpha</p>', 'en']);
  t.is((await get('/api/v1/coins/alpha?locale=english')).status, 422);
});

test('an unknown slug is a 404 not_found envelope', async (t) => {
  for (const path of ['/api/v1/coins/no-such-coin', '/api/v1/coins/no-such-coin/history', '/api/v1/coins/no-such-coin/sparkline']) {
    const response = await get(path);
    t.is(response.status, 404, path);
    t.is(response.body.error.code, 'not_found');
    t.deepEqual(response.body.error.details, {});
  }
});

test('an analyst gets the rows of the list from api.coin_rows and the page from api.coin_list (and api.coin_list_page)', async (t) => {
  const http = await get('/api/v1/coins/gainers?per_page=2&sort=price');
  const [page] = await handles.db.sql`select api.coin_list(p_list => 'gainers', p_sort => '{price}', p_per_page => 2) as page`;
  t.deepEqual(page!.page, { total: http.body.meta.total, data: http.body.data });
  // the same page in columns, as the API reads it (the rows' JSON text left unparsed)
  const [columns] = await handles.db.sql`select total, returned, data::text from api.coin_list_page(p_list => 'gainers', p_sort => '{price}', p_per_page => 2)`;
  t.is(Number(columns!.total), http.body.meta.total);
  t.is(columns!.returned, http.body.data.length);
  t.deepEqual(JSON.parse(columns!.data), http.body.data);
  const rows = await handles.db.sql`select * from api.coin_rows(p_list => 'gainers', p_sort => '{price}') limit 2`;
  t.deepEqual([...rows], http.body.data);
  t.is(iso(Date.parse(rows[0]!.last_updated)), rows[0]!.last_updated, 'instants are ISO 8601 UTC');
});

test('a coin without market data yet (no coin_state row): volume 0, unknowns null, as the declared row schemas have them', async (t) => {
  // In a rolled-back transaction, so the other tests' lists never see the coin.
  const rollback = new Error('rollback');
  await handles.db.sql.begin(async (sql) => {
    await sql`insert into market.coins (id, slug, symbol, name, type, status, source) values (9901, 'fresh', 'FRSH', 'Fresh', 'token', 'untracked', 'api-test')`;
    const [row] = await sql`select * from api.coin_rows(p_slugs => '{fresh}')`;
    t.is(row!.volume_24h, 0, 'the spec types volume_24h as a number: 0, not null');
    t.like(row, { rank: null, price: null, marketcap: null, change_24h: null, listed_at: null, last_updated: null });
    // logos leave root-relative from SQL and are made absolute on the way out (src/http/logos.ts)
    const listed = coinRow.safeParse(absoluteLogos({ ...row }, 'https://api.example.com'));
    t.true(listed.success, JSON.stringify(listed.error?.issues));
    const [price] = await sql`select * from api.prices(null, '{fresh}', null, 'USD')`;
    t.is(price!.volume_24h, 0);
    const getPrices = priceRoutes.find((route) => route.operationId === 'getPrices')!.response!;
    const priced = getPrices.safeParse({ data: [{ ...price }], meta: { currency: 'USD', count: 1 } });
    t.true(priced.success, JSON.stringify(priced.error?.issues));
    throw rollback;
  }).catch((error) => {
    if (error !== rollback) throw error;
  });
});
