// The developer console over HTTP: sessions (idle and absolute expiry, revoke, sign out everywhere),
// CSRF, escaping, next= redirects, the sign-in limit, sign-up without e-mail, the keys page, a
// disabled account's keys, the CSP and cookie attributes, and the analyst role reading none of it.
import test from 'ava';
import postgres from 'postgres';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { awayFromMinuteBoundary, testApi, type TestApi } from '../helpers/http.ts';
import { ConsoleClient, PASSWORD, shownKey, signedInAccount } from '../helpers/console.ts';
import { poll } from '../../dev/wait.ts';
import { createKey, hashKey } from '../../src/keys.ts';

let db: TestDatabase;
let api: TestApi;
let accounts = 0;
const nextEmail = () => `user${++accounts}@example.com`;

test.before(async () => {
  db = await testDatabase();
  api = await testApi(db, { env: { CONSOLE_MAX_KEYS: '2', CONSOLE_SELF_SERVICE_PLANS: 'free,starter', CONSOLE_SESSION_IDLE_MINUTES: '5' } });
});
test.after.always(async () => {
  await api?.close();
  await db?.close();
});

const keyCount = async (owner: string) => Number((await db.sql`select count(*) from app.api_keys where owner = ${owner} and revoked_at is null`)[0]!.count);

test('a signed-out visit goes to sign-in and comes back to the page asked for', async (t) => {
  const client = new ConsoleClient(api.base);
  const first = await client.get('/console/account?tab=1');
  t.is(first.status, 302);
  t.is(first.location, '/console/sign-in?next=%2Fconsole%2Faccount%3Ftab%3D1');
  const { owner } = await signedInAccount(db.sql, api.base, nextEmail());
  const email = (await db.sql`select email from app.owners where owner = ${owner}`)[0]!.email as string;
  const signIn = await client.signIn(email, PASSWORD, '/console/account?tab=1');
  t.is(signIn.status, 302);
  t.is(signIn.location, '/console/account?tab=1');
  t.is((await client.get('/console/account')).status, 200);
});

test('next= never leaves the console', async (t) => {
  const { owner } = await signedInAccount(db.sql, api.base, nextEmail());
  const email = (await db.sql`select email from app.owners where owner = ${owner}`)[0]!.email as string;
  for (const next of ['//evil.example/console', 'https://evil.example/', '/\\evil.example', '/console/../admin', '/consolex', 'javascript:alert(1)', '/console//evil.example', '/console/%2e%2e/admin', '/console/%2E./x', '/console/.%2e/x']) {
    const client = new ConsoleClient(api.base);
    const page = await client.signIn(email, PASSWORD, next);
    t.is(page.location, '/console/keys', next);
  }
  const client = new ConsoleClient(api.base);
  t.is((await client.signIn(email, PASSWORD, '/console/account?tab=sessions')).location, '/console/account?tab=sessions');
});

test('sessions: idle and absolute expiry, revoking one, signing out everywhere', async (t) => {
  const email = nextEmail();
  const { owner, client: a } = await signedInAccount(db.sql, api.base, email, 'browser A');
  const b = new ConsoleClient(api.base, 'browser B');
  t.is((await b.signIn(email, PASSWORD)).status, 302);
  const account = await a.get('/console/account');
  t.regex(account.text, /browser A \(this one\)/);
  t.regex(account.text, /browser B/);

  // idle: B unused longer than CONSOLE_SESSION_IDLE_MINUTES
  await db.sql`update app.console_sessions set last_seen_at = now() - interval '6 minutes' where owner = ${owner} and user_agent = 'browser B'`;
  t.is((await b.get('/console/keys')).location, '/console/sign-in?next=%2Fconsole%2Fkeys');
  t.is((await b.signIn(email, PASSWORD)).status, 302);
  // absolute: past expires_at however recently used
  await db.sql`update app.console_sessions set expires_at = now() - interval '1 second' where owner = ${owner} and user_agent = 'browser B' and revoked_at is null and last_seen_at > now() - interval '1 minute'`;
  t.is((await b.get('/console/keys')).status, 302, 'absolute');
  t.is((await b.signIn(email, PASSWORD)).status, 302);

  // A revokes B's session from the account page
  const [sessionB] = await db.sql`select id from app.console_sessions where owner = ${owner} and user_agent = 'browser B' and revoked_at is null and expires_at > now() and last_seen_at > now() - interval '1 minute'`;
  await a.get('/console/account');
  t.is((await a.post('/console/sessions/revoke', { session: String(sessionB!.id) })).status, 200);
  t.is((await b.get('/console/keys')).status, 302, 'revoked');
  t.is((await a.get('/console/keys')).status, 200);

  // sign out everywhere
  t.is((await b.signIn(email, PASSWORD)).status, 302);
  await a.get('/console/account');
  t.is((await a.post('/console/sessions/revoke-all')).location, '/console/sign-in');
  t.is((await a.get('/console/keys')).status, 302);
  t.is((await b.get('/console/keys')).status, 302);
  t.is(Number((await db.sql`select count(*) from app.console_sessions_of(${owner})`)[0]!.count), 0);
});

