// Webhook delivery end to end: events queued in SQL, the deliver_webhook task of a real
// graphile-worker, and real HTTP receivers on 127.0.0.1. Signature, the outbox's transaction,
// retries (exactly 1 + 3 attempts), auto-disable after 10 failed deliveries, re-enabling, and
// redelivery after a worker is killed mid-POST.
import { spawn } from 'node:child_process';
import test from 'ava';
import { Logger, run, type Runner } from 'graphile-worker';
import { verifyWebhook } from '../../examples/verify-webhook.ts';
import { deliverWebhook } from '../../jobs/deliver_webhook.ts';
import { AlarmTriggeredEvent } from '../../src/alarms.ts';
import { signatureHeader } from '../../src/webhooks/signature.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { startReceiver, type Receiver } from '../../dev/webhook-receiver.ts';
import { sleep, until } from '../../dev/wait.ts';

// Retries wait 20, 100 and 500 ms here (1, 5 and 25 minutes in production).
const RETRY_BASE_MS = 20;
const silent = new Logger(() => () => {});
let db: TestDatabase;
let runner: Runner;
const receivers: Receiver[] = [];

test.before(async () => {
  db = await testDatabase();
  runner = await run({
    connectionString: db.url, noPreparedStatements: true, concurrency: 4, pollInterval: 50, logger: silent,
    taskList: { deliver_webhook: deliverWebhook({ WEBHOOK_TIMEOUT_MS: 400, WEBHOOK_ALLOW_PRIVATE_TARGETS: true, WEBHOOK_RETRY_BASE_MS: RETRY_BASE_MS }) },
  });
});
test.after.always(async () => {
  await runner?.stop();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await db?.close();
});

const receiver = async (...replies: Parameters<typeof startReceiver>) => {
  const started = await startReceiver(...replies);
  receivers.push(started);
  return started;
};
const register = async (owner: string, url: string) => {
  const [row] = await db.sql<{ endpoint: { id: number; secret: string } }[]>`
    select app.create_webhook_endpoint(${owner}, ${url}, array['alarm.triggered'], 10) as endpoint`;
  return row!.endpoint;
};
const enqueue = async (owner: string, data: Record<string, unknown> = { alarm_id: 1 }) => {
  const [row] = await db.sql<{ queued: number }[]>`select app.enqueue_webhook_event(${owner}, 'alarm.triggered', ${db.sql.json(data as never)}) as queued`;
  return row!.queued;
};
const endpointRow = async (id: number) =>
  (await db.sql<{ status: string; consecutive_failures: number; disabled_at: Date | null }[]>`
    select status, consecutive_failures, disabled_at from app.webhook_endpoints where id = ${id}`)[0]!;
const deliveries = (endpointId: number) =>
  db.sql<{ id: string; status: string; attempts: number; response_status: number | null; error: string | null }[]>`
    select id, status, attempts, response_status, error from app.webhook_deliveries where endpoint_id = ${endpointId} order by id`;
const attempts = (endpointId: number) =>
  db.sql<{ outcome: string; response_status: number | null; duration_ms: number | null; error: string | null }[]>`
    select a.outcome, a.response_status, a.duration_ms, a.error from app.webhook_attempts a
    join app.webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = ${endpointId} order by a.id`;
const settled = async (endpointId: number, count: number) =>
  until(`${count} settled deliveries`, async () => (await deliveries(endpointId)).filter((d) => d.status !== 'pending').length >= count);

