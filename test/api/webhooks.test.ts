// Webhooks group over HTTP: register (secret once), list, get, delete, re-enable, test event,
// delivery log; owner isolation (404), URL validation and the private-target guard, the
// per-owner limit, and the secret out of the analyst role's reach.
import test from 'ava';
import postgres from 'postgres';
import { WEBHOOK_ENDPOINT_LIMIT } from '../../src/webhooks/endpoints.ts';
import { isNonPublicAddress, targetProblem } from '../../src/webhooks/target.ts';
import { testApi, useApi, type TestApi } from '../helpers/http.ts';

let production: TestApi;
let alice: string;
let bob: string;
const handles = useApi(test, {
  env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  setup: async ({ db, api }) => {
    // the same database behind an API with the production default: private targets refused
    production = await testApi(db);
    alice = await api.key({ owner: 'alice', plan: 'pro' });
    bob = await api.key({ owner: 'bob', plan: 'pro' });
  },
});
test.after.always(() => production?.close());

const json = (body: unknown) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const create = (key: string, body: unknown, api = handles.api) => api.request('POST', '/api/v1/webhooks', { key, ...json(body) });
const ENDPOINT_FIELDS = ['consecutive_failures', 'created_at', 'disabled_at', 'events', 'id', 'status', 'url'];

test.serial('register returns the endpoint and its secret once; list and get never show the secret', async (t) => {
  const created = await create(alice, { url: 'https://hooks.example.com/market', events: ['alarm.triggered'] });
  t.is(created.status, 201);
  t.is(created.headers.get('cache-control'), 'no-store');
  const endpoint = created.body.data;
  t.deepEqual(Object.keys(endpoint).sort(), [...ENDPOINT_FIELDS, 'secret'].sort());
  t.regex(endpoint.secret, /^whsec_[0-9a-f]{64}$/);
  t.like(endpoint, { url: 'https://hooks.example.com/market', events: ['alarm.triggered'], status: 'delivering', consecutive_failures: 0, disabled_at: null });

  const list = await handles.api.get('/api/v1/webhooks', alice);
  t.is(list.status, 200);
  t.deepEqual(list.body.data.map((row: { id: number }) => row.id), [endpoint.id]);
  t.deepEqual(Object.keys(list.body.data[0]).sort(), ENDPOINT_FIELDS);
  const one = await handles.api.get(`/api/v1/webhooks/${endpoint.id}`, alice);
  t.is(one.status, 200);
  t.deepEqual(one.body.data, list.body.data[0]);
  t.false(JSON.stringify([list.body, one.body]).includes(endpoint.secret));

  const second = await create(alice, { url: 'https://hooks.example.com/other', events: ['alarm.triggered'] });
  t.not(second.body.data.secret, endpoint.secret, 'each endpoint has its own secret');
  t.is((await handles.api.request('DELETE', `/api/v1/webhooks/${second.body.data.id}`, { key: alice })).status, 200);
});

test.serial("another owner's endpoint is not found, whatever the operation", async (t) => {
  const { body } = await create(alice, { url: 'https://hooks.example.com/isolated', events: ['alarm.triggered'] });
  const id = body.data.id;
  t.deepEqual((await handles.api.get('/api/v1/webhooks', bob)).body.data, []);
  for (const [method, path] of [
    ['GET', `/api/v1/webhooks/${id}`], ['DELETE', `/api/v1/webhooks/${id}`], ['POST', `/api/v1/webhooks/${id}/test`],
    ['POST', `/api/v1/webhooks/${id}/enable`], ['GET', `/api/v1/webhooks/${id}/deliveries`],
  ] as const) {
    const response = await handles.api.request(method, path, { key: bob });
    t.is(response.status, 404, `${method} ${path}`);
    t.is(response.body.error.code, 'not_found');
  }
  t.is((await handles.api.get(`/api/v1/webhooks/${id}`, alice)).status, 200, 'still there for its owner');
  t.is((await handles.api.get('/api/v1/webhooks/999999', alice)).status, 404);
  const [deliveries] = await handles.db.sql`select count(*)::int as n from app.webhook_deliveries d join app.webhook_endpoints e on e.id = d.endpoint_id where e.id = ${id}`;
  t.is(deliveries!.n, 0, "bob's test request queued nothing");
});

test.serial('delete removes the endpoint and its deliveries', async (t) => {
  const { body } = await create(alice, { url: 'https://hooks.example.com/gone', events: ['alarm.triggered'] });
  t.is((await handles.api.request('POST', `/api/v1/webhooks/${body.data.id}/test`, { key: alice })).status, 200);
  const deleted = await handles.api.request('DELETE', `/api/v1/webhooks/${body.data.id}`, { key: alice });
  t.is(deleted.status, 200);
  t.deepEqual(deleted.body.data, { deleted: true });
  t.is((await handles.api.get(`/api/v1/webhooks/${body.data.id}`, alice)).status, 404);
  t.is((await handles.api.request('DELETE', `/api/v1/webhooks/${body.data.id}`, { key: alice })).status, 404);
  const [left] = await handles.db.sql`select count(*)::int as n from app.webhook_deliveries where endpoint_id = ${body.data.id}`;
  t.is(left!.n, 0);
});

