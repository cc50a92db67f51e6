// Logos: the generated SVG monograms at /logos/{kind}/{slug}.svg (type, escaping, cache headers,
// 404 envelope), the `logo` of coins, exchanges, heatmap rows and wallets (a configured image URL
// wins; else the absolute URL of the monogram, on PUBLIC_URL when set), and the heatmap's null rule.
import { createHash } from 'node:crypto';
import { get as httpGet } from 'node:http';
import test from 'ava';
import { absoluteLogos, serialiseBody } from '../../src/http/logos.ts';
import { JsonRows, paginated } from '../../src/http/envelope.ts';
import { testApi, useApi, type TestApi } from '../helpers/http.ts';
import { loadVenueFixture } from '../api/exchange_fixtures.ts';

const handles = useApi(test, {
  setup: async ({ db: { sql } }) => {
    await loadVenueFixture(handles.db);
    // alpha keeps its configured image; every other coin gets the monogram
    await sql`update market.coins set logo = null where slug <> 'alpha'`;
    await sql`update market.exchanges set logo = 'https://img.example/big-cex.png' where slug = 'big-cex'`;
    await sql`insert into market.coins (slug, symbol, name, type, source) values ('tricky', '<&"x', 'A & <B> "quoted" ''s', 'token', 'api-test')`;
    await sql`insert into market.wallets (slug, name, score, price_model, status, source)
      values ('vault-x', 'Vault X', 50, 'free', 'ACTIVE', 'api-test'), ('secret', 'Secret', 50, 'free', 'DRAFT', 'api-test')`;
  },
});
let key: Promise<string> | undefined;
const get = async (path: string, api: TestApi = handles.api) => api.get(path, await (key ??= handles.api.key({ plan: 'pro' })));
const hue = (slug: string) => parseInt(createHash('md5').update(slug).digest('hex').slice(0, 6), 16) % 360;

test('/logos/coins/{slug}.svg: an SVG monogram of the symbol in the slug\'s colour, public and cacheable', async (t) => {
  const response = await handles.api.get('/logos/coins/beta.svg', null);
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'image/svg+xml');
  t.is(response.headers.get('cache-control'), 'public, max-age=86400');
  t.is(response.headers.get('cross-origin-resource-policy'), 'cross-origin');
  t.regex(response.headers.get('etag') ?? '', /^"[\w-]+"$/);
  t.regex(response.body, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"[^>]*>.*<\/svg>$/s);
  t.true(response.body.includes('>BE</text>'));
  t.true(response.body.includes(`fill="hsl(${hue('beta')} 55% 40%)"`));
  // the same slug draws the same logo: the colour is a function of the slug
  t.is((await handles.api.get('/logos/coins/beta.svg', null)).body, response.body);
  t.not(hue('beta'), hue('alpha'));

  // node:http, as a browser cache revalidates (fetch adds Cache-Control: no-cache to a conditional request)
  const revalidated = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    httpGet(`${handles.api.base}/logos/coins/beta.svg`, { headers: { 'if-none-match': response.headers.get('etag')! } }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk)).on('end', () => resolve({ status: res.statusCode!, body }));
    }).on('error', reject);
  });
  t.deepEqual(revalidated, { status: 304, body: '' });
});

test('/logos: symbol and name are escaped in the SVG; exchanges and wallets take initials of their name', async (t) => {
  const tricky = await handles.api.get('/logos/coins/tricky.svg', null);
  t.is(tricky.status, 200);
  t.true(tricky.body.includes('>&lt;&amp;</text>'));
  t.true(tricky.body.includes('<title>A &amp; &lt;B&gt; &quot;quoted&quot; &#39;s</title>'));
  t.false(tricky.body.includes('<B>'));
  const dex = await handles.api.get('/logos/exchanges/amm-dex.svg', null);
  t.is(dex.status, 200);
  t.true(dex.body.includes('>AS</text>'));
  t.true(dex.body.includes(`fill="hsl(${hue('amm-dex')} 55% 40%)"`));
  // a venue with a configured image still has its monogram at the stable URL
  t.is((await handles.api.get('/logos/exchanges/big-cex.svg', null)).status, 200);
  t.true((await handles.api.get('/logos/wallets/vault-x.svg', null)).body.includes('>VX</text>'));
});

