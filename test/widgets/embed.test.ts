// The widgets in Debian's Chromium: a test page on another loopback origin includes embed.js, which
// inserts the coin card's frame; it renders (price, sparkline), axe-core finds no serious or critical
// violation on the page and in the frame, every request goes to the page's origin or the service,
// the CSP blocks nothing, and the view is counted once. The same page from an origin the key does
// not list shows the refusal inside the frame and counts nothing. Screenshots of both are written.
import { createServer, type Server } from 'node:http';
import test from 'ava';
import { chromium, type Page } from 'playwright-core';
import { browserTest, CHROMIUM, graveViolations, screenshots } from '../helpers/browser.ts';
import type { TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import { demoDatabase } from '../helpers/demo.ts';
import { createWidgetKey } from '../../src/keys.ts';

let db: TestDatabase;
let api: TestApi;
const sites: Server[] = [];

test.before(async () => {
  db = await demoDatabase();
  api = await testApi(db);
});
test.after.always(async () => {
  for (const site of sites) await new Promise((resolve) => site.close(resolve));
  await api?.close();
  await db?.close();
});

/** A site of its own on a loopback port: one page embedding the coin card with embed.js. */
async function site(key: () => string): Promise<string> {
  const server = createServer((request, response) => {
    // no icon: an empty answer rather than a 404 in the console
    if (request.url !== '/') return void response.writeHead(204).end();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A site with a widget</title></head>
<body><main><h1>Today's prices</h1>
<div data-market-widget="coin-card" data-key="${key()}" data-coin="bitcoin" data-theme="dark" data-currency="eur" data-locale="de" data-title="Bitcoin price"></div>
<script src="${api.base}/widgets/embed.js" async></script></main></body></html>`);
  });
  sites.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

browserTest('a page of a listed origin shows the coin card through embed.js; an unlisted one is refused', async (t) => {
  const shot = screenshots('widgets');
  // the sites first (their ports are the origins), then the key listing the first only
  let key = '';
  const listed = await site(() => key);
  const unlisted = await site(() => key);
  const created = await createWidgetKey(db.sql, { owner: 'site-owner', plan: 'widget-free', name: 'site', origins: [listed] });
  key = created.key;
  const id = created.id;

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const problems: string[] = [];
  const requests: string[] = [];
  const check = async (page: Page, name: string) => {
    t.deepEqual(await graveViolations(page, { crossOrigin: true }), [], `${name}: axe`);
    await shot(t, page, `${name}.png`);
  };
  try {
    const page = await (await browser.newContext({ viewport: { width: 480, height: 400 } })).newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`${message.text()} ${message.location().url}`);
    });
    page.on('request', (request) => requests.push(request.url()));

    await page.goto(`${listed}/`);
    const frame = page.frameLocator('iframe[title="Bitcoin price"]');
    await frame.getByRole('heading', { name: /Bitcoin/ }).waitFor();
    t.regex((await frame.locator('.price').textContent())!, /^[\d.]+,\d\d\s€$/);
    t.is(await frame.locator('svg[role="img"]').count(), 1);
    await check(page, 'coin-card-listed');
    t.deepEqual(problems, [], 'no CSP violation or script error');
    const origins = new Set(requests.map((url) => new URL(url).origin));
    t.deepEqual([...origins].sort(), [api.base, listed].sort(), 'no request leaves the page and the service');
    await api.app.admission?.flush();
    const viewed = async () => Number((await db.sql`select coalesce(sum(used), 0) as n from app.usage_monthly where key_id = ${id}`)[0]!.n);
    t.is(await viewed(), 1);

    // The same browser on the unlisted site (two loopback ports are one site to Chromium's cache
    // partitioning): the widget, revalidated on each use, is refused with its message, not handed
    // from the cache to a frame that frame-ancestors would leave blank.
    const other = await page.context().newPage();
    await other.goto(`${unlisted}/`);
    const refused = other.frameLocator('iframe[title="Bitcoin price"]');
    await refused.getByText('Widget not allowed here').waitFor();
    t.regex((await refused.locator('[role="alert"]').textContent())!, new RegExp(`does not list ${unlisted.replaceAll('.', '\\.')}`));
    t.is(await refused.locator('.price').count(), 0);
    await check(other, 'coin-card-unlisted');
    await api.app.admission?.flush();
    t.is(await viewed(), 1, 'the refusal is not counted');
  } finally {
    await browser.close();
  }
});
