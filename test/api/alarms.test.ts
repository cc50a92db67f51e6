// Alarms group over HTTP: CRUD shapes (target a decimal string, exactly as sent), pagination and
// filters, ownership isolation, the inventory balance, the instant-trigger guard and validation.
import test from 'ava';
import type { TestDatabase } from '../helpers/database.ts';
import { setOwnerEmail } from '../../src/keys.ts';
import { testApi, useApi, type TestResponse } from '../helpers/http.ts';

/** Coins with current figures and one listed without a price yet; gamma's price is moved by the update test only. */
export async function loadAlarmCoins(db: TestDatabase) {
  const { sql } = db;
  await sql`insert into market.data_sources (name, kind, description) values ('alarm-test', 'import', 'Alarm test fixture')`;
  await sql`
    insert into market.coins (id, slug, symbol, name, type, circulating_supply, source) values
      (301, 'alpha', 'ALP', 'Alpha', 'coin', 1000, 'alarm-test'),
      (302, 'beta', 'BET', 'Beta', 'token', null, 'alarm-test'),
      (303, 'unpriced', 'UNP', 'Unpriced', 'coin', 10, 'alarm-test'),
      (304, 'gamma', 'GAM', 'Gamma', 'coin', 10, 'alarm-test')`;
  await sql`
    insert into market.coin_state (coin_id, price, volume_24h, marketcap) values
      (301, 100, 5000, 100000), (302, 0.5, 20, null), (303, null, 0, null), (304, 100, 1, 1000)`;
}

/** This file's service sends e-mail (nothing is sent: no worker runs here); test/jobs/email_delivery.test.ts sends it. */
const MAIL_ENV = { SMTP_URL: 'smtp://127.0.0.1:9', MAIL_FROM: 'Alarms <alarms@example.com>' };
const handles = useApi(test, { env: MAIL_ENV, setup: async ({ db }) => loadAlarmCoins(db) });

const owners = new Map<string, string>();
/** A key of `owner` (one key per owner, created on first use), whose owner has an e-mail address unless named "noaddress". */
async function keyOf(owner: string) {
  if (!owners.has(owner)) {
    owners.set(owner, await handles.api.key({ owner }));
    if (owner !== 'noaddress') await setOwnerEmail(handles.db.sql, owner, `${owner}@example.com`);
  }
  return owners.get(owner)!;
}

const send = async (method: string, path: string, owner: string, body?: unknown) =>
  handles.api.request(method, `/api/v1${path}`, {
    key: await keyOf(owner),
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });

const valid = { name: 'Alpha to 150', coin: 'alpha', metric: 'rate', direction: 'above', target: 150, notification: 'webhook' };
const create = (owner: string, body: Record<string, unknown> = {}) => send('POST', '/alarms', owner, { ...valid, ...body });
const errorOf = (response: TestResponse) => [response.status, response.body.error?.code];