test('/logos: 404 in the error envelope for an unknown slug or kind, a bad file name or a draft wallet', async (t) => {
  for (const path of ['/logos/coins/nope.svg', '/logos/exchanges/alpha.svg', '/logos/pairs/alpha.svg', '/logos/coins/alpha.png',
    '/logos/coins/ALPHA.svg', '/logos/wallets/secret.svg']) {
    const response = await handles.api.get(path, null);
    t.is(response.status, 404, path);
    t.like(response.body, { error: { code: 'not_found', details: {} } }, path);
    t.true(response.headers.get('content-type')!.startsWith('application/json'), path);
  }
});

/** Every logo is a non-null string: the configured image, else the absolute monogram URL, which answers an SVG. */
async function checkLogos(t: any, rows: { slug: string; logo: unknown }[], kind: string, base: string, configured: Record<string, string>) {
  t.true(rows.length > 0);
  for (const row of rows) {
    t.is(row.logo, configured[row.slug] ?? `${base}/logos/${kind}/${row.slug}.svg`, `${kind} ${row.slug}`);
  }
  const generated = rows.find((row) => !configured[row.slug])!;
  const svg = await fetch(generated.logo as string);
  t.is(svg.status, 200);
  t.is(svg.headers.get('content-type'), 'image/svg+xml');
}

test('coins, coin detail, trending, exchanges, exchange detail, heatmap and wallets carry a logo URL; a configured image wins', async (t) => {
  const { base } = handles.api;
  const coins = { alpha: 'https://example.com/alpha.png' };
  await checkLogos(t, (await get('/api/v1/coins?status=active')).body.data, 'coins', base, coins);
  await checkLogos(t, [(await get('/api/v1/coins/beta')).body.data], 'coins', base, coins);
  t.is((await get('/api/v1/coins/alpha')).body.data.logo, coins.alpha);
  await checkLogos(t, (await get('/api/v1/coins/trending')).body.data, 'coins', base, coins);
  await checkLogos(t, (await get('/api/v1/global/heatmap')).body.data, 'coins', base, coins);
  const exchanges = { 'big-cex': 'https://img.example/big-cex.png' };
  await checkLogos(t, (await get('/api/v1/exchanges')).body.data, 'exchanges', base, exchanges);
  await checkLogos(t, [(await get('/api/v1/exchanges/amm-dex')).body.data], 'exchanges', base, exchanges);
  t.is((await get('/api/v1/exchanges/big-cex')).body.data.logo, exchanges['big-cex']);
  await checkLogos(t, (await get('/api/v1/wallets')).body.data, 'wallets', base, {});
});

test('with PUBLIC_URL the logo URLs take its origin and path prefix', async (t) => {
  const api = await testApi(handles.db, { env: { PUBLIC_URL: 'https://md.example/market/' } });
  try {
    const row = (await get('/api/v1/coins/beta', api)).body.data;
    t.is(row.logo, 'https://md.example/market/logos/coins/beta.svg');
  } finally {
    await api.close();
  }
});

test('/global/heatmap: only coins with a marketcap (the tile size); change_7d null only where coin_state has none', async (t) => {
  const { data } = (await get('/api/v1/global/heatmap')).body;
  const expected = await handles.db.sql<{ slug: string; change_7d: number | null }[]>`
    select c.slug, s.change_7d from market.coin_state s join market.coins c on c.id = s.coin_id
    where s.rank <= 100 and s.marketcap is not null order by s.rank`;
  t.deepEqual(data.map((row: any) => row.slug), expected.map((row) => row.slug));
  t.false(data.some((row: any) => row.slug === 'gamma'), 'gamma has no circulating supply');
  const [gamma] = await handles.db.sql`select s.rank from market.coin_state s join market.coins c on c.id = s.coin_id where c.slug = 'gamma'`;
  t.truthy(gamma!.rank, 'gamma is ranked, so only the null rule leaves it out');
  t.deepEqual(data.map((row: any) => row.rank), data.map((_: unknown, i: number) => i + 1));
  for (const row of data) {
    t.is(typeof row.marketcap, 'number');
    t.is(row.change_7d, expected.find((e) => e.slug === row.slug)!.change_7d);
  }
});

