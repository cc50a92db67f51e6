// The console's webhook pages over HTTP, with a real graphile-worker running deliver_webhook and a
// real receiver on 127.0.0.1: registration (the API's private-target refusal on a service that does
// not allow loopback), the secret shown once and rotated, a signed test event, the delivery log
// (status, duration, the receiver's answer bounded and inert), redelivery, re-enabling a disabled
// endpoint, another account's endpoint a 404 with nothing changed.
import test from 'ava';
import { Logger, run, type Runner } from 'graphile-worker';
import { verifyWebhook } from '../../examples/verify-webhook.ts';
import { deliverWebhook } from '../../jobs/deliver_webhook.ts';
import { RESPONSE_EXCERPT_BYTES } from '../../src/webhooks/post.ts';
import { startReceiver, type Receiver, type Reply } from '../../dev/webhook-receiver.ts';
import { until } from '../../dev/wait.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import { signedInAccount } from '../helpers/console.ts';

let db: TestDatabase;
/** a service that refuses loopback and private targets, as in production */
let strict: TestApi;
/** one that allows them (WEBHOOK_ALLOW_PRIVATE_TARGETS), for receivers on 127.0.0.1 */
let loopback: TestApi;
let runner: Runner;
const receivers: Receiver[] = [];
let accounts = 0;