test('create returns 201 with the alarm, target as a decimal string, and the balance left', async (t) => {
  const response = await create('shape');
  t.is(response.status, 201);
  t.is(response.headers.get('cache-control'), 'no-store');
  const alarm = response.body.data;
  t.like(alarm, {
    type: 'TARGET', name: 'Alpha to 150', coin: { slug: 'alpha', symbol: 'ALP', name: 'Alpha' }, metric: 'rate', direction: 'above', target: '150',
    notification: 'webhook', status: 'active', triggered_value: null, triggered_at: null,
  });
  t.true(Number.isInteger(alarm.id));
  t.regex(alarm.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
  t.is(response.body.meta.balance, 9, 'a new owner starts with 10 and the create took one');
  const fetched = await send('GET', `/alarms/${alarm.id}`, 'shape');
  t.is(fetched.status, 200);
  t.deepEqual(fetched.body.data, alarm);
  t.is(fetched.headers.get('cache-control'), 'no-store');
  // the reference's shape everywhere: the coin is an object in the list and after an update too
  const listed = await send('GET', '/alarms', 'shape');
  t.deepEqual(listed.body.data.map((row: { coin: unknown }) => row.coin), [{ slug: 'alpha', symbol: 'ALP', name: 'Alpha' }]);
  const renamed = await send('PATCH', `/alarms/${alarm.id}`, 'shape', { name: 'renamed' });
  t.deepEqual(renamed.body.data.coin, { slug: 'alpha', symbol: 'ALP', name: 'Alpha' });
});

test('target keeps every digit of a JSON number or a decimal string (no float round trip)', async (t) => {
  const long = await send('POST', '/alarms', 'digits', `{"name":"n","coin":"alpha","metric":"rate","direction":"above","notification":"email","target":100.12345678901234567890123}`);
  t.is(long.status, 201);
  t.is(long.body.data.target, '100.12345678901234567890123');
  const text = await create('digits', { target: '1234567.000000000000000001' });
  t.is(text.body.data.target, '1234567.000000000000000001');
  const exponent = await send('POST', '/alarms', 'digits', `{"name":"n","coin":"alpha","metric":"rate","direction":"below","notification":"webhook","target":1e1}`);
  t.is(exponent.body.data.target, '10');
  const nested = await send('POST', '/alarms', 'digits', `{"extra":{"target":1},"name":"n","coin":"alpha","metric":"rate","direction":"above","notification":"webhook","target":200.10}`);
  t.is(nested.body.data.target, '200.10', 'only the top-level target counts');
});

test('list pages newest first with the reference envelope and filters by status, direction and notification', async (t) => {
  const owner = 'lister';
  const ids: number[] = [];
  for (const [direction, target, notification] of [['above', 200, 'email'], ['below', 50, 'email'], ['above', 300, 'webhook'], ['below', 10, 'webhook']] as const) {
    ids.push((await create(owner, { direction, target, notification })).body.data.id);
  }
  const page1 = await send('GET', '/alarms?per_page=3', owner);
  t.is(page1.status, 200);
  t.is(page1.headers.get('cache-control'), 'no-store');
  t.deepEqual(page1.body.data.map((a: { id: number }) => a.id), ids.slice(1).reverse());
  t.like(page1.body.meta, { current_page: 1, per_page: 3, total: 4, last_page: 2, from: 1, to: 3, balance: 6 });
  t.is(page1.body.links.next, `${handles.api.base}/api/v1/alarms?per_page=3&page=2`);
  const page2 = await send('GET', '/alarms?per_page=3&page=2', owner);
  t.deepEqual(page2.body.data.map((a: { id: number }) => a.id), [ids[0]]);
  t.is((await send('GET', '/alarms', owner)).body.meta.per_page, 25);

  const below = await send('GET', '/alarms?direction=below', owner);
  t.deepEqual(below.body.data.map((a: { id: number }) => a.id), [ids[3], ids[1]]);
  const webhook = await send('GET', '/alarms?notification=webhook&direction=above', owner);
  t.deepEqual(webhook.body.data.map((a: { id: number }) => a.id), [ids[2]]);
  t.is((await send('GET', '/alarms?status=triggered', owner)).body.meta.total, 0);
  t.is((await send('GET', '/alarms?status=active', owner)).body.meta.total, 4);

  const bad = await send('GET', '/alarms?per_page=101&status=done&direction=up&notification=sms', owner);
  t.deepEqual(errorOf(bad), [422, 'validation']);
  t.deepEqual(Object.keys(bad.body.error.details.errors).sort(), ['direction', 'notification', 'per_page', 'status']);
});

test("another owner's alarm is not found for get, patch and delete, and never listed", async (t) => {
  const alarm = (await create('mine')).body.data;
  for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'stolen' }], ['DELETE', undefined]] as const) {
    const response = await send(method, `/alarms/${alarm.id}`, 'theirs', body);
    t.deepEqual(errorOf(response), [404, 'not_found'], method);
  }
  t.is((await send('GET', '/alarms', 'theirs')).body.meta.total, 0);
  const still = await send('GET', `/alarms/${alarm.id}`, 'mine');
  t.is(still.body.data.name, 'Alpha to 150');
  t.deepEqual(errorOf(await send('GET', '/alarms/999999', 'mine')), [404, 'not_found']);
  t.deepEqual(errorOf(await send('GET', '/alarms/abc', 'mine')), [422, 'validation']);
});

