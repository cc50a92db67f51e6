// The console's alarm pages over HTTP: create, edit, re-arm and delete, seen through /api/v1/alarms
// with a key of the same owner (and the other way round); the API's 422s (instant-trigger guard,
// unknown coin, no current value, push) beside their fields with nothing stored; the channels
// offered; another account's alarm a 404 with nothing changed; names rendered inert.
import { createECDH, randomBytes } from 'node:crypto';
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import { signedInAccount } from '../helpers/console.ts';

let db: TestDatabase;
let api: TestApi;
let noMail: TestApi;
let accounts = 0;
const nextEmail = () => `alarms${++accounts}@example.com`;

test.before(async () => {
  db = await testDatabase();
  // the service sends e-mail (nothing is sent: no worker runs here)
  api = await testApi(db, { env: { SMTP_URL: 'smtp://127.0.0.1:9', MAIL_FROM: 'Alarms <alarms@example.com>' } });
  noMail = await testApi(db);
  await db.sql`insert into market.data_sources (name, kind, description) values ('console-alarms', 'import', 'Console alarm test fixture')`;
  await db.sql`
    insert into market.coins (id, slug, symbol, name, type, source) values
      (401, 'alpha', 'ALP', 'Alpha', 'coin', 'console-alarms'), (402, 'unpriced', 'UNP', 'Unpriced', 'coin', 'console-alarms')`;
  await db.sql`insert into market.coin_state (coin_id, price, volume_24h, marketcap) values (401, 100, 5000, 100000), (402, null, 0, null)`;
});
test.after.always(async () => {
  await api?.close();
  await noMail?.close();
  await db?.close();
});

