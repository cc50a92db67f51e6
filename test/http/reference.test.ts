// The HTML API reference: Redoc's bundle served by the service (ETag, content type), the page's own
// strict CSP, and the page in a real browser (Debian's chromium driven by playwright-core) rendering
// the operations with every request it makes staying on the service's origin.
import test from 'ava';
import { chromium } from 'playwright-core';
import { browserTest, CHROMIUM } from '../helpers/browser.ts';
import { useApi } from '../helpers/http.ts';

const handles = useApi(test);

const SCRIPT = '/docs/api/redoc.standalone.js';

test('the page: no key, one script and the OpenAPI document, a CSP allowing only the origin (and blob: workers)', async (t) => {
  for (const path of ['/docs/api', '/api/v1/docs']) {
    const response = await fetch(`${handles.api.base}${path}`);
    t.is(response.status, 200, path);
    t.is(response.headers.get('content-type'), 'text/html; charset=utf-8');
    const html = await response.text();
    t.deepEqual([...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]), [`<script src="${SCRIPT}">`], 'one external script, nothing inline');
    t.regex(html, /<redoc spec-url="\/api\/v1\/openapi\.json"/);
    t.notRegex(html, /https?:\/\//, 'no absolute URL: nothing from elsewhere');
    const csp = response.headers.get('content-security-policy')!;
    t.is(response.headers.get('content-security-policy')?.split(', ').length, 1, 'one policy, not helmet\'s beside it');
    const directives = Object.fromEntries(csp.split(/;\s*/).map((d) => { const [name, ...sources] = d.split(' '); return [name, sources]; }));
    t.deepEqual(directives['default-src'], ["'none'"]);
    t.deepEqual(directives['script-src'], ["'self'"]);
    t.deepEqual(directives['connect-src'], ["'self'"]);
    for (const sources of Object.values(directives) as string[][]) {
      for (const source of sources) t.true(["'self'", "'none'", "'unsafe-inline'", 'blob:', 'data:'].includes(source), `${csp}: ${source}`);
    }
  }
  // every other page's navigation leads to it
  t.regex(await (await fetch(`${handles.api.base}/docs`)).text(), /<nav>.*<a href="\/docs\/api">API reference<\/a>/);
  // the document it loads is public too
  t.is((await fetch(`${handles.api.base}/api/v1/openapi.json`)).status, 200);
});

test("the script: Redoc's bundle as JavaScript, cacheable, revalidated by its ETag", async (t) => {
  const response = await fetch(`${handles.api.base}${SCRIPT}`);
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'text/javascript; charset=utf-8');
  t.regex(response.headers.get('cache-control')!, /^public, max-age=\d+$/);
  const etag = response.headers.get('etag')!;
  t.regex(etag, /^"[\w-]+"$/);
  const body = await response.text();
  t.true(body.length > 500_000, "Redoc's standalone bundle");
  t.true(body.includes('getAttribute("spec-url")'), 'it initialises the <redoc> element itself');
  // (booleans: a failure would print the megabyte)
  t.false(/sourceMappingURL=[\w.-]+\.map/.test(body), 'no source map for a browser to ask for');
  // fetch adds Cache-Control: no-cache to a conditional request unless one is given (a browser revalidating sends max-age=0)
  const again = await fetch(`${handles.api.base}${SCRIPT}`, { headers: { 'If-None-Match': etag, 'Cache-Control': 'max-age=0' } });
  t.is(again.status, 304);
  t.is(await again.text(), '');
  t.is((await fetch(`${handles.api.base}${SCRIPT}`, { headers: { 'If-None-Match': '"other"', 'Cache-Control': 'max-age=0' } })).status, 200);
});

test('the discovery documents link the reference as the Data API\'s human documentation', async (t) => {
  const reference = `${handles.api.base}/docs/api`;
  const [data] = (await handles.api.get('/apis.json', null)).body.apis;
  t.is(data.humanURL, reference);
  t.true(data.properties.some((p: { type: string; url: string }) => p.type === 'x-api-reference' && p.url === reference));
  const { linkset } = (await handles.api.get('/.well-known/api-catalog', null)).body;
  const api = linkset.find((context: { anchor: string }) => context.anchor === `${handles.api.base}/api/v1`);
  t.deepEqual(api['service-doc'][0], { href: reference, type: 'text/html' });
});

browserTest('the page in Chromium: Redoc renders the operations, and no request leaves the origin', async (t) => {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage();
    const origin = new URL(handles.api.base).origin;
    const requests: string[] = [];
    const refused: string[] = [];
    const errors: string[] = [];
    // every request the page or its workers make, and anything the CSP refused or that failed
    page.context().on('request', (request) => requests.push(request.url()));
    page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('requestfailed', (request) => refused.push(request.url()));
    const response = await page.goto(`${handles.api.base}/docs/api`);
    t.is(response?.status(), 200);
    t.is(await page.title(), 'API reference · market-data-api');
    // an operation's summary, rendered by Redoc from the OpenAPI document as the operation's heading
    const summary = page.locator('h2', { hasText: 'This API as an OpenAPI 3.1 document' }).first();
    await summary.waitFor({ state: 'attached', timeout: 30_000 });
    await summary.scrollIntoViewIfNeeded();
    t.true(await summary.isVisible());
    await page.waitForLoadState('networkidle');
    t.true(requests.includes(`${origin}/api/v1/openapi.json`), requests.join(' '));
    t.true(requests.includes(`${origin}${SCRIPT}`));
    const elsewhere = requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('blob:') && !url.startsWith('data:'));
    t.deepEqual(elsewhere, [], 'every request stays on the loopback origin');
    t.deepEqual(refused, []);
    t.deepEqual(errors.filter((text) => /Content Security Policy|Refused/i.test(text)), [], 'nothing the page needs is refused by its CSP');
  } finally {
    await browser.close();
  }
});

// OpenAPI descriptions are Markdown: text like `t=<unix seconds>` must reach the reader as written,
// not be taken for an HTML tag and dropped.
const SIGNATURE_RULE = 'Verify X-Service-Signature (t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under the endpoint secret>)';

test('the document escapes every angle bracket of its descriptions outside code spans', async (t) => {
  const document = (await handles.api.get('/api/v1/openapi.json', null)).body;
  const descriptions: string[] = [];
  const walk = (node: unknown, key = ''): void => {
    if (key === 'example' || key === 'examples') return;
    if (key === 'description' && typeof node === 'string') descriptions.push(node);
    else if (node && typeof node === 'object') for (const [name, value] of Object.entries(node)) walk(value, name);
  };
  walk(document);
  t.true(descriptions.length > 500, `${descriptions.length} descriptions`);
  const bare = descriptions.filter((text) => text.split(/`[^`]*`/).some((part) => /(^|[^\\])[<>]/.test(part)));
  t.deepEqual(bare, [], 'no bare < or > outside a code span');
  t.true(descriptions.some((text) => text.startsWith(SIGNATURE_RULE.replace(/[<>]/g, '\\$&'))));
});

browserTest('the page in Chromium: descriptions with angle brackets read as written (the webhook signature rule)', async (t) => {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage();
    await page.goto(`${handles.api.base}/docs/api`);
    const rule = page.locator('p', { hasText: 'Verify X-Service-Signature' }).first();
    await rule.waitFor({ state: 'attached', timeout: 120_000 });
    t.true((await rule.textContent())!.startsWith(SIGNATURE_RULE), (await rule.textContent())!);
    // a parameter's description: the delivery's signature header
    t.true(await page.getByText('t=<unix seconds>,v1=<hex>.', { exact: true }).first().isVisible());
  } finally {
    await browser.close();
  }
});