test.serial('the test event is queued and logged; a disabled endpoint refuses it until re-enabled', async (t) => {
  const { body } = await create(alice, { url: 'https://hooks.example.com/test', events: ['alarm.triggered'] });
  const id = body.data.id;
  const queued = await handles.api.request('POST', `/api/v1/webhooks/${id}/test`, { key: alice });
  t.is(queued.status, 200);
  t.is(queued.body.data.queued, true);
  const [job] = await handles.db.sql`
    select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id
    where k.identifier = 'deliver_webhook' and j.payload->>'delivery_id' = ${String(queued.body.data.delivery_id)}`;
  t.is(job!.n, 1, 'one deliver_webhook job in the same transaction');

  const log = await handles.api.get(`/api/v1/webhooks/${id}/deliveries`, alice);
  t.is(log.status, 200);
  t.like(log.body.meta, { current_page: 1, per_page: 25, total: 1, last_page: 1, retention: '30 days' });
  t.like(log.body.data[0], { id: queued.body.data.delivery_id, event: 'alarm.triggered', test: true, status: 'pending', response_status: null, error: null, attempts: 0, delivered_at: null });
  t.is((await handles.api.get(`/api/v1/webhooks/${id}/deliveries?per_page=101`, alice)).status, 422);

  await handles.db.sql`update app.webhook_endpoints set status = 'disabled', disabled_at = now(), consecutive_failures = 10 where id = ${id}`;
  const refused = await handles.api.request('POST', `/api/v1/webhooks/${id}/test`, { key: alice });
  t.is(refused.status, 409);
  t.regex(refused.body.error.message, /disabled/);
  const enabled = await handles.api.request('POST', `/api/v1/webhooks/${id}/enable`, { key: alice });
  t.is(enabled.status, 200);
  t.like(enabled.body.data, { id, status: 'delivering', consecutive_failures: 0, disabled_at: null });
  t.is((await handles.api.request('POST', `/api/v1/webhooks/${id}/test`, { key: alice })).status, 200);
});

test.serial('URLs other than http(s), malformed bodies and unknown events are 422', async (t) => {
  for (const body of [
    { url: 'ftp://hooks.example.com/x', events: ['alarm.triggered'] },
    { url: 'javascript:alert(1)', events: ['alarm.triggered'] },
    { url: 'not a url', events: ['alarm.triggered'] },
    { url: 'https://user:pass@hooks.example.com/x', events: ['alarm.triggered'] },
    { url: 'https://hooks.example.com/x', events: ['price.changed'] },
    { url: 'https://hooks.example.com/x', events: [] },
    { url: 'https://hooks.example.com/x' },
    { events: ['alarm.triggered'] },
  ]) {
    const response = await create(alice, body);
    t.is(response.status, 422, JSON.stringify(body));
    t.is(response.body.error.code, 'validation');
  }
});

test.serial('with the production default, loopback and private-range targets are refused, names resolved first', async (t) => {
  for (const url of [
    'http://127.0.0.1:8080/hook', 'http://localhost:8080/hook', 'http://10.1.2.3/hook', 'http://192.168.1.10/hook', 'http://172.20.0.1/',
    'http://169.254.169.254/latest/meta-data', 'http://[::1]/hook', 'http://[fd00::1]/', 'http://[::ffff:127.0.0.1]/', 'http://0.0.0.0/',
  ]) {
    const response = await create(alice, { url, events: ['alarm.triggered'] }, production);
    t.is(response.status, 422, url);
    t.regex(response.body.error.details.errors.url[0], /public host|does not resolve/, url);
  }
  // a public address literal passes (no DNS involved)
  const allowed = await create(alice, { url: 'https://93.184.216.34/hook', events: ['alarm.triggered'] }, production);
  t.is(allowed.status, 201);
  await handles.api.request('DELETE', `/api/v1/webhooks/${allowed.body.data.id}`, { key: alice });
  t.true(isNonPublicAddress('100.64.1.1'));
  t.false(isNonPublicAddress('8.8.8.8'));
  t.false(isNonPublicAddress('2606:4700::1111'));
  t.is(await targetProblem('http://127.0.0.1/', true), null, 'allowed when configured');
});

test.serial(`an owner has at most ${WEBHOOK_ENDPOINT_LIMIT} endpoints`, async (t) => {
  const owner = await handles.api.key({ owner: 'carol' });
  const created = await Promise.all(
    Array.from({ length: WEBHOOK_ENDPOINT_LIMIT + 2 }, (_, i) => create(owner, { url: `https://hooks.example.com/${i}`, events: ['alarm.triggered'] })),
  );
  t.deepEqual(created.map((r) => r.status).sort(), [...Array(WEBHOOK_ENDPOINT_LIMIT).fill(201), 409, 409], 'concurrent creates cannot overshoot');
  const refused = created.find((r) => r.status === 409)!;
  t.is(refused.body.error.code, 'conflict');
  t.regex(refused.body.error.message, new RegExp(`At most ${WEBHOOK_ENDPOINT_LIMIT} webhook endpoints`));
  t.is((await create(bob, { url: 'https://hooks.example.com/bob', events: ['alarm.triggered'] })).status, 201, "one owner's limit is not another's");
});

test.serial('the analyst role cannot read the secret nor call the webhook functions', async (t) => {
  const analyst = postgres(handles.db.urlAs('analyst'), { prepare: false, max: 1, onnotice: () => {} });
  try {
    for (const query of [
      analyst`select secret from app.webhook_endpoints`,
      analyst`select * from app.webhook_events`,
      analyst`select app.list_webhook_endpoints('alice')`,
      analyst`select * from app.begin_outbox_attempt('webhook', 1)`,
    ]) {
      const error = await t.throwsAsync(query);
      t.is((error as { code?: string }).code, '42501');
    }
  } finally {
    await analyst.end();
  }
});
