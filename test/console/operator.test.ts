// The operator's console pages over HTTP: admins only (403 for everyone else, nothing changed),
// account search (part of an address, escaped, paged), a key's plan changed and seen by the API,
// disable/enable, roles (never no enabled admin), this month's top accounts, the status report.
import test from 'ava';
import { chromium, type Page } from 'playwright-core';
import postgres from 'postgres';
import { browserTest, checkPage, CHROMIUM } from '../helpers/browser.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import { PASSWORD, shownKey, signedInAccount } from '../helpers/console.ts';
import { poll } from '../../dev/wait.ts';
import { hashKey } from '../../src/keys.ts';

let db: TestDatabase;
let api: TestApi;
let accounts = 0;
const nextEmail = (domain = 'example.com') => `op${++accounts}@${domain}`;

test.before(async () => {
  db = await testDatabase();
  api = await testApi(db);
});
test.after.always(async () => {
  await api?.close();
  await db?.close();
});

const admin = () => signedInAccount(db.sql, api.base, nextEmail(), undefined, true);
const accountPath = (owner: string) => `/console/admin/accounts/${encodeURIComponent(owner)}`;
const ownerOf = async (owner: string) => (await db.sql`select role, disabled_at from app.owners where owner = ${owner}`)[0]!;
/** A user with a Data API key made on its keys page: the key and its id. */
async function userWithKey() {
  const email = nextEmail();
  const { owner, client } = await signedInAccount(db.sql, api.base, email);
  await client.get('/console/keys');
  const key = shownKey((await client.post('/console/keys', { name: 'server', plan: 'free' })).text)!;
  const [row] = await db.sql`select id from app.api_keys where key_hash = ${hashKey(key)}`;
  return { owner, email, client, key, keyId: String(row!.id) };
}

// serial, so before the other tests make admins of their own: this one counts them
test.serial('the last enabled admin cannot remove its own admin role; beside another it can, and loses the operator pages', async (t) => {
  t.is(Number((await db.sql`select count(*) from app.owners where role = 'admin'`)[0]!.count), 0);
  const { owner: a, client } = await admin();
  await client.get(accountPath(a));
  const refused = await client.post('/console/admin/accounts/role', { owner: a, role: 'user' });
  t.is(refused.status, 409);
  t.regex(refused.text, /last enabled admin: make another account admin first/);
  t.is((await ownerOf(a)).role, 'admin');

  const { owner: b, client: other } = await signedInAccount(db.sql, api.base, nextEmail());
  t.is((await other.get('/console/admin/accounts')).status, 403);
  await client.get(accountPath(b));
  t.is((await client.post('/console/admin/accounts/role', { owner: b, role: 'admin' })).status, 200);
  t.is((await other.get('/console/admin/accounts')).status, 200, 'an admin at its next request');

  await client.get(accountPath(a));
  const demoted = await client.post('/console/admin/accounts/role', { owner: a, role: 'user' });
  t.is(demoted.status, 302);
  t.is(demoted.location, '/console/keys');
  t.is((await ownerOf(a)).role, 'user');
  t.is((await client.get('/console/admin/accounts')).status, 403);
  // b is now the last one
  await other.get(accountPath(b));
  t.is((await other.post('/console/admin/accounts/role', { owner: b, role: 'user' })).status, 409);
  t.is((await ownerOf(b)).role, 'admin');
});

