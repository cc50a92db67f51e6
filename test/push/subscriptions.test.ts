// Subscribing browsers in the console, without delivering anything (test/push/delivery.test.ts
// delivers): malformed subscriptions refused with 422 and nothing stored, the endpoint rules
// (https to a public host; loopback only with PUSH_ALLOW_LOOPBACK), the account page's section,
// the service worker's response, push alarms accepted only with a subscribed browser, the VAPID
// key pair kept in the database or taken from the settings, and nothing of it readable by the analyst.
import { randomBytes } from 'node:crypto';
import test from 'ava';
import postgres from 'postgres';
import { loadConfig } from '../../src/config.ts';
import { MAX_PAYLOAD_BYTES, notification } from '../../src/push/send.ts';
import { loadVapid } from '../../src/push/vapid.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import { signedInAccount } from '../helpers/console.ts';
import { subscriber } from '../helpers/push.ts';

let db: TestDatabase;
let api: TestApi;

test.before(async () => {
  db = await testDatabase();
  api = await testApi(db, { env: { PUSH_ALLOW_LOOPBACK: 'true' } });
  await db.sql`insert into market.data_sources (name, kind, description) values ('push-test', 'import', 'Push test fixture')`;
  await db.sql`insert into market.coins (id, slug, symbol, name, type, circulating_supply, source) values (611, 'alpha', 'ALP', 'Alpha', 'coin', 1000, 'push-test')`;
  await db.sql`insert into market.coin_state (coin_id, price, volume_24h, marketcap) values (611, 100, 5000, 100000)`;
});
test.after.always(async () => {
  await api?.close();
  await db?.close();
});

const subscriptionsOf = async (owner: string) => (await db.sql`select id from app.push_subscriptions where owner = ${owner}`).length;
const ENDPOINT = 'http://127.0.0.1:9/push/x';

test('malformed subscriptions are refused with 422 beside a clear message, and nothing is stored', async (t) => {
  const { owner, client } = await signedInAccount(db.sql, api.base, 'malformed@example.com');
  await client.get('/console/account');
  const keys = subscriber().keys;
  const offCurve = Buffer.concat([Buffer.from([4]), randomBytes(64)]).toString('base64url');
  const cases: [string, Record<string, string>, RegExp][] = [
    ['no endpoint', { ...keys }, /Give the push endpoint/],
    ['not a URL', { ...keys, endpoint: 'not a url' }, /absolute https URL/],
    ['ftp', { ...keys, endpoint: 'ftp://127.0.0.1/push' }, /https URL/],
    ['credentials', { ...keys, endpoint: 'https://user:pw@127.0.0.1/push' }, /credentials/],
    ['a private address', { ...keys, endpoint: 'https://10.1.2.3/push' }, /public host/],
    ['plain http to a public host', { ...keys, endpoint: 'http://93.184.216.34/push' }, /https URL/],
    ['p256dh too short', { ...keys, endpoint: ENDPOINT, p256dh: keys.p256dh.slice(0, 40) }, /P-256 public key/],
    ['p256dh off the curve', { ...keys, endpoint: ENDPOINT, p256dh: offCurve }, /P-256 public key/],
    ['p256dh not base64', { ...keys, endpoint: ENDPOINT, p256dh: '*'.repeat(87) }, /P-256 public key/],
    ['auth of 15 bytes', { ...keys, endpoint: ENDPOINT, auth: randomBytes(15).toString('base64url') }, /16-byte secret/],
    ['no auth', { endpoint: ENDPOINT, p256dh: keys.p256dh }, /auth secret/],
  ];
  for (const [name, form, message] of cases) {
    const page = await client.post('/console/push/subscribe', form);
    t.is(page.status, 422, name);
    t.regex(page.text, /subscription was refused, and nothing was stored/, name);
    t.regex(page.text, message, name);
  }
  t.is(await subscriptionsOf(owner), 0);

  const accepted = await client.post('/console/push/subscribe', { endpoint: ENDPOINT, ...keys });
  t.is(accepted.status, 200);
  t.regex(accepted.text, /This browser is notified from now on/);
  t.is(await subscriptionsOf(owner), 1);
  const again = await client.post('/console/push/subscribe', { endpoint: ENDPOINT, ...subscriber().keys });
  t.is(again.status, 200, 'the same browser subscribing again');
  t.is(await subscriptionsOf(owner), 1, 'renews its row');
  // padded base64 as some browsers give it is read too
  const padded = subscriber().keys;
  t.is((await client.post('/console/push/subscribe', { endpoint: `${ENDPOINT}2`, p256dh: `${padded.p256dh}=`, auth: `${padded.auth}==` })).status, 200);
  t.is(await subscriptionsOf(owner), 2);
});