test.before(async () => {
  db = await testDatabase();
  strict = await testApi(db);
  loopback = await testApi(db, { env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  // the test event names bitcoin, as a service with a market has it
  await db.sql`insert into market.coins (id, slug, symbol, name, type, source) values (1, 'bitcoin', 'BTC', 'Bitcoin', 'coin', 'catalogue') on conflict do nothing`;
  runner = await run({
    connectionString: db.url, noPreparedStatements: true, concurrency: 2, pollInterval: 50, logger: new Logger(() => () => {}),
    taskList: { deliver_webhook: deliverWebhook({ WEBHOOK_TIMEOUT_MS: 5_000, WEBHOOK_ALLOW_PRIVATE_TARGETS: true, WEBHOOK_RETRY_BASE_MS: 60_000 }) },
  });
});
test.after.always(async () => {
  await runner?.stop();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await strict?.close();
  await loopback?.close();
  await db?.close();
});

const receiver = async (...replies: Reply[]) => {
  const started = await startReceiver(...replies);
  receivers.push(started);
  return started;
};

/** A signed-in account on `server` and an API key of the same owner. */
async function account(server: TestApi) {
  const { owner, client } = await signedInAccount(db.sql, server.base, `hooks${++accounts}@example.com`);
  const key = await server.key({ owner });
  const call = (method: string, path: string, body?: unknown) =>
    server.request(method, `/api/v1${path}`, { key, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  await client.get('/console/webhooks');
  return { owner, client, call };
}

const shownSecret = (text: string) => /id="new-secret-value">(whsec_[0-9a-f]+)</.exec(text)?.[1] ?? null;
const fieldError = (text: string, name: string) => new RegExp(`<p class="error" id="f-${name}-error">Error: ([^<]*)</p>`).exec(text)?.[1] ?? null;
const endpointCount = async (owner: string) => Number((await db.sql`select count(*) from app.webhook_endpoints where owner = ${owner}`)[0]!.count);
const unescape = (text: string) => text.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&amp;', '&');
/** Waits until the endpoint's deliveries have `count` attempts that reached an outcome. */
const settledAttempts = (endpointId: number, count: number) =>
  until(`${count} settled attempts`, async () => Number((await db.sql`
    select count(*) from app.webhook_attempts a join app.webhook_deliveries d on d.id = a.delivery_id
    where d.endpoint_id = ${endpointId} and a.outcome is not null and d.status <> 'pending'`)[0]!.count) >= count);

test.serial('a private or loopback URL is refused as the API refuses it, and nothing is stored', async (t) => {
  const { owner, client, call } = await account(strict);
  for (const url of ['http://127.0.0.1:9/hook', 'http://10.0.0.1/hook', 'http://[::1]/hook', 'ftp://hooks.example.com/x', 'not a url']) {
    const page = await client.post('/console/webhooks', { url, events: 'alarm.triggered' });
    t.is(page.status, 422, url);
    const viaApi = await call('POST', '/webhooks', { url, events: ['alarm.triggered'] });
    t.is(viaApi.status, 422, url);
    t.is(unescape(fieldError(page.text, 'url') ?? ''), viaApi.body.error.details.errors.url[0], `the API's message beside the field: ${url}`);
  }
  const noEvent = await client.post('/console/webhooks', { url: 'http://10.0.0.1/hook' });
  t.is(noEvent.status, 422);
  t.regex(noEvent.text, /id="f-events-error">Error: Choose at least one event/);
  t.is(await endpointCount(owner), 0);
});

test.serial('register, secret shown once, a signed test event, the delivery log with a bounded inert excerpt, redeliver, rotate', async (t) => {
  const answer = `<script>alert(1)</script>"><img src=x onerror=alert(2)>${'é'.repeat(6_000)}`;
  const hook = await receiver({ status: 200, body: answer });
  const { owner, client, call } = await account(loopback);

  const created = await client.post('/console/webhooks', { url: hook.url, events: 'alarm.triggered' });
  t.is(created.status, 200, created.text);
  const secret = shownSecret(created.text);
  t.truthy(secret);
  t.regex(created.text, /shown this once/);
  t.regex(created.text, /data-copy="new-secret-value"/);
  const again = await client.get('/console/webhooks');
  t.false(again.text.includes(secret!), 'the secret is shown once only');
  const listed = await call('GET', '/webhooks');
  t.is(listed.body.data.length, 1, 'the same owner sees it through the API');
  const id: number = listed.body.data[0].id;
  t.like(listed.body.data[0], { url: hook.url, events: ['alarm.triggered'], status: 'delivering' });

  // the test event, signed like a real one
  const queued = await client.post(`/console/webhooks/${id}/test`);
  t.is(queued.status, 200);
  t.regex(queued.text, /A test event is queued/);
  await hook.waitFor(1);
  const [first] = hook.received;
  t.true(first!.body.test);
  t.is(first!.body.type, 'alarm.triggered');
  t.deepEqual(verifyWebhook(first!.rawBody, first!.headers['x-service-signature'] as string, secret!), { ok: true });
  await settledAttempts(id, 1);

  // the delivery log: status, duration, the answer's first bytes escaped
  const log = await client.get(`/console/webhooks/${id}`);
  t.is(log.status, 200);
  t.true(log.text.includes(first!.body.id), 'the event id');
  t.regex(log.text, /succeeded, HTTP 200, \d+ ms/);
  t.false(log.text.includes('<script>alert(1)'));
  t.false(log.text.includes('<img src=x'));
  const excerpt = unescape(/<pre class="excerpt">([^<]*)<\/pre>/.exec(log.text)?.[1] ?? '');
  t.true(answer.startsWith(excerpt.replace(/\uFFFD$/, '')), 'the start of the answer');
  t.true(Buffer.byteLength(excerpt.replace(/\uFFFD$/, '')) <= RESPONSE_EXCERPT_BYTES, `bounded: ${Buffer.byteLength(excerpt)} bytes`);
  t.true(excerpt.length > 400);
  const [stored] = await db.sql<{ n: number }[]>`
    select char_length(a.response_excerpt) as n from app.webhook_attempts a join app.webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = ${id}`;
  t.true(stored!.n <= RESPONSE_EXCERPT_BYTES);
  // the API's delivery log carries it too
  const apiLog = await call('GET', `/webhooks/${id}/deliveries`);
  t.is(apiLog.body.data[0].attempt_log[0].response_excerpt, excerpt);

  // redeliver: the same event again, a second attempt of the delivery
  const deliveryId = String(apiLog.body.data[0].id);
  const redelivered = await client.post(`/console/webhooks/${id}/redeliver`, { delivery: deliveryId });
  t.is(redelivered.status, 200, redelivered.text);
  t.regex(redelivered.text, /Delivery queued again/);
  await hook.waitFor(2);
  t.is(hook.received[1]!.body.id, first!.body.id, 'the same event id');
  t.true(verifyWebhook(hook.received[1]!.rawBody, hook.received[1]!.headers['x-service-signature'] as string, secret!).ok);
  await settledAttempts(id, 2);
  const twice = await client.get(`/console/webhooks/${id}`);
  t.is([...twice.text.matchAll(/succeeded, HTTP 200, \d+ ms/g)].length, 2, 'both attempts in the log');
  t.like((await call('GET', `/webhooks/${id}/deliveries`)).body.data[0], { status: 'succeeded', attempts: 2 });

  // rotate: a new secret, shown once; the next delivery verifies with it and not the old one
  const rotated = await client.post(`/console/webhooks/${id}/rotate`);
  t.is(rotated.status, 200);
  const newSecret = shownSecret(rotated.text);
  t.truthy(newSecret);
  t.not(newSecret, secret);
  await client.post(`/console/webhooks/${id}/test`);
  await hook.waitFor(3);
  const third = hook.received[2]!;
  t.true(verifyWebhook(third.rawBody, third.headers['x-service-signature'] as string, newSecret!).ok);
  t.false(verifyWebhook(third.rawBody, third.headers['x-service-signature'] as string, secret!).ok);
  t.is(await endpointCount(owner), 1);
});

test.serial('a disabled endpoint is re-enabled; a test to it while disabled is refused', async (t) => {
  const { owner, client, call } = await account(loopback);
  await client.post('/console/webhooks', { url: 'http://127.0.0.1:9/hook', events: 'alarm.triggered' });
  const [{ id }] = (await call('GET', '/webhooks')).body.data;
  // as the 10th failed delivery in a row leaves it
  await db.sql`update app.webhook_endpoints set status = 'disabled', disabled_at = now(), consecutive_failures = 10 where id = ${id}`;
  const list = await client.get('/console/webhooks');
  t.regex(list.text, /<strong>disabled<\/strong> .* after 10 failed deliveries in a row/);
  t.regex(list.text, />Re-enable</);
  t.notRegex(list.text, />Send a test event</);
  const refused = await client.post(`/console/webhooks/${id}/test`);
  t.is(refused.status, 409);
  t.regex(refused.text, /is disabled; re-enable it first/);
  t.is(Number((await db.sql`select count(*) from app.webhook_deliveries where endpoint_id = ${id}`)[0]!.count), 0);
  const enabled = await client.post(`/console/webhooks/${id}/enable`);
  t.is(enabled.status, 200);
  t.regex(enabled.text, /Endpoint re-enabled/);
  t.like((await call('GET', `/webhooks/${id}`)).body.data, { status: 'delivering', consecutive_failures: 0, disabled_at: null });
  // the log pages newest first, 20 a page, with a link to older ones
  await db.sql`
    with events as (insert into app.webhook_events (owner, event, data, created_at)
      select ${owner}, 'alarm.triggered', jsonb_build_object('n', n), now() - n * interval '1 minute' from generate_series(1, 25) n returning id, created_at)
    insert into app.webhook_deliveries (endpoint_id, event_id, status, created_at) select ${id}, id, 'failed', created_at from events`;
  const newest = await client.get(`/console/webhooks/${id}`);
  t.is([...newest.text.matchAll(/>Redeliver</g)].length, 20);
  t.regex(newest.text, new RegExp(`href="/console/webhooks/${id}\\?page=2" rel="next">Older<`));
  const older = await client.get(`/console/webhooks/${id}?page=2`);
  t.is([...older.text.matchAll(/>Redeliver</g)].length, 5);
  t.regex(older.text, />Newer</);
  t.notRegex(older.text, />Older</);
  // deleted in the console, gone for the API
  t.is((await client.post(`/console/webhooks/${id}/delete`)).status, 200);
  t.is((await call('GET', `/webhooks/${id}`)).status, 404);
  t.is(await endpointCount(owner), 0);
});

test.serial("another account's endpoint is a 404 and stays as it was", async (t) => {
  const alice = await account(loopback);
  const made = await alice.call('POST', '/webhooks', { url: 'http://127.0.0.1:9/alice', events: ['alarm.triggered'] });
  const id = made.body.data.id;
  await db.sql`update app.webhook_endpoints set status = 'disabled', disabled_at = now(), consecutive_failures = 10 where id = ${id}`;
  const before = await db.sql`select * from app.webhook_endpoints where id = ${id}`;
  const { client: bob } = await account(loopback);
  t.is((await bob.get(`/console/webhooks/${id}`)).status, 404);
  for (const action of ['test', 'rotate', 'enable', 'delete', 'redeliver']) {
    const page = await bob.post(`/console/webhooks/${id}/${action}`, { delivery: '1' });
    t.is(page.status, 404, action);
    t.regex(page.text, /That endpoint does not exist .*nothing was changed/, action);
  }
  for (const path of ['/console/webhooks/abc', '/console/webhooks/99999999']) t.is((await bob.get(path)).status, 404, path);
  t.deepEqual(await db.sql`select * from app.webhook_endpoints where id = ${id}`, before);
  t.is(Number((await db.sql`select count(*) from app.webhook_deliveries where endpoint_id = ${id}`)[0]!.count), 0);
});

test.serial('a URL with markup renders inert', async (t) => {
  const { client } = await account(loopback);
  const url = 'http://127.0.0.1:9/"><img src=x onerror=alert(1)><script>alert(2)</script>';
  const page = await client.post('/console/webhooks', { url, events: 'alarm.triggered' });
  t.is(page.status, 200);
  t.false(page.text.includes('<script>alert(2)'));
  t.false(page.text.includes('<img src=x'));
  t.true(page.text.includes('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(2)&lt;/script&gt;'));
  const refused = await client.post('/console/webhooks', { url: `javascript:"><script>alert(3)</script>` });
  t.is(refused.status, 422);
  t.false(refused.text.includes('<script>alert(3)'));
});