/** A signed-in account and an API key of the same owner. */
async function account(server = api) {
  const { owner, client } = await signedInAccount(db.sql, server.base, nextEmail());
  const key = await server.key({ owner });
  const call = (method: string, path: string, body?: unknown) =>
    server.request(method, `/api/v1${path}`, { key, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { owner, client, call };
}

const setPrice = (price: string) => db.sql`update market.coin_state set price = ${price} where coin_id = 401`;
const alarmCount = async (owner: string) => Number((await db.sql`select count(*) from app.alarms where owner = ${owner}`)[0]!.count);
/** The error shown beside a field, or null. */
const fieldError = (text: string, name: string) => new RegExp(`<p class="error" id="f-${name}-error">Error: ([^<]*)</p>`).exec(text)?.[1] ?? null;
const valid = { name: 'Alpha to 150', coin: 'alpha', metric: 'rate', direction: 'above', target: '150.000000000000000001', notification: 'email' };

test.serial('create, edit, re-arm and delete in the console, seen through the API with the same owner\'s key, and the reverse', async (t) => {
  const { owner, client, call } = await account();
  const empty = await client.get('/console/alarms');
  t.is(empty.status, 200);
  t.regex(empty.text, /<a href="\/console\/alarms" aria-current="page">Alarms<\/a>/);

  // post, redirect, get: the form's answer is a 303 to the list, which says what was done
  const posted = await client.post('/console/alarms', valid);
  t.is(posted.status, 303, posted.text);
  t.regex(posted.location ?? '', /^\/console\/alarms\?done=created&alarm=\d+$/);
  const created = await client.get(posted.location!);
  t.is(created.status, 200);
  t.regex(created.text, /Alarm <strong>Alpha to 150<\/strong> created and armed/);
  // a reload of the list creates nothing more
  t.regex((await client.get(posted.location!)).text, /created and armed/);
  t.is(await alarmCount(owner), 1);
  const listed = await call('GET', '/alarms');
  t.is(listed.body.meta.total, 1);
  const alarm = listed.body.data[0];
  t.like(alarm, { name: 'Alpha to 150', coin: { slug: 'alpha' }, metric: 'rate', direction: 'above', target: '150.000000000000000001', notification: 'email', status: 'active' });
  t.is(listed.body.meta.balance, 9);

  // the list: target, the current value and the distance (absolute and %) as SQL computed them
  t.regex(created.text, /<td data-label="Target" class="num">150\.000000000000000001<\/td>/);
  t.regex(created.text, /<td data-label="Current value" class="num">100<\/td>/);
  t.regex(created.text, /<td data-label="Distance">50\.000000000000000001 \(50\.00 %\)<\/td>/);
  t.regex(created.text, /armed/);

  // edit: the form comes filled in; the change is what the API shows
  const edit = await client.get(`/console/alarms/${alarm.id}`);
  t.is(edit.status, 200);
  t.regex(edit.text, /id="f-target" name="target" type="text" value="150.000000000000000001"/);
  const saved = await client.post(`/console/alarms/${alarm.id}`, { ...valid, name: 'Alpha to 200', target: '200' });
  t.is(saved.status, 303, saved.text);
  t.regex((await client.get(saved.location!)).text, /Alarm <strong>Alpha to 200<\/strong> saved\./);
  t.like((await call('GET', `/alarms/${alarm.id}`)).body.data, { name: 'Alpha to 200', target: '200', status: 'active' });

  // triggered by an evaluation; re-arming is refused by the guard while the price is past the target
  await setPrice('250');
  await db.sql`select * from app.evaluate_alarms()`;
  const fired = await client.get('/console/alarms');
  t.regex(fired.text, /<strong>triggered<\/strong> \d{4}-\d\d-\d\d \d\d:\d\d UTC at 250/);
  t.regex(fired.text, /Re-arm Alpha to 200/);
  const refused = await client.post(`/console/alarms/${alarm.id}/rearm`);
  t.is(refused.status, 422);
  t.regex(fieldError(refused.text, 'target') ?? '', /would trigger at once/);
  t.like((await call('GET', `/alarms/${alarm.id}`)).body.data, { status: 'triggered', triggered_value: '250' });
  await setPrice('100');
  const rearmed = await client.post(`/console/alarms/${alarm.id}/rearm`);
  t.is(rearmed.status, 303);
  t.regex((await client.get(rearmed.location!)).text, /Alarm <strong>Alpha to 200<\/strong> re-armed\./);
  t.like((await call('GET', `/alarms/${alarm.id}`)).body.data, { status: 'active', triggered_value: null });

  // the reverse: made through the API, edited and deleted in the console
  const viaApi = await call('POST', '/alarms', { name: 'API-made', coin: 'alpha', metric: 'rate', direction: 'below', target: '90.5', notification: 'email' });
  t.is(viaApi.status, 201);
  const seen = await client.get('/console/alarms');
  t.regex(seen.text, /API-made/);
  t.regex(seen.text, /<td data-label="Distance">-9\.5 \(-9\.50 %\)<\/td>/);
  t.is((await client.post(`/console/alarms/${viaApi.body.data.id}`, { name: 'renamed in the console', coin: 'alpha', metric: 'rate', direction: 'below', target: '90.5', notification: 'email' })).status, 303);
  t.is((await call('GET', `/alarms/${viaApi.body.data.id}`)).body.data.name, 'renamed in the console');
  t.is((await client.post(`/console/alarms/${viaApi.body.data.id}/delete`)).status, 303);
  t.is((await call('GET', `/alarms/${viaApi.body.data.id}`)).status, 404);
  const deleted = await client.post(`/console/alarms/${alarm.id}/delete`);
  t.is(deleted.location, '/console/alarms?done=deleted');
  t.regex((await client.get(deleted.location!)).text, /deleted; one is back in your inventory/);
  t.like((await call('GET', '/alarms')).body.meta, { total: 0, balance: 10 });
  t.is(await alarmCount(owner), 0);
});

test.serial('the API\'s 422s are shown beside their field and nothing is stored', async (t) => {
  const { owner, client } = await account();
  await client.get('/console/alarms');
  const cases: [Record<string, string>, string, RegExp][] = [
    // the instant-trigger guard: alpha is at 100 already
    [{ direction: 'above', target: '50' }, 'target', /would trigger at once: the current rate 100 is already at or above the target 50/],
    [{ direction: 'below', target: '100' }, 'target', /would trigger at once/],
    [{ coin: 'no-such-coin' }, 'coin', /Unknown coin &quot;no-such-coin&quot;/],
    [{ coin: 'unpriced' }, 'metric', /no current rate value/],
    [{ target: 'abc' }, 'target', /decimal number/],
    [{ target: '0' }, 'target', /positive decimal/],
    [{ name: '  ' }, 'name', /Must not be empty/],
    [{ metric: 'mood' }, 'metric', /./],
    // not offered, and refused by the API's SQL as it is there
    [{ notification: 'push' }, 'notification', /Push notifications need a browser subscription/],
    // webhook is offered only with an endpoint
    [{ notification: 'webhook' }, 'notification', /no webhook endpoint/],
  ];
  for (const [change, name, message] of cases) {
    const page = await client.post('/console/alarms', { ...valid, ...change });
    t.is(page.status, 422, JSON.stringify(change));
    t.regex(fieldError(page.text, name) ?? '(no error beside the field)', message, JSON.stringify(change));
    t.regex(page.text, new RegExp(`id="f-${name}"[^>]*aria-invalid="true"`), 'the field is marked invalid');
  }
  t.is(await alarmCount(owner), 0);
  // what was typed is kept
  const kept = await client.post('/console/alarms', { ...valid, target: '50' });
  t.regex(kept.text, /id="f-target" name="target" type="text" value="50"/);

  // an edit meets the same guard; the alarm stays as it was
  await client.post('/console/alarms', valid);
  const id = (await db.sql<{ id: string }[]>`select id from app.alarms where owner = ${owner}`)[0]!.id;
  const refused = await client.post(`/console/alarms/${id}`, { ...valid, target: '99' });
  t.is(refused.status, 422);
  t.regex(fieldError(refused.text, 'target') ?? '', /would trigger at once/);
  t.is((await db.sql`select target::text from app.alarms where id = ${id}`)[0]!.target, '150.000000000000000001');
});

test.serial('channels: e-mail only with SMTP, webhook only with an endpoint, push only with a subscribed browser', async (t) => {
  const { owner, client } = await account(noMail);
  const none = await client.get('/console/alarms');
  t.notRegex(none.text, /name="notification"/);
  t.regex(none.text, /add a webhook endpoint/);
  await db.sql`select app.create_webhook_endpoint(${owner}, 'https://hooks.example.com/a', array['alarm.triggered'], 10)`;
  const webhook = await client.get('/console/alarms');
  t.regex(webhook.text, /<option value="webhook">Webhook/);
  t.notRegex(webhook.text, /value="email"|value="push"/);
  t.is((await client.post('/console/alarms', { ...valid, notification: 'email' })).status, 422, 'e-mail without SMTP: the API\'s email_not_configured');
  t.is((await client.post('/console/alarms', { ...valid, notification: 'webhook' })).status, 303);

  const { client: withMail } = await account();
  const mail = await withMail.get('/console/alarms');
  t.regex(mail.text, /<option value="email">E-mail to alarms\d+@example.com<\/option>/);
  t.notRegex(mail.text, /value="webhook"|value="push"/);

  // the SQL checks the subscription's keys (src/push/subscription.ts checks them first); the row is all the page counts
  const { owner: subscribed, client: withPush } = await account(noMail);
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  await db.sql`select app.push_subscribe(${subscribed}, 'https://push.example.com/s/1', ${ecdh.getPublicKey().toString('base64url')}, ${randomBytes(16).toString('base64url')}, 'test browser')`;
  t.regex((await withPush.get('/console/alarms')).text, /<option value="push">Push to your subscribed browsers<\/option>/);
});

test.serial("another account's alarm is a 404 and stays as it was", async (t) => {
  const alice = await account();
  const created = await alice.call('POST', '/alarms', { name: 'alice', coin: 'alpha', metric: 'rate', direction: 'above', target: '500', notification: 'email' });
  const id = created.body.data.id;
  const { client: bob } = await account();
  await bob.get('/console/alarms');
  t.is((await bob.get(`/console/alarms/${id}`)).status, 404);
  for (const [path, form] of [[`/console/alarms/${id}`, { ...valid, name: 'taken over' }], [`/console/alarms/${id}/rearm`, {}], [`/console/alarms/${id}/delete`, {}]] as const) {
    const page = await bob.post(path, form);
    t.is(page.status, 404, path);
    t.regex(page.text, /That alarm does not exist .*nothing was changed/);
  }
  for (const path of ['/console/alarms/abc', '/console/alarms/99999999']) t.is((await bob.get(path)).status, 404, path);
  // the list's notice names only this account's alarms: another's id in ?done= shows nothing of it
  const told = await bob.get(`/console/alarms?done=saved&alarm=${id}`);
  t.is(told.status, 200);
  t.notRegex(told.text, /alice|saved\./);
  t.deepEqual((await alice.call('GET', `/alarms/${id}`)).body.data, created.body.data);
});

test.serial('names render inert', async (t) => {
  const { client } = await account();
  await client.get('/console/alarms');
  const name = '<script>alert(1)</script>"><img src=x onerror=alert(2)>';
  const posted = await client.post('/console/alarms', { ...valid, name });
  t.is(posted.status, 303);
  // the notice after the redirect and the list both show the name as text
  const page = await client.get(posted.location!);
  t.regex(page.text, /created and armed/);
  t.false(page.text.includes('<script>alert(1)'));
  t.false(page.text.includes('<img src=x'));
  t.true(page.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;'));
  const refused = await client.post('/console/alarms', { ...valid, name, coin: '"><img src=x onerror=alert(3)>' });
  t.is(refused.status, 422);
  t.false(refused.text.includes('<img src=x'));
});