test('the inventory: create takes one, delete returns one, at 0 the create is refused with 409', async (t) => {
  const owner = 'hoarder';
  const created: number[] = [];
  for (let i = 0; i < 10; i++) {
    const response = await create(owner, { target: 150 + i });
    t.is(response.status, 201);
    t.is(response.body.meta.balance, 9 - i);
    created.push(response.body.data.id);
  }
  const refused = await create(owner, { target: 500 });
  t.deepEqual(errorOf(refused), [409, 'alarm_inventory_exhausted']);
  t.is((await send('GET', '/alarms', owner)).body.meta.total, 10, 'the refused alarm was not stored');

  const deleted = await send('DELETE', `/alarms/${created[0]}`, owner);
  t.is(deleted.status, 200);
  t.deepEqual(deleted.body.data, { deleted: true });
  t.is(deleted.body.meta.balance, 1);
  t.deepEqual(errorOf(await send('GET', `/alarms/${created[0]}`, owner)), [404, 'not_found']);
  t.deepEqual(errorOf(await send('DELETE', `/alarms/${created[0]}`, owner)), [404, 'not_found'], 'a second delete returns nothing');
  t.is((await create(owner, { target: 500 })).status, 201, 'the returned one can be used');
  t.deepEqual(errorOf(await create(owner, { target: 501 })), [409, 'alarm_inventory_exhausted']);

  // an operator raises the balance with SQL
  await handles.db.sql`update app.alarm_inventory set balance = balance + 5 where owner = ${owner}`;
  t.is((await create(owner, { target: 502 })).body.meta.balance, 4);
});

test('the guard refuses an alarm that would trigger at once, in both directions, without using inventory', async (t) => {
  const owner = 'guarded';
  const above = await create(owner, { target: 100 });
  t.deepEqual(errorOf(above), [422, 'alarm_would_trigger'], 'above when the price (100) already is at the target');
  t.deepEqual(above.body.error.details, { metric: 'rate', direction: 'above', target: '100', current_value: '100' });
  t.deepEqual(errorOf(await create(owner, { target: '99.99' })), [422, 'alarm_would_trigger']);
  t.deepEqual(errorOf(await create(owner, { direction: 'below', target: 100 })), [422, 'alarm_would_trigger']);
  t.deepEqual(errorOf(await create(owner, { direction: 'below', target: 150 })), [422, 'alarm_would_trigger']);
  t.deepEqual(errorOf(await create(owner, { metric: 'volume', target: 4000 })), [422, 'alarm_would_trigger']);
  t.deepEqual(errorOf(await create(owner, { metric: 'marketcap', direction: 'below', target: 200000 })), [422, 'alarm_would_trigger']);
  t.is((await create(owner, { direction: 'below', target: '99.99' })).status, 201);
  t.is((await create(owner, { metric: 'volume', target: 5001 })).status, 201);
  t.is((await create(owner, { metric: 'marketcap', direction: 'below', target: 99999 })).status, 201);
  t.is((await send('GET', '/alarms', owner)).body.meta.balance, 7, 'refused alarms took nothing');
});

test('no current value for the metric is a 422 no_current_value; an unknown coin a validation error on coin', async (t) => {
  const owner = 'novalue';
  const unpriced = await create(owner, { coin: 'unpriced' });
  t.deepEqual(errorOf(unpriced), [422, 'no_current_value']);
  t.deepEqual(unpriced.body.error.details, { metric: 'rate' });
  t.deepEqual(errorOf(await create(owner, { coin: 'unpriced', metric: 'volume' })), [422, 'no_current_value'], 'volume 0 of a coin that never traded is no value');
  t.deepEqual(errorOf(await create(owner, { coin: 'beta', metric: 'marketcap' })), [422, 'no_current_value'], 'no circulating supply, no marketcap');
  t.is((await create(owner, { coin: 'beta', metric: 'rate', target: '0.75' })).status, 201);
  const unknown = await create(owner, { coin: 'nocoin' });
  t.deepEqual(errorOf(unknown), [422, 'validation']);
  t.deepEqual(Object.keys(unknown.body.error.details.errors), ['coin']);
});