test('a form without its CSRF token, or with a wrong one, is refused with 403 and changes nothing', async (t) => {
  const { owner, client } = await signedInAccount(db.sql, api.base, nextEmail());
  await client.get('/console/keys');
  for (const csrf of ['', 'wrong', client.csrf!.slice(0, -1) + 'x']) {
    const page = await client.post('/console/keys', { csrf, name: 'forged', plan: 'free' });
    t.is(page.status, 403, csrf);
    t.regex(page.text, /Nothing was changed/);
  }
  const noField = await client.request('POST', '/console/sessions/revoke-all', { other: 'x' });
  t.is(noField.status, 403);
  t.is(await keyCount(owner), 0);
  t.is((await client.get('/console/keys')).status, 200, 'still signed in');
  // a token of another session is wrong too
  const { client: other } = await signedInAccount(db.sql, api.base, nextEmail());
  await other.get('/console/keys');
  t.is((await client.post('/console/keys', { csrf: other.csrf!, name: 'forged', plan: 'free' })).status, 403);
  t.is(await keyCount(owner), 0);
});

test('a stale form of a revoked session says so and changes nothing', async (t) => {
  const { owner, client } = await signedInAccount(db.sql, api.base, nextEmail());
  await client.get('/console/keys');
  await db.sql`select app.console_revoke_sessions(${owner}, null)`;
  const page = await client.post('/console/keys', { name: 'late', plan: 'free' });
  t.is(page.status, 403);
  t.regex(page.text, /session has ended/);
  t.is(await keyCount(owner), 0);
});

test('keys: created with a name and plan, shown once, listed, renamed, revoked; at most CONSOLE_MAX_KEYS', async (t) => {
  const { owner, client } = await signedInAccount(db.sql, api.base, nextEmail());
  await client.get('/console/keys');
  const created = await client.post('/console/keys', { name: 'laptop', plan: 'starter' });
  t.is(created.status, 200);
  const key = shownKey(created.text)!;
  t.truthy(key);
  t.is((await api.get('/api/v1/ping', key)).body.data.plan, 'starter');
  const listed = await client.get('/console/keys');
  t.false(listed.text.includes(key), 'shown once only');
  t.true(listed.text.includes(key.slice(0, 12)));

  t.is((await client.post('/console/keys', { name: '', plan: 'free' })).status, 422);
  const badPlan = await client.post('/console/keys', { name: 'x', plan: 'pro' });
  t.is(badPlan.status, 422);
  t.regex(badPlan.text, /Error: Choose one of: free, starter/);

  t.is((await client.post('/console/keys', { name: 'second', plan: 'free' })).status, 200);
  const third = await client.post('/console/keys', { name: 'third', plan: 'free' });
  t.is(third.status, 409);
  t.is(await keyCount(owner), 2);

  const [row] = await db.sql`select id from app.api_keys where owner = ${owner} and name = 'laptop'`;
  const badName = await client.post('/console/keys/rename', { key: String(row!.id), name: ' ' });
  t.is(badName.status, 422);
  t.regex(badName.text, new RegExp(`id="rename-${row!.id}-error">Error: Give the key a name`));
  t.is((await client.post('/console/keys/rename', { key: String(row!.id), name: 'desktop' })).status, 200);
  t.is((await db.sql`select name from app.api_keys where id = ${row!.id}`)[0]!.name, 'desktop');
  t.is((await client.post('/console/keys/revoke', { key: String(row!.id) })).status, 200);
  t.is((await poll(() => api.get('/api/v1/ping', key), (r) => r.status !== 200, { timeoutMs: 2000, everyMs: 20 })).status, 401);
  // again (a second tab): a clear message, not a 500
  const again = await client.post('/console/keys/revoke', { key: String(row!.id) });
  t.is(again.status, 404);
  t.regex(again.text, /nothing was changed/);
  t.is((await client.post('/console/keys/revoke', { key: 'DROP TABLE' })).status, 404);

  // another account's key is not this account's to revoke or rename
  const { client: other } = await signedInAccount(db.sql, api.base, nextEmail());
  const [second] = await db.sql`select id from app.api_keys where owner = ${owner} and name = 'second'`;
  await other.get('/console/keys');
  t.is((await other.post('/console/keys/revoke', { key: String(second!.id) })).status, 404);
  t.is((await other.post('/console/keys/rename', { key: String(second!.id), name: 'mine' })).status, 404);
  t.is(await keyCount(owner), 1);
});