browserTest('the MCP keys page and the operator pages in Chromium: accessible, narrow, nothing blocked by the CSP', async (t) => {
  const { owner } = await userWithKey();
  const email = nextEmail();
  await signedInAccount(db.sql, api.base, email, undefined, true);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const blocked: string[] = [];
  const check = (page: Page, name: string) => checkPage(t, page, name);
  try {
    const page = await (await browser.newContext({ viewport: { width: 375, height: 740 } })).newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') blocked.push(`${message.text()} ${message.location().url}`);
    });
    await page.goto(`${api.base}/console/sign-in?next=%2Fconsole%2Fmcp-keys`);
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'MCP keys' }).waitFor();
    await page.getByLabel('Name').fill('agent');
    await page.getByRole('button', { name: 'Create key' }).click();
    t.regex((await page.locator('#new-key-value').textContent())!, /^mdk_/);
    await check(page, 'mcp-keys');

    await page.getByRole('link', { name: 'Accounts' }).click();
    await page.getByLabel('E-mail address contains').fill('example.com');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('heading', { name: /Accounts whose address contains/ }).waitFor();
    await check(page, 'accounts');
    await page.goto(`${api.base}${accountPath(owner)}`);
    await page.getByRole('button', { name: 'Change plan' }).first().waitFor();
    await check(page, 'account');
    await page.getByRole('link', { name: 'Service usage' }).click();
    await page.getByRole('heading', { name: 'Top accounts this month' }).waitFor();
    await check(page, 'usage');
    await page.getByRole('link', { name: 'Service status' }).click();
    await page.locator('#overall').waitFor();
    await check(page, 'status');
    t.deepEqual(blocked, [], 'no CSP violation or script error');
  } finally {
    await browser.close();
  }
});