test('validation names every invalid body field', async (t) => {
  const owner = 'validator';
  const bad = await send('POST', '/alarms', owner, {
    name: 'x'.repeat(256), coin: 'Not a slug!', metric: 'price', direction: 'up', target: -1, notification: 'sms',
  });
  t.deepEqual(errorOf(bad), [422, 'validation']);
  t.deepEqual(Object.keys(bad.body.error.details.errors).sort(), ['coin', 'direction', 'metric', 'name', 'notification', 'target']);
  const missing = await send('POST', '/alarms', owner, {});
  t.deepEqual(Object.keys(missing.body.error.details.errors).sort(), ['coin', 'direction', 'metric', 'name', 'notification', 'target']);
  for (const target of ['abc', '1e5', '', 0, '0', true, null]) {
    const response = await create(owner, { target });
    t.deepEqual(Object.keys(response.body.error?.details?.errors ?? {}), ['target'], `target ${JSON.stringify(target)}`);
  }
  const huge = await create(owner, { target: '100000000000000000000' });
  t.deepEqual([huge.status, Object.keys(huge.body.error.details.errors)], [422, ['target']]);
  t.deepEqual(errorOf(await create(owner, { type: 'PERCENT' })), [422, 'validation']);
  t.deepEqual(errorOf(await send('POST', '/alarms', owner, '{"name":')), [400, 'invalid_json']);
  t.is((await send('GET', '/alarms', owner)).body.meta.balance, 10, 'nothing was taken');
});

test('update changes fields, re-applies the guard, and re-arms a triggered alarm', async (t) => {
  const owner = 'updater';
  const alarm = (await create(owner, { coin: 'gamma' })).body.data;
  const renamed = await send('PATCH', `/alarms/${alarm.id}`, owner, { name: 'Renamed', notification: 'email' });
  t.is(renamed.status, 200);
  t.is(renamed.headers.get('cache-control'), 'no-store');
  t.like(renamed.body.data, { name: 'Renamed', notification: 'email', target: '150', status: 'active' });

  t.deepEqual(errorOf(await send('PATCH', `/alarms/${alarm.id}`, owner, { target: 90 })), [422, 'alarm_would_trigger']);
  t.deepEqual(errorOf(await send('PATCH', `/alarms/${alarm.id}`, owner, { direction: 'below' })), [422, 'alarm_would_trigger']);
  t.deepEqual(errorOf(await send('PATCH', `/alarms/${alarm.id}`, owner, { coin: 'unpriced' })), [422, 'no_current_value']);
  t.is((await send('GET', `/alarms/${alarm.id}`, owner)).body.data.target, '150', 'a refused update changes nothing');
  const moved = await send('PATCH', `/alarms/${alarm.id}`, owner, { direction: 'below', target: '80.5' });
  t.like(moved.body.data, { direction: 'below', target: '80.5' });

  t.deepEqual(errorOf(await send('PATCH', `/alarms/${alarm.id}`, owner, {})), [422, 'validation']);
  const badStatus = await send('PATCH', `/alarms/${alarm.id}`, owner, { status: 'triggered' });
  t.deepEqual(Object.keys(badStatus.body.error.details.errors), ['status']);

  // triggered by an evaluation, then re-armed: only when the guard allows it
  await handles.db.sql`update market.coin_state set price = 80 where coin_id = 304`;
  try {
    await handles.db.sql`select * from app.evaluate_alarms()`;
    const fired = (await send('GET', `/alarms/${alarm.id}`, owner)).body.data;
    t.like(fired, { status: 'triggered', triggered_value: '80' });
    t.regex(fired.triggered_at, /\+00:00$/);
    t.is((await send('GET', '/alarms?status=triggered', owner)).body.meta.total, 1);
    t.deepEqual(errorOf(await send('PATCH', `/alarms/${alarm.id}`, owner, { status: 'active' })), [422, 'alarm_would_trigger']);
    const renamedTriggered = await send('PATCH', `/alarms/${alarm.id}`, owner, { name: 'still fired' });
    t.like(renamedTriggered.body.data, { status: 'triggered', name: 'still fired' }, 'other changes leave it triggered');
    const rearmed = await send('PATCH', `/alarms/${alarm.id}`, owner, { status: 'active', target: 70 });
    t.like(rearmed.body.data, { status: 'active', target: '70', triggered_value: null, triggered_at: null });
  } finally {
    await handles.db.sql`update market.coin_state set price = 100 where coin_id = 304`;
  }
});