test('without PUSH_ALLOW_LOOPBACK a loopback endpoint is refused; https to a public host is the rule', async (t) => {
  const strict = await testApi(db);
  try {
    const { owner, client } = await signedInAccount(db.sql, strict.base, 'strict@example.com');
    await client.get('/console/account');
    for (const endpoint of [ENDPOINT, 'https://127.0.0.1/push', 'https://[::1]/push', 'https://localhost/push']) {
      const page = await client.post('/console/push/subscribe', { endpoint, ...subscriber().keys });
      t.is(page.status, 422, endpoint);
    }
    t.is(await subscriptionsOf(owner), 0);
  } finally {
    await strict.close();
  }
});

test('a subscription needs a signed-in account and the form\'s CSRF token', async (t) => {
  const { owner, client } = await signedInAccount(db.sql, api.base, 'csrf@example.com');
  await client.get('/console/account');
  const forged = await client.post('/console/push/subscribe', { endpoint: ENDPOINT, ...subscriber().keys, csrf: 'forged' });
  t.is(forged.status, 403);
  const anonymous = await fetch(`${api.base}/console/push/subscribe`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ endpoint: ENDPOINT, ...subscriber().keys }) });
  t.is(anonymous.status, 403);
  t.is(await subscriptionsOf(owner), 0);
});