test.serial('a delivery is signed with the endpoint secret: it verifies with it, fails with another, and an old timestamp is rejected', async (t) => {
  const hook = await receiver(204);
  const endpoint = await register('signed', hook.url);
  t.is(await enqueue('signed', { alarm_id: 7, price: '101.50' }), 1);
  await hook.waitFor(1);
  const [{ headers, rawBody, body }] = hook.received as [(typeof hook.received)[0]];
  t.is(headers['content-type'], 'application/json');
  t.is(headers['x-service-event'], 'alarm.triggered');
  t.regex(body.id, /^[0-9a-f-]{36}$/);
  t.is(headers['x-service-event-id'], body.id, 'the idempotency id is in the header and the body');
  t.like(body, { type: 'alarm.triggered', test: false, data: { alarm_id: 7, price: '101.50' } });
  t.regex(body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);

  const signature = headers['x-service-signature'] as string;
  const [, t0] = /^t=(\d+),v1=[0-9a-f]{64}$/.exec(signature) ?? [];
  t.truthy(t0, signature);
  t.true(Math.abs(Number(t0) - Date.now() / 1000) < 10);
  t.is(signature, signatureHeader(endpoint.secret, rawBody, Number(t0)), 'lowercase hex HMAC-SHA256 of "<t>.<raw body>"');
  t.deepEqual(verifyWebhook(rawBody, signature, endpoint.secret), { ok: true });
  t.deepEqual(verifyWebhook(rawBody, signature, 'whsec_someone_else'), { ok: false, reason: 'signature mismatch' });
  t.deepEqual(verifyWebhook(rawBody.replace('101.50', '1.50'), signature, endpoint.secret), { ok: false, reason: 'signature mismatch' });
  t.deepEqual(verifyWebhook(rawBody, signature, endpoint.secret, { nowSeconds: Number(t0) + 299 }), { ok: true });
  t.deepEqual(verifyWebhook(rawBody, signature, endpoint.secret, { nowSeconds: Number(t0) + 301 }), { ok: false, reason: 'timestamp outside the tolerance window' });
  const old = signatureHeader(endpoint.secret, rawBody, Math.floor(Date.now() / 1000) - 3600);
  t.false(verifyWebhook(rawBody, old, endpoint.secret).ok, 'a correctly signed but hour-old request is a replay');

  await settled(endpoint.id, 1);
  t.like((await deliveries(endpoint.id))[0], { status: 'succeeded', attempts: 1, response_status: 204, error: null });
  const [attempt] = await attempts(endpoint.id);
  t.like(attempt, { outcome: 'succeeded', response_status: 204, error: null });
  t.true(attempt!.duration_ms! >= 0);
});

test.serial('a test event is a signed alarm.triggered marked "test": true, with the data shape of a real one', async (t) => {
  const hook = await receiver(204);
  const endpoint = await register('tester', hook.url);
  // the sample names bitcoin, as a service with a market has it
  await db.sql`insert into market.coins (id, slug, symbol, name, type, source) values (1, 'bitcoin', 'BTC', 'Bitcoin', 'coin', 'catalogue') on conflict do nothing`;
  await db.sql`select app.send_webhook_test('tester', ${endpoint.id})`;
  await hook.waitFor(1);
  const [{ headers, rawBody, body }] = hook.received as [(typeof hook.received)[0]];
  t.is(headers['x-service-event'], 'alarm.triggered');
  t.true(body.test);
  t.deepEqual(Object.keys(body.data).sort(), ['alarm', 'coin', 'direction', 'message', 'metric', 'target', 'triggered_at', 'value']);
  // the delivered bytes are what the OpenAPI document's AlarmTriggeredEvent schema promises
  t.deepEqual(AlarmTriggeredEvent.parse(JSON.parse(rawBody)), body);
  t.true(verifyWebhook(rawBody, headers['x-service-signature'] as string, endpoint.secret).ok);
});

test.serial("enqueueing is part of the caller's transaction: a rollback queues nothing, a commit one delivery and job per subscribed endpoint", async (t) => {
  const hooks = [await receiver(204), await receiver(204)];
  const endpoints = [await register('outbox', hooks[0]!.url), await register('outbox', hooks[1]!.url)];
  const disabled = await register('outbox', hooks[0]!.url);
  await db.sql`update app.webhook_endpoints set status = 'disabled', disabled_at = now() where id = ${disabled.id}`;
  await register('someone-else', hooks[1]!.url);
  const events = async () => (await db.sql`select count(*)::int as n from app.webhook_events where owner = 'outbox'`)[0]!.n as number;

  await t.throwsAsync(
    db.sql.begin(async (tx) => {
      const [row] = await tx`select app.enqueue_webhook_event('outbox', 'alarm.triggered', '{"alarm_id": 9}') as queued`;
      t.is(row!.queued, 2, 'the two delivering endpoints, not the disabled one');
      throw new Error('the alarm evaluation failed');
    }),
    { message: 'the alarm evaluation failed' },
  );
  t.is(await events(), 0);
  await sleep(300);
  t.is(hooks[0]!.received.length + hooks[1]!.received.length, 0, 'nothing sent for a rolled-back event');

  t.is(await enqueue('outbox', { alarm_id: 10 }), 2);
  t.is(await events(), 1);
  await hooks[0]!.waitFor(1);
  await hooks[1]!.waitFor(1);
  await sleep(200);
  t.is(hooks[1]!.received.length, 1, "another owner's endpoint got nothing");
  t.is(hooks[0]!.received[0]!.body.id, hooks[1]!.received[0]!.body.id, 'one event, one id, on every endpoint');
  for (const endpoint of endpoints) await settled(endpoint.id, 1);
  t.deepEqual([...(await deliveries(disabled.id))], []);
  t.is(await enqueue('nobody'), 0);
});