test('push is refused with 422 push_not_available, and e-mail without an address with 422 email_address_missing, on create and update', async (t) => {
  const push = await create('push', { notification: 'push' });
  t.deepEqual(errorOf(push), [422, 'push_not_available']);
  t.regex(push.body.error.message, /browser subscription/);
  t.deepEqual(push.body.error.details, { notification: 'push' });
  const alarm = (await create('push')).body.data;
  t.deepEqual(errorOf(await send('PATCH', `/alarms/${alarm.id}`, 'push', { notification: 'push' })), [422, 'push_not_available']);
  t.is((await send('GET', `/alarms/${alarm.id}`, 'push')).body.data.notification, 'webhook', 'a refused change changes nothing');

  const missing = await create('noaddress', { notification: 'email' });
  t.deepEqual(errorOf(missing), [422, 'email_address_missing']);
  t.regex(missing.body.error.message, /mdapi set-email/);
  const plain = (await create('noaddress')).body.data;
  t.deepEqual(errorOf(await send('PATCH', `/alarms/${plain.id}`, 'noaddress', { notification: 'email' })), [422, 'email_address_missing']);
  t.is((await send('GET', '/alarms', 'noaddress')).body.meta.balance, 9, 'refused creates take nothing from the inventory');
});

test('without SMTP_URL an e-mail alarm is refused with 422 email_not_configured, on create and update', async (t) => {
  const unconfigured = await testApi(handles.db);
  try {
    const key = await keyOf('nomail');
    const request = (method: string, path: string, body: unknown) =>
      unconfigured.request(method, `/api/v1${path}`, { key, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const refused = await request('POST', '/alarms', { ...valid, notification: 'email' });
    t.deepEqual(errorOf(refused), [422, 'email_not_configured']);
    t.regex(refused.body.error.message, /not configured/);
    const alarm = (await request('POST', '/alarms', valid)).body.data;
    t.is(alarm.notification, 'webhook');
    t.deepEqual(errorOf(await request('PATCH', `/alarms/${alarm.id}`, { notification: 'email' })), [422, 'email_not_configured']);
    // an alarm that already e-mails (created while e-mail was on) keeps its other changes
    const emailing = (await create('nomail', { notification: 'email' })).body.data;
    t.like((await request('PATCH', `/alarms/${emailing.id}`, { name: 'renamed' })).body.data, { name: 'renamed', notification: 'email' });
    const status = await unconfigured.get('/status.json');
    t.like(status.body.data.components.find((c: { id: string }) => c.id === 'email'), { state: 'operational', figures: { sending: 'off' } });
  } finally {
    await unconfigured.close();
  }
  const status = await handles.api.get('/status.json');
  t.like(status.body.data.components.find((c: { id: string }) => c.id === 'email'), { state: 'operational', figures: { sending: 'on' } });
});

test('alarm endpoints need a key', async (t) => {
  t.is((await handles.api.get('/api/v1/alarms')).status, 401);
  t.is((await handles.api.request('POST', '/api/v1/alarms', { body: JSON.stringify(valid), headers: { 'content-type': 'application/json' } })).status, 401);
});