test('MCP keys: their own page and plans, usable on /mcp only; Data API keys refused there; CONSOLE_MAX_KEYS counted per scope', async (t) => {
  const { owner, client } = await signedInAccount(db.sql, api.base, nextEmail());
  const page = await client.get('/console/mcp-keys');
  t.is(page.status, 200);
  t.regex(page.text, /<h1>MCP keys<\/h1>/);
  t.true(page.text.includes(`<code>${api.base}/mcp</code>`), 'says where the tool server is');
  t.regex(page.text, /Authorization: Bearer &lt;key&gt;/);
  t.regex(page.text, /<option value="mcp-free">mcp-free<\/option><\/select>/, 'only the self-service MCP plan (default mcp-free)');
  t.regex(page.text, /aria-current="page">MCP keys</);

  const badPlan = await client.post('/console/mcp-keys', { name: 'agent', plan: 'free' });
  t.is(badPlan.status, 422, 'a Data API plan is not an MCP plan');
  t.regex(badPlan.text, /Error: Choose one of: mcp-free/);
  const mcp = shownKey((await client.post('/console/mcp-keys', { name: 'agent', plan: 'mcp-free' })).text)!;
  t.truthy(mcp);
  await client.get('/console/keys');
  const data = shownKey((await client.post('/console/keys', { name: 'server', plan: 'free' })).text)!;
  t.like((await db.sql`select scope, plan from app.api_keys where key_hash = ${hashKey(mcp)}`)[0], { scope: 'mcp', plan: 'mcp-free' });

  const toolsList = (headers: Record<string, string>) => api.request('POST', '/mcp', {
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  const listed = await toolsList({ authorization: `Bearer ${mcp}` });
  t.is(listed.status, 200);
  t.true(JSON.stringify(listed.body).includes('search_coins'));
  t.is((await toolsList({ 'x-api-key': mcp })).status, 200);
  t.is((await toolsList({ authorization: `Bearer ${data}` })).status, 401, 'a Data API key is refused on /mcp');
  t.is((await api.get('/api/v1/ping', mcp)).status, 401, 'an MCP key is refused on the Data API');
  t.is((await api.get('/api/v1/ping', data)).status, 200);

  // listed on its own page only, renamed, rotated and revoked there
  const mcpPage = await client.get('/console/mcp-keys');
  t.true(mcpPage.text.includes(mcp.slice(0, 12)));
  t.false(mcpPage.text.includes(data.slice(0, 12)));
  t.false((await client.get('/console/keys')).text.includes(mcp.slice(0, 12)));
  const [row] = await db.sql`select id from app.api_keys where key_hash = ${hashKey(mcp)}`;
  await client.get('/console/mcp-keys');
  t.is((await client.post('/console/mcp-keys/rename', { key: String(row!.id), name: 'desktop agent' })).status, 200);
  const rotated = await client.post('/console/mcp-keys/rotate', { key: String(row!.id), grace: '0' });
  t.is(rotated.status, 200);
  const fresh = shownKey(rotated.text)!;
  t.like((await db.sql`select scope, plan, name from app.api_keys where key_hash = ${hashKey(fresh)}`)[0], { scope: 'mcp', plan: 'mcp-free', name: 'desktop agent' });
  t.is((await toolsList({ authorization: `Bearer ${fresh}` })).status, 200);

  // the limit (2 here) is per scope: a second MCP key beside the Data API key, not a third
  t.is((await client.post('/console/mcp-keys', { name: 'second', plan: 'mcp-free' })).status, 200);
  t.is((await client.post('/console/mcp-keys', { name: 'third', plan: 'mcp-free' })).status, 409);
  await client.get('/console/keys');
  t.is((await client.post('/console/keys', { name: 'second', plan: 'free' })).status, 200);
  t.is(Number((await db.sql`select count(*) from app.api_keys where owner = ${owner} and scope = 'mcp' and app.key_live(revoked_at)`)[0]!.count), 2);

  const [freshRow] = await db.sql`select id from app.api_keys where key_hash = ${hashKey(fresh)}`;
  await client.get('/console/mcp-keys');
  t.is((await client.post('/console/mcp-keys/revoke', { key: String(freshRow!.id) })).status, 200);
  t.is((await poll(() => toolsList({ authorization: `Bearer ${fresh}` }), (r) => r.status !== 200, { timeoutMs: 2000, everyMs: 20 })).status, 401);
});

test('rotating a key: a new secret at once, the old one working for the grace chosen, then refused; none: refused now', async (t) => {
  const { owner, client } = await signedInAccount(db.sql, api.base, nextEmail());
  await client.get('/console/keys');
  const old = shownKey((await client.post('/console/keys', { name: 'server', plan: 'starter' })).text)!;
  const [row] = await db.sql`select id from app.api_keys where owner = ${owner} and name = 'server'`;
  // a grace not offered: said beside that key's choice, the key untouched
  const unoffered = await client.post('/console/keys/rotate', { key: String(row!.id), grace: '9' });
  t.is(unoffered.status, 422);
  t.regex(unoffered.text, new RegExp(`id="grace-${row!.id}-error">Error: Choose how long the old key keeps working`));
  t.false(unoffered.text.includes('That key is'));
  t.is((await db.sql`select revoked_at from app.api_keys where id = ${row!.id}`)[0]!.revoked_at, null);
  const rotated = await client.post('/console/keys/rotate', { key: String(row!.id), grace: '24' });
  t.is(rotated.status, 200);
  t.regex(rotated.text, /The old key keeps working until \d{4}-\d\d-\d\d \d\d:\d\d UTC, then is refused/);
  const fresh = shownKey(rotated.text)!;
  t.not(fresh, old);
  // both work, with the same plan and name; the old one is listed as retiring and cannot be rotated again
  t.is((await api.get('/api/v1/ping', fresh)).body.data.plan, 'starter');
  t.is((await api.get('/api/v1/ping', old)).status, 200);
  const [retiring] = await db.sql`select extract(epoch from revoked_at - now())::int as left_s from app.api_keys where id = ${row!.id}`;
  t.true(Math.abs((retiring!.left_s as number) - 86_400) < 60, `retires in ${retiring!.left_s} s`);
  t.like((await db.sql`select name, plan from app.api_keys where key_hash = ${hashKey(fresh)}`)[0], { name: 'server', plan: 'starter' });
  const listed = await client.get('/console/keys');
  t.regex(listed.text, /Retires \d{4}-\d\d-\d\d/);
  t.false(listed.text.includes(`Rotate ${old.slice(0, 12)}`));
  t.is((await client.post('/console/keys/rotate', { key: String(row!.id), grace: '24' })).status, 404);
  // the grace over (as the clock would make it): the old key is refused, the new one works
  await db.sql`update app.api_keys set revoked_at = now() - interval '1 second' where id = ${row!.id}`;
  t.is((await poll(() => api.get('/api/v1/ping', old), (r) => r.status !== 200, { timeoutMs: 2000, everyMs: 20 })).status, 401);
  t.is((await api.get('/api/v1/ping', fresh)).status, 200);
  // no grace: refused at once
  const [next] = await db.sql`select id from app.api_keys where key_hash = ${hashKey(fresh)}`;
  const now = await client.post('/console/keys/rotate', { key: String(next!.id), grace: '0' });
  t.regex(now.text, /The old key is refused from now on/);
  t.is((await poll(() => api.get('/api/v1/ping', fresh), (r) => r.status !== 200, { timeoutMs: 2000, everyMs: 20 })).status, 401);
  t.is((await api.get('/api/v1/ping', shownKey(now.text)!)).status, 200);
});

test('XSS payloads in a key name and an e-mail address render inert', async (t) => {
  const payload = '<script>alert(1)</script>"><img src=x onerror=alert(2)>';
  const { client } = await signedInAccount(db.sql, api.base, `"><svg/onload=alert(3)>${++accounts}@example.com`);
  await client.get('/console/keys');
  const page = await client.post('/console/keys', { name: payload, plan: 'free' });
  t.is(page.status, 200);
  t.false(page.text.includes('<script>alert'));
  t.false(page.text.includes('<img src=x'));
  t.true(page.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;'));
  const account = await client.get('/console/account');
  t.false(account.text.includes('<svg'));
  t.true(account.text.includes('&quot;&gt;&lt;svg/onload=alert(3)&gt;'));
  // the only scripts are the console's own module
  t.deepEqual([...account.text.matchAll(/<script[^>]*>/g)].length, 1);
});

test('pages carry a strict CSP with a fresh nonce, no-store, and HttpOnly SameSite=Lax cookies', async (t) => {
  const first = await fetch(`${api.base}/console/sign-in`);
  const second = await fetch(`${api.base}/console/sign-in`);
  const csp = first.headers.get('content-security-policy')!;
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /script-src 'self' 'nonce-[\w+/=]+'/);
  t.notRegex(csp, /unsafe-inline|https:/);
  t.not(csp, second.headers.get('content-security-policy'));
  t.is(first.headers.get('cache-control'), 'no-store');
  const cookie = first.headers.getSetCookie()[0]!;
  t.regex(cookie, /^mdapi_console_pre=[\w-]+; Path=\/; HttpOnly; SameSite=Lax/);
  t.notRegex(cookie, /Secure/);
  const body = await first.text();
  const nonce = /'nonce-([^']+)'/.exec(csp)![1]!;
  t.true(body.includes(`<script type="module" src="/console/assets/console.js" nonce="${nonce}">`));
  t.notRegex(body, /\son[a-z]+=|style=/, 'no inline handler or style');
  for (const asset of ['console.css', 'console.js']) t.is((await fetch(`${api.base}/console/assets/${asset}`)).status, 200);

  const https = await testApi(db, { env: { PUBLIC_URL: 'https://api.example.com' } });
  try {
    const { owner } = await signedInAccount(db.sql, https.base, nextEmail());
    t.truthy(owner);
    const client = new ConsoleClient(https.base);
    const page = await client.get('/console/sign-in');
    t.regex(page.headers.getSetCookie()[0]!, /^__Host-mdapi_console_pre=[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Secure/);
    const email = (await db.sql`select email from app.owners where owner = ${owner}`)[0]!.email as string;
    const signIn = await client.post('/console/sign-in', { email, password: PASSWORD });
    t.regex(signIn.headers.getSetCookie()[0]!, /^__Host-mdapi_console=[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Secure; Max-Age=2592000$/);
  } finally {
    await https.close();
  }
});

test('sign-in is limited per account after failures, and says so', async (t) => {
  const email = nextEmail();
  await signedInAccount(db.sql, api.base, email);
  // the counts are per minute: all six attempts in one
  await awayFromMinuteBoundary(10);
  const client = new ConsoleClient(api.base);
  for (let i = 0; i < 5; i++) t.is((await client.signIn(email, 'wrong password!')).status, 401);
  const limited = await client.signIn(email, PASSWORD);
  t.is(limited.status, 429, 'even the right password, this minute');
  t.regex(limited.text, /Too many failed sign-ins/);
  t.is(Number((await db.sql`select count(*) from app.auth_failures where subject = ${`console:${email}`}`)[0]!.count), 1);
});

test('sign-in refuses a bad form with errors beside the fields', async (t) => {
  const client = new ConsoleClient(api.base);
  await client.get('/console/sign-in');
  const page = await client.post('/console/sign-in', { email: 'not-an-address', password: '' });
  t.is(page.status, 422);
  t.regex(page.text, /id="f-email-error">Error: Must be an e-mail address/);
  t.regex(page.text, /aria-describedby="f-email-error"/);
  t.regex(page.text, /id="f-password-error">Error: Enter your password/);
});

test('sign-up: refused when closed; without SMTP it says e-mail cannot be sent and makes nothing', async (t) => {
  const closed = new ConsoleClient(api.base);
  t.is((await closed.get('/console/sign-up')).status, 403);
  t.is((await closed.get('/console/invite?token=x')).status, 403, 'no invites while closed');
  const open = await testApi(db, { env: { CONSOLE_SIGNUP: 'open' } });
  try {
    const client = new ConsoleClient(open.base);
    const form = await client.get('/console/sign-up');
    t.regex(form.text, /cannot send e-mail/);
    await client.get('/console/sign-in');
    const page = await client.post('/console/sign-up', { email: 'nomail@example.com', password: PASSWORD });
    t.is(page.status, 503);
    t.is((await db.sql`select count(*) from app.owners where email = 'nomail@example.com'`)[0]!.count, '0');
  } finally {
    await open.close();
  }
});

/** An MCP tools/list with a key: its HTTP status. */
const mcpStatus = async (key: string) => (await fetch(`${api.base}/mcp`, {
  method: 'POST',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
})).status;

test('a disabled account is signed out and its keys, Data API and MCP, are refused within a second', async (t) => {
  const { owner, client } = await signedInAccount(db.sql, api.base, nextEmail());
  await client.get('/console/keys');
  const key = shownKey((await client.post('/console/keys', { name: 'k', plan: 'free' })).text)!;
  const mcpKey = (await createKey(db.sql, { plan: 'mcp-free', owner, scope: 'mcp' })).key;
  t.is((await api.get('/api/v1/ping', key)).status, 200, 'cached by the admission batcher');
  t.is(await mcpStatus(mcpKey), 200);
  await db.sql`select app.console_set_disabled(${owner}, true)`;
  // from the change's commit: the statement's own time under a full run's load is not the propagation
  const disabledAt = Date.now();
  // the propagation: when the request first refused was sent (its own round trip under a full run's load,
  // and the MCP key's request after it, are not the propagation)
  let sentAt = disabledAt;
  const refused = await poll(() => ((sentAt = Date.now()), api.get('/api/v1/ping', key)), (r) => r.status !== 200, { timeoutMs: 2000, everyMs: 20 });
  const refusedAfter = sentAt - disabledAt;
  t.is(refused.status, 401);
  t.is(await poll(() => mcpStatus(mcpKey), (status) => status !== 200, { timeoutMs: 2000, everyMs: 20 }), 401);
  t.true(refusedAfter < 1000, `refused ${refusedAfter} ms after`);
  t.is((await client.get('/console/keys')).status, 302);
  await db.sql`select app.console_set_disabled(${owner}, false)`;
  t.is((await poll(() => api.get('/api/v1/ping', key), (r) => r.status === 200, { timeoutMs: 2000, everyMs: 20 })).status, 200, 'enabled again');
});

test('the analyst reads no console table and calls no console function', async (t) => {
  const analyst = postgres(db.urlAs('analyst'), { prepare: false, max: 1, onnotice: () => {} });
  try {
    for (const table of ['app.owners', 'app.console_sessions', 'app.console_tokens', 'app.api_keys']) {
      const error = await t.throwsAsync(analyst.unsafe(`select * from ${table}`).simple(), undefined, table);
      t.is((error as { code?: string }).code, '42501', table);
    }
    const error = await t.throwsAsync(analyst`select * from app.console_session(${Buffer.alloc(32)})`);
    t.is((error as { code?: string }).code, '42501');
  } finally {
    await analyst.end();
  }
});

test('the status page and the documents link to the console; CONSOLE=off serves no console and no link', async (t) => {
  for (const path of ['/status', '/docs']) t.regex(await (await fetch(`${api.base}${path}`)).text(), /<nav>.*<a href="\/console">Console<\/a><\/nav>/, path);
  const off = await testApi(db, { env: { CONSOLE: 'off' } });
  try {
    t.is((await fetch(`${off.base}/console/sign-in`)).status, 404);
    t.notRegex(await (await fetch(`${off.base}/status`)).text(), /href="\/console"/);
  } finally {
    await off.close();
  }
});

test('each key section acts only on keys of its own scope: every action on another section\'s key is a 404 and changes nothing', async (t) => {
  const { owner, client } = await signedInAccount(db.sql, api.base, nextEmail());
  await client.get('/console/keys');
  await client.post('/console/keys', { name: 'data', plan: 'free' });
  await client.get('/console/mcp-keys');
  await client.post('/console/mcp-keys', { name: 'mcp', plan: 'mcp-free' });
  await client.get('/console/widgets');
  t.is((await client.post('/console/widgets', { name: 'widget', origins: 'https://example.com', plan: 'widget-free' })).status, 200);
  const ids = Object.fromEntries((await db.sql<{ scope: string; id: string }[]>`select scope, id::text from app.api_keys where owner = ${owner}`).map((row) => [row.scope, row.id]));
  t.deepEqual(Object.keys(ids).sort(), ['data-api', 'mcp', 'widget']);
  const state = () => db.sql`select id, scope, name, revoked_at from app.api_keys where owner = ${owner} order by id`;
  const before = await state();
  const actions: [section: string, scope: string, form: (id: string) => Record<string, string>][] = [];
  for (const [section, scope] of [['/console/keys', 'data-api'], ['/console/mcp-keys', 'mcp']] as const) {
    actions.push([`${section}/rotate`, scope, (id) => ({ key: id, grace: '0' })], [`${section}/rename`, scope, (id) => ({ key: id, name: 'renamed' })], [`${section}/revoke`, scope, (id) => ({ key: id })]);
  }
  actions.push(['/console/widgets/origins', 'widget', (id) => ({ key: id, origins: 'https://other.example' })], ['/console/widgets/revoke', 'widget', (id) => ({ key: id })]);
  for (const [action, own, form] of actions) {
    for (const [scope, id] of Object.entries(ids) as [string, string][]) {
      if (scope === own) continue;
      await client.get(action.replace(/\/[a-z]+$/, ''));
      const page = await client.post(action, form(id!));
      t.is(page.status, 404, `${action} on a ${scope} key`);
      t.regex(page.text, /nothing was changed/, `${action} on a ${scope} key`);
    }
  }
  t.deepEqual(await state(), before, 'no key revoked, renamed or made');
  t.deepEqual((await db.sql`select allowed_origins from app.widget_keys where key_id = ${ids.widget!}`)[0]!.allowed_origins, ['https://example.com']);
  // and each on a key of its own scope does act
  for (const [section, scope] of [['/console/keys', 'data-api'], ['/console/mcp-keys', 'mcp']] as const) {
    await client.get(section);
    t.is((await client.post(`${section}/rename`, { key: ids[scope]!, name: 'renamed' })).status, 200, section);
    t.is((await client.post(`${section}/revoke`, { key: ids[scope]! })).status, 200, section);
  }
});

test('revoking a session id that is not a working session of the account says nothing was revoked', async (t) => {
  const { client: a } = await signedInAccount(db.sql, api.base, nextEmail(), 'browser A');
  const { owner: other } = await signedInAccount(db.sql, api.base, nextEmail(), 'browser B');
  const [theirs] = await db.sql`select id from app.console_sessions where owner = ${other} and revoked_at is null`;
  await a.get('/console/account');
  const refused = await a.post('/console/sessions/revoke', { session: String(theirs!.id) });
  t.is(refused.status, 404);
  t.regex(refused.text, /nothing was revoked/);
  t.false(refused.text.includes('Session revoked.'));
  t.is((await db.sql`select revoked_at from app.console_sessions where id = ${theirs!.id}`)[0]!.revoked_at, null);
  t.is((await a.post('/console/sessions/revoke', { session: '999999999' })).status, 404);
});