test.serial('a receiver that fails twice then succeeds gets the event exactly 3 times, after the backoff; the success resets the count', async (t) => {
  const hook = await receiver(500, 503, 200);
  const endpoint = await register('flaky', hook.url);
  await db.sql`update app.webhook_endpoints set consecutive_failures = 5 where id = ${endpoint.id}`;
  await enqueue('flaky');
  await settled(endpoint.id, 1);
  await sleep(4 * RETRY_BASE_MS * 25);
  t.is(hook.received.length, 3);
  t.is(new Set(hook.received.map((r) => r.body.id)).size, 1, 'the same event id each time');
  t.deepEqual(hook.received.map((r) => r.headers['x-service-delivery-attempt']), ['1', '2', '3']);
  const [first, second, third] = hook.received.map((r) => r.at) as [number, number, number];
  t.true(second - first >= RETRY_BASE_MS, 'first retry after the base interval');
  t.true(third - second >= 5 * RETRY_BASE_MS, 'second retry after 5 x base');
  t.like((await deliveries(endpoint.id))[0], { status: 'succeeded', attempts: 3, response_status: 200, error: null });
  t.deepEqual(
    (await attempts(endpoint.id)).map((a) => [a.outcome, a.response_status, a.error]),
    [['failed', 500, 'HTTP 500'], ['failed', 503, 'HTTP 503'], ['succeeded', 200, null]],
  );
  t.is((await endpointRow(endpoint.id)).consecutive_failures, 0);
});

test.serial('time-outs and refused connections fail attempts; a failing delivery is tried 1 + 3 times, never more', async (t) => {
  const hanging = await receiver('hang');
  const endpoint = await register('timeouts', hanging.url);
  const closed = await receiver(204);
  const refusedUrl = closed.url;
  await closed.close();
  receivers.splice(receivers.indexOf(closed), 1);
  const refused = await register('timeouts', refusedUrl);
  t.is(await enqueue('timeouts'), 2);
  await settled(endpoint.id, 1);
  await settled(refused.id, 1);
  await sleep(700);
  t.is(hanging.received.length, 4);
  const timedOut = await attempts(endpoint.id);
  t.is(timedOut.length, 4);
  for (const attempt of timedOut) {
    t.like(attempt, { outcome: 'failed', response_status: null, error: 'timed out after 400 ms' });
    t.true(attempt.duration_ms! >= 390);
  }
  const connection = await attempts(refused.id);
  t.is(connection.length, 4);
  for (const attempt of connection) t.regex(attempt.error!, /^ECONNREFUSED/);
  t.like((await deliveries(endpoint.id))[0], { status: 'failed', attempts: 4 });
  t.like(await endpointRow(endpoint.id), { status: 'delivering', consecutive_failures: 1 });
});