test('absoluteLogos: prefixes generated logo paths only, leaving images, dates and other fields alone', (t) => {
  const when = new Date(0);
  const body = { data: [{ logo: '/logos/coins/a.svg', when }, { logo: 'https://x.example/a.png', path: '/logos/coins/b.svg' }], meta: { logo: null } };
  const out = absoluteLogos(body, 'https://b.example');
  t.deepEqual(out, { data: [{ logo: 'https://b.example/logos/coins/a.svg', when }, { logo: 'https://x.example/a.png', path: '/logos/coins/b.svg' }], meta: { logo: null } });
  t.is(out.data[0]!.when, when);
});

test('serialiseBody: the JSON text of absoluteLogos, a logo path quoted inside another string left alone', (t) => {
  const body = {
    data: [{ logo: '/logos/coins/a.svg', nested: { logo: '/logos/exchanges/b.svg' } }, { logo: 'https://x.example/a.png', path: '/logos/coins/b.svg' }],
    meta: { logo: null, note: 'a field "logo":"/logos/coins/c.svg" quoted in text' },
  };
  for (const base of ['https://b.example', 'https://b.example/with "quote"']) {
    const text = serialiseBody(body, base);
    t.deepEqual(JSON.parse(text), absoluteLogos(body, base), base);
  }
});

test('JsonRows from PostgreSQL are spliced in as they are, their logos made absolute; serialised elsewhere they are parsed', (t) => {
  // as json_build_object and json_agg write it: spaces around the colon, rows on lines of their own
  const rows = '[{"id" : 1, "logo" : "/logos/coins/a.svg", "price" : "0.10000000000000000001"}, \n {"id":2,"logo":"https://x.example/b.png","note":"\\"logo\\":\\"/logos/x.svg\\""}]';
  const body = { data: new JsonRows(rows, 2), meta: { count: 2, logo: '/logos/coins/c.svg' } };
  const text = serialiseBody(body, 'https://b.example');
  t.true(text.includes('"price" : "0.10000000000000000001"'), 'the rows are the database\'s text, not re-serialised');
  t.deepEqual(JSON.parse(text), absoluteLogos({ data: JSON.parse(rows), meta: body.meta }, 'https://b.example'));
  t.deepEqual(JSON.parse(JSON.stringify(body)), { data: JSON.parse(rows), meta: body.meta });
  t.deepEqual(absoluteLogos(body, 'https://b.example').data, absoluteLogos(JSON.parse(rows), 'https://b.example'));
});

test('a page of JsonRows: from and to follow from the rows the database counted', (t) => {
  const url = new URL('https://b.example/api/v1/coins?page=3&per_page=2');
  const answer = paginated(url, { page: 3, perPage: 2 }, 7, new JsonRows('[{"id":5}, \n {"id":6}]', 2));
  t.like(answer.meta, { from: 5, to: 6, last_page: 4, total: 7 });
  t.true(answer.data instanceof JsonRows);
  const beyond = paginated(url, { page: 5, perPage: 2 }, 7, new JsonRows('[]', 0));
  t.like(beyond.meta, { from: null, to: null });
  const last = paginated(url, { page: 4, perPage: 2 }, 7, new JsonRows('[{"id":7}]', 1));
  t.like(last.meta, { from: 7, to: 7 });
  // the same answer as parsed rows
  t.deepEqual(JSON.parse(serialiseBody(last, 'https://b.example')), JSON.parse(JSON.stringify(paginated(url, { page: 4, perPage: 2 }, 7, [{ id: 7 }]))));
});
