// The embeddable widgets over HTTP, on the demo market: each widget renders (themes, currencies,
// locales), the origin check (Origin, Referer, none, the service's own), frame-ancestors and the
// CSP, page views counted per view and never on a 304, a refusal or an error, the quota, a revoked
// key or edited origins refused within a second, and bad options rendered inside the widget.
import test from 'ava';
import type { TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import { demoDatabase } from '../helpers/demo.ts';
import { createWidgetKey } from '../../src/keys.ts';
import { poll } from '../../dev/wait.ts';

let db: TestDatabase;
let api: TestApi;
const SITE = 'https://site.example';
let owners = 0;

test.before(async () => {
  db = await demoDatabase();
  api = await testApi(db);
});
test.after.always(async () => {
  await api?.close();
  await db?.close();
});

async function widgetKey(origins = [SITE], plan: 'widget-free' | 'widget-pro' = 'widget-free') {
  const owner = `widget-owner-${++owners}`;
  return { owner, ...(await createWidgetKey(db.sql, { owner, plan, name: 'site', origins })) };
}

/** A frame navigation from a page of `origin`, as Chromium sends it (Referer is the page's origin). */
const framed = (origin: string, extra: Record<string, string> = {}) => ({ referer: `${origin}/`, 'sec-fetch-dest': 'iframe', 'sec-fetch-site': 'cross-site', ...extra });

async function views(keyId: number) {
  await api.app.admission?.flush();
  const [row] = await db.sql`select coalesce(sum(used), 0)::int as used from app.usage_monthly where key_id = ${keyId}`;
  return row!.used as number;
}

const text = (response: { body: unknown }) => String(response.body);

test('the coin card renders the demo price, change, market cap and a 7-day sparkline in dark EUR German', async (t) => {
  const { key } = await widgetKey();
  const response = await api.get(`/widgets/coin-card?key=${key}&coin=bitcoin&theme=dark&currency=eur&locale=de`, null, framed(SITE));
  t.is(response.status, 200, text(response));
  t.regex(response.headers.get('content-type')!, /^text\/html/);
  const body = text(response);
  t.regex(body, /Bitcoin <span class="sym">BTC<\/span>/);
  // the price as the database converts it, written the German way: groups of ".", decimal ",", € after
  const [row] = await db.sql`select trim_scale(s.price * f.rate)::text as price from market.coin_state s join market.coins c on c.id = s.coin_id, market.fx_latest f where c.slug = 'bitcoin' and f.currency = 'EUR'`;
  const [integer, fraction = ''] = String(row!.price).split('.');
  const cents = Math.round(Number(`0.${fraction || '0'}`) * 100);
  t.true(body.includes(`${integer!.replace(/\B(?=(\d{3})+$)/g, '.')},`) || cents === 100, body);
  t.regex(body, /<p class="price">[\d.]+,\d\d\s€<\/p>/);
  t.regex(body, /<svg viewBox="0 0 300 60" role="img" aria-label="Bitcoin price over 7 days"/);
  t.regex(body, /<path class="line" stroke="var\(--(up|down)\)" d="M0\.0 [\d.]+(L[\d.]+ [\d.]+){10,}"/);
  t.regex(body, /Market cap<\/dt><dd>[\d.]+\s€/);
  t.regex(body, /<html lang="de" class="dark" data-refresh="30">/);
});

test('the ticker shows each coin asked for in order, in light USD English', async (t) => {
  const { key } = await widgetKey();
  const response = await api.get(`/widgets/ticker?key=${key}&coins=ethereum,bitcoin,solana`, null, framed(SITE));
  t.is(response.status, 200, text(response));
  const symbols = [...text(response).matchAll(/<li><b>(\w+)<\/b> <span>\$[\d,]+\.\d+<\/span>/g)].map((match) => match[1]);
  t.deepEqual(symbols, ['ETH', 'BTC', 'SOL']);
  t.regex(text(response), /class="light"/);
  // a parameter given twice counts by its first value (src/http/validation.ts firstValues)
  const repeated = await api.get(`/widgets/ticker?key=${key}&coins=bitcoin&coins=ethereum&theme=dark&theme=light`, null, framed(SITE));
  t.is(repeated.status, 200, text(repeated));
  t.deepEqual([...text(repeated).matchAll(/<li><b>(\w+)<\/b>/g)].map((match) => match[1]), ['BTC']);
  t.regex(text(repeated), /class="dark"/);
});

test('the mini chart draws 1d, 7d and 30d series with low and high in the currency', async (t) => {
  const { key } = await widgetKey();
  for (const range of ['1d', '7d', '30d']) {
    const response = await api.get(`/widgets/mini-chart?key=${key}&coin=ethereum&range=${range}&currency=gbp&locale=en-GB`, null, framed(SITE));
    t.is(response.status, 200, text(response));
    t.regex(text(response), /<svg viewBox="0 0 460 150"/);
    t.regex(text(response), /<dt>Low<\/dt><dd>£[\d,]+\.\d\d<\/dd><dt>High<\/dt><dd>£[\d,]+\.\d\d<\/dd>/);
  }
});

test('a widget is framed only by its key\'s origins: CSP frame-ancestors, its own script only, nothing else loaded', async (t) => {
  const { key } = await widgetKey([SITE, 'http://localhost:8080']);
  const response = await api.get(`/widgets/coin-card?key=${key}&coin=bitcoin`, null, framed(SITE));
  t.is(response.status, 200);
  const csp = response.headers.get('content-security-policy')!;
  t.regex(csp, /^default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'sha256-[\w+/=]+'; base-uri 'none'; form-action 'none'; frame-ancestors 'self' https:\/\/site\.example http:\/\/localhost:8080$/);
  t.is(response.headers.get('x-frame-options'), null);
  t.deepEqual([...text(response).matchAll(/<script[^>]*>/g)].map((match) => match[0]), ['<script src="/widgets/refresh.js" defer>']);
  const refresh = await api.get('/widgets/refresh.js');
  t.is(refresh.status, 200);
  t.false(/https?:\/\//.test(text(refresh).replace(/^\/\/.*$/gm, '')), 'refresh.js names no other origin');
  // the stylesheet's hash in the CSP is the hash of the inline stylesheet
  const style = /<style>([\s\S]*?)<\/style>/.exec(text(response))![1]!;
  const { createHash } = await import('node:crypto');
  t.true(csp.includes(`'sha256-${createHash('sha256').update(style).digest('base64')}'`));
  // revalidated each time (the origin check), polled every max-age of the market data
  t.is(response.headers.get('cache-control'), 'private, no-cache');
  t.regex(text(response), /data-refresh="30"/);
  t.truthy(response.headers.get('etag'));
});

test('an origin not listed, or no origin at all, gets a blank widget with the reason, and nothing is counted', async (t) => {
  const { key, id } = await widgetKey();
  const other = await api.get(`/widgets/coin-card?key=${key}&coin=bitcoin`, null, framed('https://evil.example'));
  t.is(other.status, 403);
  t.regex(text(other), /does not list https:\/\/evil\.example/);
  t.false(text(other).includes('BTC'));
  t.regex(other.headers.get('content-security-policy')!, /frame-ancestors \*$/);
  t.is(other.headers.get('cache-control'), 'no-store');
  const origin = await api.get(`/widgets/coin-card?key=${key}&coin=bitcoin`, null, { origin: 'https://site.example.evil.example' });
  t.is(origin.status, 403);
  const none = await api.get(`/widgets/coin-card?key=${key}&coin=bitcoin`);
  t.is(none.status, 403);
  t.regex(text(none), /sent no Origin or Referer/);
  // a listed origin given by Origin is enough; a port is part of the origin
  t.is((await api.get(`/widgets/coin-card?key=${key}&coin=bitcoin`, null, { origin: SITE })).status, 200);
  t.is((await api.get(`/widgets/coin-card?key=${key}&coin=bitcoin`, null, framed(`${SITE}:8443`))).status, 403);
  t.is(await views(id), 1);
});

test('the service\'s own pages may show a widget (console preview, the widget reloading itself)', async (t) => {
  const { key } = await widgetKey();
  t.is((await api.get(`/widgets/ticker?key=${key}`, null, { referer: `${api.base}/console/widgets/builder` })).status, 200);
  t.is((await api.get(`/widgets/ticker?key=${key}`, null, { 'sec-fetch-site': 'same-origin' })).status, 200);
});

test('each view is counted once; a 304 from the ETag spends nothing', async (t) => {
  const { key, id } = await widgetKey();
  const url = `/widgets/coin-card?key=${key}&coin=ethereum&theme=dark`;
  const first = await api.get(url, null, framed(SITE));
  t.is(first.status, 200);
  const again = await api.get(url, null, framed(SITE));
  t.is(again.status, 200);
  t.is(again.headers.get('etag'), first.headers.get('etag'));
  t.is(await views(id), 2);
  for (let i = 0; i < 3; i++) {
    const revalidated = await api.get(url, null, framed(SITE, { 'if-none-match': first.headers.get('etag')! }));
    t.is(revalidated.status, 304);
  }
  t.is(await views(id), 2);
  // the body is shared by every key: another key's view of the same widget is the same bytes
  const other = await widgetKey();
  const shared = await api.get(`/widgets/coin-card?key=${other.key}&coin=ethereum&theme=dark`, null, framed(SITE));
  t.is(shared.headers.get('etag'), first.headers.get('etag'));
  const [usage] = await db.sql`select endpoint, requests::int from app.usage_endpoints where key_id = ${id}`;
  t.deepEqual({ ...usage }, { endpoint: 'widget:coin-card', requests: 2 });
});

test('a widget key\'s quota is its own: the Data API quota of the same owner is untouched, and a used-up plan pauses the widget', async (t) => {
  const { key, id } = await widgetKey();
  const [plan] = await db.sql`select monthly_quota::int as quota from app.plans where name = 'widget-free' and scope = 'widget'`;
  await db.sql`insert into app.usage_monthly (key_id, month, used) values (${id}, date_trunc('month', now() at time zone 'utc')::date, ${plan!.quota - 1})`;
  // a fresh process would read the shared count; this one has not cached the key yet
  const last = await api.get(`/widgets/ticker?key=${key}`, null, framed(SITE));
  t.is(last.status, 200);
  const over = await api.get(`/widgets/ticker?key=${key}`, null, framed(SITE));
  t.is(over.status, 429);
  t.regex(text(over), /shown as often as its plan allows this month/);
  t.is(await views(id), plan!.quota);
  // a widget key is no Data API key; the owner's Data API key keeps its own count, and its usage
  // report lists the widget key with its page views
  t.is((await api.get('/api/v1/prices/bitcoin', key)).status, 401);
  const owner = (await db.sql`select owner from app.api_keys where id = ${id}`)[0]!.owner as string;
  const dataKey = await api.key({ owner });
  const usage = await api.get('/api/v1/usage', dataKey);
  t.is(usage.status, 200);
  t.is(usage.body.data.used, 1);
  const widgetToken = usage.body.data.tokens.find((token: { kind: string }) => token.kind === 'widget');
  t.is(widgetToken.requests, plan!.quota);
});

test('a revoked key, or an origin removed, is refused within a second', async (t) => {
  const { key, id, owner } = await widgetKey([SITE, 'https://other.example']);
  const url = `/widgets/coin-card?key=${key}&coin=bitcoin`;
  t.is((await api.get(url, null, framed('https://other.example'))).status, 200);
  await db.sql`select app.console_set_widget_origins(${owner}, ${id}, ${[SITE]}::text[])`;
  const started = Date.now();
  let status = await poll(async () => (await api.get(url, null, framed('https://other.example'))).status, (answer) => answer !== 200, { timeoutMs: 2000, everyMs: 20 });
  t.is(status, 403);
  t.true(Date.now() - started < 1000, `${Date.now() - started} ms`);
  t.is((await api.get(url, null, framed(SITE))).status, 200);
  const [revoked] = await db.sql`select app.console_revoke_widget_key(${owner}, ${id}) as ok`;
  t.true(revoked!.ok);
  const revokedAt = Date.now();
  status = await poll(async () => (await api.get(url, null, framed(SITE))).status, (answer) => answer !== 200, { timeoutMs: 2000, everyMs: 20 });
  t.is(status, 401);
  t.true(Date.now() - revokedAt < 1000, `${Date.now() - revokedAt} ms`);
  t.regex(text(await api.get(url, null, framed(SITE))), /unknown or was revoked/);
});

test('bad options are rendered inside the widget as 4xx, never a 500, and cost nothing', async (t) => {
  const { key, id } = await widgetKey();
  const cases: [string, number, RegExp][] = [
    ['/widgets/coin-card?coin=no-such-coin', 404, /Coin not found/],
    ['/widgets/coin-card?coin=bitcoin&theme=purple', 422, /theme: Must be light or dark/],
    ['/widgets/coin-card?coin=bitcoin&currency=xyz', 422, /Unknown currency &quot;xyz&quot;/],
    ['/widgets/coin-card?coin=bitcoin&currency=eu', 422, /currency: Must be a currency code/],
    ['/widgets/coin-card?coin=bitcoin&locale=xx-YY', 422, /locale: Must be one of/],
    ['/widgets/mini-chart?coin=bitcoin&range=1y', 422, /range: Must be 1d, 7d or 30d/],
    ['/widgets/ticker?coins=bitcoin,not_a%20slug', 422, /coins:/],
    ['/widgets/ticker?coins=a,b,c,d,e,f,g,h,i,j,k', 422, /Name 1 to 10 coins/],
    ['/widgets/coin-card', 422, /coin:/],
    ['/widgets/coin-card?coin=%3Cscript%3E', 422, /coin:/],
  ];
  for (const [path, status, message] of cases) {
    const response = await api.get(`${path}&key=${key}`.replace('card&', 'card?'), null, framed(SITE));
    t.is(response.status, status, path);
    t.regex(text(response), message, path);
    t.regex(text(response), /role="alert"/);
    t.false(text(response).includes('<script'), path);
  }
  t.is((await api.get('/widgets/coin-card?coin=bitcoin', null, framed(SITE))).status, 401);
  t.is((await api.get('/widgets/coin-card?coin=bitcoin&key=mdw_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', null, framed(SITE))).status, 401);
  t.is(await views(id), 0);
});

test('embed.js is a script other origins may load, requesting nothing itself', async (t) => {
  const response = await api.get('/widgets/embed.js');
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type')!, /^text\/javascript/);
  t.is(response.headers.get('cross-origin-resource-policy'), 'cross-origin');
  t.false(/fetch\(|XMLHttpRequest|import\(/.test(text(response)));
});