test.serial('10 consecutive failed deliveries disable the endpoint; nothing further arrives until it is re-enabled', async (t) => {
  const hook = await receiver(500);
  const endpoint = await register('failing', hook.url);
  for (let event = 0; event < 10; event++) t.is(await enqueue('failing', { alarm_id: event }), 1);
  await until('the endpoint to be disabled', async () => (await endpointRow(endpoint.id)).status === 'disabled');
  await sleep(800);
  t.is(hook.received.length, 40, '10 deliveries x (1 attempt + 3 retries)');
  const perEvent = new Map<string, number>();
  for (const r of hook.received) perEvent.set(r.body.id, (perEvent.get(r.body.id) ?? 0) + 1);
  t.deepEqual([...perEvent.values()], Array(10).fill(4));
  const row = await endpointRow(endpoint.id);
  t.is(row.consecutive_failures, 10);
  t.truthy(row.disabled_at);
  t.deepEqual([...new Set((await deliveries(endpoint.id)).map((d) => d.status))], ['failed']);

  // disabled: no new deliveries, and a delivery still queued from before is skipped, not sent
  t.is(await enqueue('failing'), 0);
  await db.sql`
    with event as (insert into app.webhook_events (owner, event, data) values ('failing', 'alarm.triggered', '{}') returning id),
      delivery as (insert into app.webhook_deliveries (endpoint_id, event_id) select ${endpoint.id}, id from event returning id)
    select app.queue_webhook_job(id) from delivery`;
  await settled(endpoint.id, 11);
  await sleep(300);
  t.is(hook.received.length, 40, 'nothing more arrived');
  t.is((await deliveries(endpoint.id)).at(-1)!.status, 'skipped');

  hook.reply(204);
  const [enabled] = await db.sql<{ endpoint: { status: string; consecutive_failures: number } }[]>`
    select app.enable_webhook_endpoint('failing', ${endpoint.id}) as endpoint`;
  t.like(enabled!.endpoint, { status: 'delivering', consecutive_failures: 0 });
  t.is(await enqueue('failing', { alarm_id: 99 }), 1);
  await hook.waitFor(41);
  t.like(hook.received[40]!.body, { data: { alarm_id: 99 } });
  await settled(endpoint.id, 12);
  t.like(await endpointRow(endpoint.id), { status: 'delivering', consecutive_failures: 0, disabled_at: null });
});

test.serial('a worker killed mid-delivery: its stalled lock is released and the event is delivered again, never lost', async (t) => {
  const hook = await receiver('hang', 204);
  const endpoint = await register('crash', hook.url);
  // The shared runner must not take this job: stop it until the crash is staged.
  await runner.stop();
  t.is(await enqueue('crash', { alarm_id: 42 }), 1);
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', new URL('../webhooks/worker_process.ts', import.meta.url).pathname, db.url], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await hook.waitFor(1);
  } finally {
    child.kill('SIGKILL');
  }
  await new Promise((resolve) => child.once('exit', resolve));
  const locked = async () =>
    (await db.sql`
      select j.locked_at is not null as locked from graphile_worker._private_jobs j
      join graphile_worker._private_tasks k on k.id = j.task_id where k.identifier = 'deliver_webhook'`).map((row) => row.locked as boolean);
  t.deepEqual(await locked(), [true], "the dead worker's job is still locked");
  t.deepEqual((await attempts(endpoint.id)).map((a) => a.outcome), [null], 'its attempt is on record, without an outcome');
  t.is((await deliveries(endpoint.id))[0]!.status, 'pending');

  // the child runs no heartbeat: its lock counts as a dead worker's once older than the bound
  const release = async () => (await db.sql`select app.release_dead_workers(interval '30 seconds') as n`)[0]!.n as number;
  t.is(await release(), 0);
  t.deepEqual(await locked(), [true]);
  // past the bound (aged here instead of waited for) the dead worker's lock goes, long before graphile-worker's 4 hours
  await db.sql`update graphile_worker._private_jobs set locked_at = locked_at - interval '3 minutes' where locked_at is not null`;
  t.is(await release(), 1);
  t.deepEqual(await locked(), [false]);
  runner = await run({
    connectionString: db.url, noPreparedStatements: true, pollInterval: 50, logger: silent, minResetLockedInterval: 50, maxResetLockedInterval: 100,
    taskList: { deliver_webhook: deliverWebhook({ WEBHOOK_TIMEOUT_MS: 400, WEBHOOK_ALLOW_PRIVATE_TARGETS: true, WEBHOOK_RETRY_BASE_MS: RETRY_BASE_MS }) },
  });
  await hook.waitFor(2);
  await settled(endpoint.id, 1);
  t.is(hook.received[1]!.body.id, hook.received[0]!.body.id, 'the same event id, so the receiver can de-duplicate');
  t.like((await deliveries(endpoint.id))[0], { status: 'succeeded', attempts: 2, response_status: 204 });
  t.deepEqual((await attempts(endpoint.id)).map((a) => a.outcome), ['interrupted', 'succeeded']);
  // graphile-worker removes a job after its task has returned, in a query of its own: the delivery's
  // row says succeeded a moment before the job is gone (seen on a loaded server)
  await until('the job removed', async () => (await locked()).length === 0).catch(() => {});
  t.deepEqual(await locked(), [], 'the job is done');
});