test('a non-admin gets 403 on every operator page and action, and nothing changes', async (t) => {
  const { owner: operator } = await admin();
  const { owner, client, key, keyId } = await userWithKey();
  const keys = await client.get('/console/keys');
  t.false(keys.text.includes('/console/admin/'), 'no operator links in its navigation');
  for (const path of ['/console/admin/accounts', '/console/admin/accounts?q=op', accountPath(operator), accountPath(owner), '/console/admin/usage', '/console/admin/status']) {
    const page = await client.get(path);
    t.is(page.status, 403, path);
    t.regex(page.text, /for the service&#39;s operators|for the service's operators/, path);
  }
  await client.get('/console/keys');
  for (const [path, form] of [
    ['/console/admin/accounts/plan', { owner, key: keyId, plan: 'pro' }],
    ['/console/admin/accounts/disable', { owner: operator, disabled: 'true' }],
    ['/console/admin/accounts/role', { owner, role: 'admin' }],
  ] as const) {
    const page = await client.post(path, form);
    t.is(page.status, 403, path);
  }
  t.is((await db.sql`select plan from app.api_keys where id = ${keyId}`)[0]!.plan, 'free');
  t.like(await ownerOf(operator), { role: 'admin', disabled_at: null });
  t.is((await ownerOf(owner)).role, 'user');
  t.is((await api.get('/api/v1/ping', key)).body.data.plan, 'free');
  // signed out: to sign-in
  const anonymous = await fetch(`${api.base}/console/admin/usage`, { redirect: 'manual' });
  t.is(anonymous.status, 302);
});

test('search finds accounts by any part of their address, pages them, and renders every address and query inert', async (t) => {
  const { client } = await admin();
  const payload = `"><img/src=x/onerror=alert(1)>${++accounts}@xss.example`;
  const { owner: target } = await signedInAccount(db.sql, api.base, payload);
  const found = await client.get(`/console/admin/accounts?q=${encodeURIComponent('XSS.exam')}`);
  t.is(found.status, 200);
  t.false(found.text.includes('<img/src'));
  t.true(found.text.includes('&quot;&gt;&lt;img/src=x/onerror=alert(1)&gt;'));
  t.true(found.text.includes(`href="${accountPath(target)}"`));
  t.regex(found.text, /<td data-label="Role">user<\/td>/);
  const detail = await client.get(accountPath(target));
  t.is(detail.status, 200);
  t.false(detail.text.includes('<img/src'));

  // the query is plain text: % and _ match only themselves, and it is echoed escaped
  t.regex((await client.get('/console/admin/accounts?q=%25')).text, /No account/);
  t.regex((await client.get('/console/admin/accounts?q=_')).text, /No account/);
  const echoed = await client.get(`/console/admin/accounts?q=${encodeURIComponent('<script>x')}`);
  t.false(echoed.text.includes('<script>x'));
  t.true(echoed.text.includes('value="&lt;script&gt;x"'));
  const long = await client.get(`/console/admin/accounts?q=${'a'.repeat(255)}`);
  t.is(long.status, 422);
  t.regex(long.text, /id="f-q-error">Error: Use at most 254 characters/);

  // 55 accounts: 50 on the first page, 5 on the second
  await db.sql`insert into app.owners (owner, email, role) select 'paged-' || n, 'paged-' || lpad(n::text, 2, '0') || '@paging.example', 'user' from generate_series(1, 55) n`;
  const first = await client.get('/console/admin/accounts?q=paging.example');
  t.is([...first.text.matchAll(/@paging\.example<\/a>/g)].length, 50);
  t.true(first.text.includes('href="/console/admin/accounts?q=paging.example&amp;page=2" rel="next"'));
  const second = await client.get('/console/admin/accounts?q=paging.example&page=2');
  t.is([...second.text.matchAll(/@paging\.example<\/a>/g)].length, 5);
  t.regex(second.text, /paged-55@paging\.example/);
  t.false(second.text.includes('rel="next"'));
  t.true(second.text.includes('rel="prev"'));
});

test('an operator changes a key\'s plan to any plan of its kind, and the API applies it', async (t) => {
  const { client } = await admin();
  const { owner, key, keyId } = await userWithKey();
  t.is((await api.get('/api/v1/ping', key)).body.data.plan, 'free', 'cached by the admission batcher');
  const page = await client.get(accountPath(owner));
  t.true(page.text.includes(key.slice(0, 12)));
  t.regex(page.text, new RegExp(`<select id="plan-${keyId}" name="plan"><option value="free" selected>free</option><option value="starter">starter</option><option value="pro">pro</option></select>`));

  const wrongKind = await client.post('/console/admin/accounts/plan', { owner, key: keyId, plan: 'mcp-pro' });
  t.is(wrongKind.status, 422);
  t.regex(wrongKind.text, /not of this key&#39;s kind|not of this key's kind/);
  t.is((await client.post('/console/admin/accounts/plan', { owner, key: keyId, plan: 'platinum' })).status, 422);
  t.is((await client.post('/console/admin/accounts/plan', { owner: 'someone-else', key: keyId, plan: 'pro' })).status, 404);
  t.is((await db.sql`select plan from app.api_keys where id = ${keyId}`)[0]!.plan, 'free');

  const changed = await client.post('/console/admin/accounts/plan', { owner, key: keyId, plan: 'pro' });
  t.is(changed.status, 200);
  t.regex(changed.text, /The key&#39;s plan is now pro|The key's plan is now pro/);
  const ping = await poll(() => api.get('/api/v1/ping', key), (r) => r.body?.data?.plan === 'pro', { timeoutMs: 2000, everyMs: 20 });
  t.is(ping.body.data.plan, 'pro');
  const usage = await api.get('/api/v1/usage', key);
  t.is(usage.body.data.plan, 'pro');
  t.is(usage.body.data.limit, Number((await db.sql`select monthly_quota from app.plans where name = 'pro'`)[0]!.monthly_quota));

  // an MCP key takes MCP plans only
  const mcp = await db.sql`insert into app.api_keys (key_hash, prefix, owner, plan, scope) values (${hashKey(`mdk_${owner}`)}, 'mdk_opmcp000', ${owner}, 'mcp-free', 'mcp') returning id`;
  const mcpId = String(mcp[0]!.id);
  t.is((await client.post('/console/admin/accounts/plan', { owner, key: mcpId, plan: 'pro' })).status, 422);
  t.is((await client.post('/console/admin/accounts/plan', { owner, key: mcpId, plan: 'mcp-pro' })).status, 200);
  t.is((await db.sql`select plan from app.api_keys where id = ${mcpId}`)[0]!.plan, 'mcp-pro');
});

test('disabling an account signs it out and its key is refused within a second; enabling it lets both work again; never one\'s own', async (t) => {
  const { owner: operator, client } = await admin();
  const { owner, email, client: user, key } = await userWithKey();
  t.is((await api.get('/api/v1/ping', key)).status, 200);
  // the account page leads to a confirmation first; unconfirmed, the form changes nothing
  const accountPage = await client.get(accountPath(owner));
  t.regex(accountPage.text, new RegExp(`<form method="get" action="${accountPath(owner)}/disable"`));
  const unconfirmed = await client.post('/console/admin/accounts/disable', { owner, disabled: 'true' });
  t.is(unconfirmed.status, 303);
  t.is(unconfirmed.location, `${accountPath(owner)}/disable`);
  t.is((await ownerOf(owner)).disabled_at, null);
  t.is((await api.get('/api/v1/ping', key)).status, 200);
  const confirmation = await client.get(unconfirmed.location!);
  t.is(confirmation.status, 200);
  t.regex(confirmation.text, /Disable this account\?/);
  t.true(confirmation.text.includes(email));
  t.regex(confirmation.text, /name="confirm" value="yes"/);
  const disabledAt = Date.now();
  const disabled = await client.post('/console/admin/accounts/disable', { owner, disabled: 'true', confirm: 'yes' });
  // post, redirect, get
  t.is(disabled.status, 303);
  t.is(disabled.location, `${accountPath(owner)}?done=disabled`);
  t.regex((await client.get(disabled.location!)).text, /Account disabled/);
  const refused = await poll(() => api.get('/api/v1/ping', key), (r) => r.status !== 200, { timeoutMs: 2000, everyMs: 20 });
  t.is(refused.status, 401);
  t.true(Date.now() - disabledAt < 1000, `refused ${Date.now() - disabledAt} ms after`);
  t.is((await user.get('/console/keys')).status, 302, 'its session is gone');
  t.is((await user.signIn(email, PASSWORD)).status, 401, 'and it cannot sign in');
  t.regex((await client.get(`/console/admin/accounts?q=${encodeURIComponent(email)}`)).text, /<td data-label="Disabled">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/td>/);

  const disabledPage = await client.get(accountPath(owner));
  t.regex(disabledPage.text, /Enable account/);
  t.is((await client.get(`${accountPath(owner)}/disable`)).text.includes('name="confirm"'), false, 'no confirmation for a disabled account');
  const enabled = await client.post('/console/admin/accounts/disable', { owner, disabled: 'false' });
  t.is(enabled.location, `${accountPath(owner)}?done=enabled`);
  t.regex((await client.get(enabled.location!)).text, /Account enabled/);
  t.is((await poll(() => api.get('/api/v1/ping', key), (r) => r.status === 200, { timeoutMs: 2000, everyMs: 20 })).status, 200);
  t.is((await user.signIn(email, PASSWORD)).status, 302);

  const self = await client.post('/console/admin/accounts/disable', { owner: operator, disabled: 'true', confirm: 'yes' });
  t.is(self.status, 409);
  t.regex(self.text, /cannot disable your own account/);
  t.is((await ownerOf(operator)).disabled_at, null);
  t.is((await client.get('/console/admin/usage')).status, 200, 'still signed in');
});

test('the usage page lists this month\'s top accounts by requests', async (t) => {
  const { client } = await admin();
  const heavy = await userWithKey();
  const light = await userWithKey();
  await db.sql`insert into app.usage_monthly (key_id, month, used) values
    (${heavy.keyId}, date_trunc('month', now() at time zone 'utc')::date, 900000001),
    (${light.keyId}, date_trunc('month', now() at time zone 'utc')::date, 900000000),
    (${light.keyId}, date_trunc('month', now() at time zone 'utc')::date - interval '1 month', 999999999)`;
  const page = await client.get('/console/admin/usage');
  t.is(page.status, 200);
  t.regex(page.text, /<h2>Top accounts this month<\/h2>/);
  const rows = [...page.text.matchAll(/<tr><td data-label="Account"><a href="([^"]+)">([^<]+)<\/a><\/td>.*?<td data-label="Requests">(\d+)<\/td><\/tr>/g)];
  t.deepEqual(rows.slice(0, 2).map((row) => [row[2], row[3]]), [[heavy.email, '900000001'], [light.email, '900000000']], 'last month not counted');
  t.is(rows[0]![1], accountPath(heavy.owner));
});

test('the usage page lists this month\'s top endpoints by responses, split by status class', async (t) => {
  const { client } = await admin();
  const caller = await userWithKey();
  await db.sql`insert into app.usage_daily (key_id, day, endpoint, status_class, requests) values
    (${caller.keyId}, (now() at time zone 'utc')::date, 'GET /api/v1/coins/{slug}', '2xx', 800000003),
    (${caller.keyId}, (now() at time zone 'utc')::date, 'GET /api/v1/coins/{slug}', '429', 7),
    (${caller.keyId}, (now() at time zone 'utc')::date, 'GET /api/v1/coins/{slug}', '4xx', 2),
    (${caller.keyId}, date_trunc('month', now() at time zone 'utc')::date - 1, 'GET /api/v1/coins/{slug}', '2xx', 999999999)`;
  const page = await client.get('/console/admin/usage');
  t.regex(page.text, /<h2>Top endpoints this month<\/h2>/);
  const [first] = [...page.text.matchAll(/<tr><td data-label="Endpoint"><code>([^<]+)<\/code><\/td><td data-label="Responses">(\d+)<\/td><td data-label="2xx\/3xx">(\d+)<\/td><td data-label="4xx">(\d+)<\/td><td data-label="429">(\d+)<\/td><td data-label="5xx">(\d+)<\/td>/g)];
  t.deepEqual(first?.slice(1), ['GET /api/v1/coins/{slug}', '800000012', '800000003', '2', '7', '0'], 'last month not counted');
});

test('the status page shows the components /status shows', async (t) => {
  const { client } = await admin();
  const [page, json, publicPage] = await Promise.all([client.get('/console/admin/status'), fetch(`${api.base}/status.json`).then((r) => r.json()), fetch(`${api.base}/status`).then((r) => r.text())]);
  t.is(page.status, 200);
  const components = (json as { data: { components: { id: string }[] } }).data.components.map((c) => c.id);
  t.true(components.length >= 3);
  const shown = (text: string) => [...text.matchAll(/data-component="([^"]+)"/g)].map((m) => m[1]);
  t.deepEqual(shown(page.text), components);
  t.deepEqual(shown(publicPage), components);
  t.regex(page.text, /<p id="overall" class="\w+" data-state="\w+"><strong>/);
  t.regex(page.text, /aria-current="page">Service status</);
  // no script of the public page's refresh control: only the console's own module
  t.is([...page.text.matchAll(/<script[^>]*>/g)].length, 1);
});

test('the analyst calls none of the operator functions', async (t) => {
  const analyst = postgres(db.urlAs('analyst'), { prepare: false, max: 1, onnotice: () => {} });
  try {
    for (const call of ["app.console_admin_accounts('', null, 10, 0)", "app.console_admin_set_plan('x', 1, 'pro')", "app.console_admin_set_disabled('x', 'y', true)", "app.console_admin_set_role('x', 'admin')", 'app.console_admin_top_accounts(10)', 'app.console_admin_top_endpoints(10)']) {
      const error = await t.throwsAsync(analyst.unsafe(`select * from ${call}`).simple(), undefined, call);
      t.is((error as { code?: string }).code, '42501', call);
    }
  } finally {
    await analyst.end();
  }
});