test('the account page offers "Notify this browser" with the VAPID public key, lists the browsers, and allows the service worker', async (t) => {
  const { owner, client } = await signedInAccount(db.sql, api.base, 'page@example.com', 'Firefox <script>alert(1)</script>');
  let page = await client.get('/console/account');
  t.is(page.status, 200);
  t.regex(page.text, /<h2 id="push">Browsers notified of alarms<\/h2>/);
  t.regex(page.text, /No browser yet\./);
  const [stored] = await db.sql<{ public_key: string }[]>`select public_key from app.vapid_keys`;
  t.true(page.text.includes(`data-push-key="${stored!.public_key}"`));
  t.regex(page.text, /<button type="submit" hidden>Notify this browser<\/button>/);
  t.regex(page.headers.get('content-security-policy')!, /worker-src 'self'/);
  await client.post('/console/push/subscribe', { endpoint: 'http://127.0.0.1:9/push/page', ...subscriber().keys });
  page = await client.get('/console/account');
  t.true(page.text.includes('Firefox &lt;script&gt;alert(1)&lt;/script&gt;'), 'the user-agent label renders inert');
  t.false(page.text.includes('<script>alert(1)'));
  t.regex(page.text, /<td data-label="Push service">127\.0\.0\.1<\/td>/);
  t.regex(page.text, /<td data-label="Last notified">never<\/td>/);
  t.regex(page.text, /Send a test notification/);
  t.regex(page.text, /Remove<\/button>/);
  t.false(page.text.includes('/push/page'), 'the endpoint itself (a capability) is not shown');
  t.is(await subscriptionsOf(owner), 1);

  const worker = await fetch(`${api.base}/console/sw.js`);
  t.is(worker.status, 200);
  t.regex(worker.headers.get('content-type')!, /^text\/javascript/);
  t.is(worker.headers.get('service-worker-allowed'), '/console/');
  const source = await worker.text();
  t.regex(source, /addEventListener\('push'/);
  t.regex(source, /addEventListener\('notificationclick'/);
  const script = await fetch(`${api.base}/console/assets/push.js`);
  t.is(script.status, 200);
  t.regex(await script.text(), /pushManager\.subscribe/);
});

test('a push alarm is accepted once the owner has a subscribed browser, else 422 push_not_available says how to subscribe', async (t) => {
  const { owner, client } = await signedInAccount(db.sql, api.base, 'alarms@example.com');
  const key = await api.key({ owner });
  const create = () => api.request('POST', '/api/v1/alarms', {
    key, headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Alpha up', coin: 'alpha', metric: 'rate', direction: 'above', target: 150, notification: 'push' }),
  });
  const refused = await create();
  t.is(refused.status, 422);
  t.is(refused.body.error.code, 'push_not_available');
  t.regex(refused.body.error.message, /developer console.*Notify this browser/);
  await client.get('/console/account');
  await client.post('/console/push/subscribe', { endpoint: 'http://127.0.0.1:9/push/alarms', ...subscriber().keys });
  const created = await create();
  t.is(created.status, 201);
  t.is(created.body.data.notification, 'push');

  const off = await testApi(db, { env: { CONSOLE: 'off' } });
  try {
    const response = await off.request('POST', '/api/v1/alarms', {
      key, headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Alpha up', coin: 'alpha', metric: 'rate', direction: 'above', target: 150, notification: 'push' }),
    });
    t.is(response.status, 422, 'CONSOLE=off: no browser can subscribe');
    t.regex(response.body.error.message, /console.*off/);
  } finally {
    await off.close();
  }
});

test('the VAPID key pair is made once and kept; VAPID_PUBLIC_KEY/VAPID_PRIVATE_KEY replace it, and only as a pair', async (t) => {
  const config = db.config();
  const first = await loadVapid(db.query, config);
  const second = await loadVapid(db.query, config);
  t.deepEqual(second, first, 'the stored pair, whichever process asks');
  t.is((await db.sql`select 1 from app.vapid_keys`).length, 1);
  t.regex(first.publicKey, /^[\w-]{87}$/);
  t.is(first.subject, 'mailto:push@localhost');
  const given = { VAPID_PUBLIC_KEY: 'B'.repeat(87), VAPID_PRIVATE_KEY: 'A'.repeat(43), VAPID_SUBJECT: 'mailto:ops@example.com' };
  t.deepEqual(await loadVapid(db.query, db.config(given)), { subject: 'mailto:ops@example.com', publicKey: given.VAPID_PUBLIC_KEY, privateKey: given.VAPID_PRIVATE_KEY });
  t.is((await loadVapid(db.query, db.config({ PUBLIC_URL: 'https://api.example.com' }))).subject, 'https://api.example.com');
  t.throws(() => loadConfig({ VAPID_PUBLIC_KEY: given.VAPID_PUBLIC_KEY }), { message: /give both keys of the pair/ });
  t.throws(() => loadConfig({ VAPID_PUBLIC_KEY: 'short', VAPID_PRIVATE_KEY: given.VAPID_PRIVATE_KEY }), { message: /VAPID_PUBLIC_KEY/ });
  t.throws(() => loadConfig({ VAPID_SUBJECT: 'http://example.com' }), { message: /VAPID_SUBJECT/ });
  const configured = await testApi(db, { env: given });
  try {
    const { client } = await signedInAccount(db.sql, configured.base, 'configured@example.com');
    t.true((await client.get('/console/account')).text.includes(`data-push-key="${given.VAPID_PUBLIC_KEY}"`), 'the page offers the configured key');
  } finally {
    await configured.close();
  }
});

test('the analyst reads no subscription, key or push record and calls no push function', async (t) => {
  const analyst = postgres(db.urlAs('analyst'), { prepare: false, max: 1, onnotice: () => {} });
  try {
    for (const table of ['app.push_subscriptions', 'app.vapid_keys', 'app.push_messages', 'app.push_attempts']) {
      const error = await t.throwsAsync(analyst.unsafe(`select * from ${table}`).simple(), undefined, table);
      t.is((error as { code?: string }).code, '42501', table);
    }
    for (const call of ["select * from app.push_subscriptions_of('x')", "select * from app.push_vapid_keys('a', 'b')"]) {
      const error = await t.throwsAsync(analyst.unsafe(call).simple(), undefined, call);
      t.is((error as { code?: string }).code, '42501', call);
    }
  } finally {
    await analyst.end();
  }
});

test('a notification too large for a push leaves the event out and keeps the link to the alarm', (t) => {
  const event = {
    alarm: { id: 9, name: 'n'.repeat(255) }, coin: { slug: 'alpha', name: 'A'.repeat(3000), symbol: 'ALP' },
    metric: 'rate', direction: 'above', target: '1', value: '2', triggered_at: '2026-01-01T00:00:00+00:00',
  };
  const shown = notification({ kind: 'alarm.triggered', data: event });
  t.is(shown.data, undefined);
  t.is(shown.url, '/console/alarms#alarm-9');
  t.true(Buffer.byteLength(JSON.stringify(shown)) <= MAX_PAYLOAD_BYTES);
  t.deepEqual(notification({ kind: 'alarm.triggered', data: { ...event, coin: { ...event.coin, name: 'Alpha' } } }).data, { ...event, coin: { ...event.coin, name: 'Alpha' } });
});
