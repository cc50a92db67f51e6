// The console's widget pages: create a widget key (origins checked beside the field, the plan a
// self-service widget plan), list it, edit its origins, revoke it; the builder's preview (a frame
// of the widget, allowed by frame-src 'self' on that page only) and snippets; another account's
// key untouchable; every free text inert.
import test from 'ava';
import type { TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import { signedInAccount } from '../helpers/console.ts';
import { demoDatabase } from '../helpers/demo.ts';

let db: TestDatabase;
let api: TestApi;
let accounts = 0;
const nextEmail = () => `widgets${++accounts}@example.com`;

test.before(async () => {
  db = await demoDatabase();
  api = await testApi(db, { env: { CONSOLE_MAX_KEYS: '2' } });
});
test.after.always(async () => {
  await api?.close();
  await db?.close();
});

const widgetKeys = (owner: string) => db.sql`select k.id, k.name, k.plan, k.revoked_at, w.publishable_key, w.allowed_origins from app.api_keys k join app.widget_keys w on w.key_id = k.id where k.owner = ${owner} order by k.id`;

test('a widget key is created with its origins checked beside the field, and nothing is written when refused', async (t) => {
  const { owner, client } = await signedInAccount(db.sql, api.base, nextEmail());
  const list = await client.get('/console/widgets');
  t.is(list.status, 200);
  t.regex(list.text, /<a href="\/console\/widgets" aria-current="page">Widgets<\/a>/);
  for (const [origins, message] of [
    ['http://example.com', /use https \(http only for localhost/],
    ['https://example.com/page', /without a path/],
    ['not a url', /is not an origin/],
    ['', /List at least one origin/],
  ] as const) {
    const refused = await client.post('/console/widgets', { name: 'blog', origins, plan: 'widget-free' });
    t.is(refused.status, 422, origins);
    t.regex(refused.text, /<p class="error" id="f-origins-error">Error: [^<]*/);
    t.regex(refused.text, message);
  }
  t.is((await client.post('/console/widgets', { name: 'blog', origins: 'https://example.com', plan: 'widget-pro' })).status, 422);
  t.is((await widgetKeys(owner)).length, 0);

  const created = await client.post('/console/widgets', { name: '<b>blog</b>', origins: 'https://Example.com:443, http://localhost:3000 https://example.com', plan: 'widget-free' });
  t.is(created.status, 200, created.text);
  const [key] = await widgetKeys(owner);
  t.deepEqual(key!.allowed_origins, ['https://example.com', 'http://localhost:3000']);
  t.is(key!.plan, 'widget-free');
  t.regex(key!.publishable_key, /^mdw_[\w-]{32}$/);
  t.true(created.text.includes(key!.publishable_key));
  t.true(created.text.includes('&lt;b&gt;blog&lt;/b&gt;'));
  t.regex(created.text, /0 of 50000/);
});

test('origins are edited and the key revoked from the list; another account\'s key is not reachable', async (t) => {
  const { owner, client } = await signedInAccount(db.sql, api.base, nextEmail());
  await client.get('/console/widgets');
  await client.post('/console/widgets', { name: 'shop', origins: 'https://shop.example', plan: 'widget-free' });
  const [key] = await widgetKeys(owner);
  const bad = await client.post('/console/widgets/origins', { key: String(key!.id), origins: 'ftp://shop.example' });
  t.is(bad.status, 422);
  t.regex(bad.text, new RegExp(`id="origins-${key!.id}-error">Error: `));
  const saved = await client.post('/console/widgets/origins', { key: String(key!.id), origins: 'https://shop.example https://www.shop.example' });
  t.is(saved.status, 200);
  t.deepEqual((await widgetKeys(owner))[0]!.allowed_origins, ['https://shop.example', 'https://www.shop.example']);

  const other = await signedInAccount(db.sql, api.base, nextEmail());
  await other.client.get('/console/widgets');
  t.is((await other.client.post('/console/widgets/origins', { key: String(key!.id), origins: 'https://evil.example' })).status, 404);
  t.is((await other.client.post('/console/widgets/revoke', { key: String(key!.id) })).status, 404);
  t.is((await other.client.get(`/console/widgets/builder?key=${key!.id}`)).text.includes(key!.publishable_key as string), false);

  const revoked = await client.post('/console/widgets/revoke', { key: String(key!.id) });
  t.is(revoked.status, 200);
  t.regex(revoked.text, /Widget key revoked/);
  t.truthy((await widgetKeys(owner))[0]!.revoked_at);
  // a second revoke from a stale tab
  t.is((await client.post('/console/widgets/revoke', { key: String(key!.id) })).status, 404);
});

test('the builder previews the widget in a frame and gives both snippets; bad options are shown beside their field', async (t) => {
  const { owner, client } = await signedInAccount(db.sql, api.base, nextEmail());
  await client.get('/console/widgets');
  await client.post('/console/widgets', { name: 'site', origins: 'https://site.example', plan: 'widget-free' });
  const [key] = await widgetKeys(owner);
  const page = await client.get(`/console/widgets/builder?key=${key!.id}&widget=mini-chart&coin=ethereum&range=30d&theme=dark&currency=eur&locale=de`);
  t.is(page.status, 200, page.text);
  const csp = page.headers.get('content-security-policy')!;
  t.regex(csp, /frame-ancestors 'none'; worker-src 'self'; frame-src 'self'$/);
  const src = /<iframe id="preview" src="([^"]+)"/.exec(page.text)![1]!.replaceAll('&amp;', '&');
  t.is(new URL(src).pathname, '/widgets/mini-chart');
  t.is(new URL(src).searchParams.get('key'), key!.publishable_key);
  t.regex(page.text, /id="snippet-iframe">&lt;iframe src=&quot;http:\/\/127\.0\.0\.1:\d+\/widgets\/mini-chart\?key=mdw_/);
  t.regex(page.text, /id="snippet-script">&lt;div data-market-widget=&quot;mini-chart&quot; data-key=&quot;mdw_[\w-]+&quot; data-theme=&quot;dark&quot; data-currency=&quot;eur&quot; data-locale=&quot;de&quot; data-coin=&quot;ethereum&quot; data-range=&quot;30d&quot;/);
  t.regex(page.text, /embed\.js&quot; async&gt;&lt;\/script&gt;/);
  // the preview frame loads: the console's own origin may show the widget
  const preview = await fetch(new URL(new URL(src).pathname + new URL(src).search, api.base), { headers: { referer: `${api.base}/console/widgets/builder` } });
  t.is(preview.status, 200);
  t.regex(preview.headers.get('content-security-policy')!, /frame-ancestors 'self' https:\/\/site\.example/);

  const bad = await client.get(`/console/widgets/builder?key=${key!.id}&widget=coin-card&coin=no%20such&locale=xx`);
  t.is(bad.status, 422);
  t.regex(bad.text, /id="b-coin-error">Error: /);
  t.regex(bad.text, /id="b-locale-error">Error: /);
  t.false(bad.text.includes('id="preview"'));
  // the other pages keep the console's CSP without frames
  t.false((await client.get('/console/widgets')).headers.get('content-security-policy')!.includes('frame-src'));
});
