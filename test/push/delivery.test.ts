// Browser push end to end: browsers (a P-256 key pair and auth secret each, as a browser makes them)
// subscribed through the console, a push alarm triggered by a price refresh, the deliver_push task
// of a real graphile-worker, and a loopback HTTP server as the push service. The test decrypts
// what arrives (RFC 8291 aes128gcm) and checks the VAPID header (RFC 8292); 410 removes the
// subscription, 5xx and time-outs are retried, and every trigger pushes once per browser.
import test from 'ava';
import { Logger, run, type Runner } from 'graphile-worker';
import { deliverPush } from '../../jobs/deliver_push.ts';
import { until } from '../../dev/wait.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import { signedInAccount, type ConsoleClient } from '../helpers/console.ts';
import { decrypt, startPushService, subscriber, verifyVapid, type PushService, type Subscriber } from '../helpers/push.ts';

// Retries wait 50, 250 and 1250 ms here (1, 5 and 25 minutes in production); a push service that
// does not answer in 400 ms has timed out.
const ENV = { PUSH_ALLOW_LOOPBACK: 'true', PUSH_RETRY_BASE_MS: '50', PUSH_TIMEOUT_MS: '400' };
let db: TestDatabase;
let api: TestApi;
let runner: Runner;
let pushService: PushService;

test.before(async () => {
  db = await testDatabase();
  api = await testApi(db, { env: ENV });
  pushService = await startPushService();
  runner = await run({
    connectionString: db.url, noPreparedStatements: true, concurrency: 2, pollInterval: 50, logger: new Logger(() => () => {}),
    taskList: { deliver_push: deliverPush(db.config(ENV)) },
  });
  await db.sql`insert into market.data_sources (name, kind, description) values ('push-test', 'import', 'Push test fixture')`;
  await db.sql`insert into market.coins (id, slug, symbol, name, type, circulating_supply, source) values (601, 'alpha', 'ALP', 'Alpha <&> Coin', 'coin', 1000, 'push-test')`;
  await db.sql`insert into market.coin_state (coin_id, price, volume_24h, marketcap) values (601, 100, 5000, 100000)`;
});
test.after.always(async () => {
  await runner?.stop();
  await pushService?.stop();
  await api?.close();
  await db?.close();
});

/** A browser of `client`'s account, subscribed through the console with its push endpoint at `path`. */
async function subscribe(client: ConsoleClient, path: string): Promise<Subscriber> {
  const browser = subscriber();
  await client.get('/console/account');
  const page = await client.post('/console/push/subscribe', { endpoint: `${pushService.base}${path}`, ...browser.keys });
  if (page.status !== 200) throw new Error(`subscribing answered ${page.status}: ${page.text.slice(0, 300)}`);
  return browser;
}

/** An account signed in to the console. */
const account = (name: string) => signedInAccount(db.sql, api.base, `${name}@example.com`, `${name}-browser`);

/** A push alarm of `owner` on alpha, above `target`, made through the API with a key of the owner; returns its id. */
async function pushAlarm(owner: string, target: string, name = 'Alpha up') {
  const key = await api.key({ owner });
  const response = await api.request('POST', '/api/v1/alarms', {
    key, headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, coin: 'alpha', metric: 'rate', direction: 'above', target, notification: 'push' }),
  });
  if (response.status !== 201) throw new Error(`creating the alarm answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.data.id as number;
}

/** Moves alpha's price and evaluates alarms, as a price refresh does, in one transaction; the pushes queued. */
const trigger = (price: string) =>
  db.sql.begin(async (tx) => {
    await tx`update market.coin_state set price = ${price}::numeric where coin_id = 601`;
    return (await tx<{ pushes: number }[]>`select * from app.evaluate_alarms()`)[0]!.pushes;
  });

const messagesOf = (owner: string) =>
  db.sql<{ status: string; attempts: number; response_status: number | null; error: string | null; subscription_id: string | null }[]>`
    select status, attempts, response_status, error, subscription_id from app.push_messages where owner = ${owner} order by created_at, id`;
const attemptsOf = (owner: string) =>
  db.sql<{ outcome: string | null; response_status: number | null; error: string | null }[]>`
    select a.outcome, a.response_status, a.error from app.push_attempts a join app.push_messages m on m.id = a.message_id
    where m.owner = ${owner} order by a.id`;
const settled = (owner: string, count = 1) =>
  until(`${count} settled pushes of ${owner}`, async () => (await messagesOf(owner)).filter((m) => m.status !== 'pending').length >= count, { timeoutMs: 10_000 });
const pushJobs = async () =>
  (await db.sql<{ n: number }[]>`
    select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id
    where k.identifier = 'deliver_push'`)[0]!.n;
const subscriptionsOf = async (owner: string) => (await db.sql`select id from app.push_subscriptions where owner = ${owner}`).length;

test.serial('a push alarm pushes once to each subscribed browser: encrypted for it, VAPID-signed, carrying the triggered alarm', async (t) => {
  const { owner, client } = await account('ann');
  const laptop = await subscribe(client, '/push/ann-laptop');
  const phone = await subscribe(client, '/push/ann-phone');
  const alarmId = await pushAlarm(owner, '150.10', 'Ann <b>"moon"</b>');
  t.is(await trigger('120'), 0, 'not crossed: nothing queued');
  t.is(await trigger('150.5000'), 2, 'one push per browser');
  t.is(await trigger('151'), 0, 'a triggered alarm does not push again');
  await settled(owner, 2);
  await until('no deliver_push job left', async () => (await pushJobs()) === 0);

  const [event] = await db.sql<{ event: unknown }[]>`select app.alarm_triggered_event(a) as event from app.alarms a where a.id = ${alarmId}`;
  const [stored] = await db.sql<{ public_key: string }[]>`select public_key from app.vapid_keys`;
  for (const [path, browser] of [['/push/ann-laptop', laptop], ['/push/ann-phone', phone]] as const) {
    const requests = pushService.on(path);
    t.is(requests.length, 1, `${path}: exactly one push`);
    const request = requests[0]!;
    t.is(request.headers['content-encoding'], 'aes128gcm');
    t.is(request.headers['content-type'], 'application/octet-stream');
    t.is(request.headers.urgency, 'high');
    t.truthy(Number(request.headers.ttl) > 0);
    t.true(request.body.length <= 4096, 'within the push services\' limit');
    const vapid = verifyVapid(request.headers.authorization);
    t.is(vapid.k, stored!.public_key, 'signed with the service\'s stored key');
    t.is(vapid.claims.aud, pushService.base, 'aud: the push service\'s origin');
    t.true(vapid.claims.exp > Date.now() / 1000 && vapid.claims.exp <= Date.now() / 1000 + 24 * 3600);
    t.regex(vapid.claims.sub, /^(mailto:|https:)/);
    t.throws(() => decrypt(request.body, subscriber()), undefined, 'another browser\'s keys cannot read it');
    const message = JSON.parse(decrypt(request.body, browser));
    t.like(message, { type: 'alarm.triggered', title: 'Ann <b>"moon"</b> triggered', url: `/console/alarms#alarm-${alarmId}`, tag: `alarm-${alarmId}` });
    t.is(message.body, 'Alpha <&> Coin (ALP) price (USD) at or above 150.10: now 150.5000');
    t.deepEqual(message.data, event!.event, 'the alarm.triggered event as the API shows it');
    t.like(message.data.alarm, { id: alarmId, status: 'triggered', triggered_value: '150.5000' });
  }
  t.deepEqual((await messagesOf(owner)).map((m) => [m.status, m.attempts, m.response_status]), [['delivered', 1, 201], ['delivered', 1, 201]]);
  const browsers = await db.sql<{ last_success_at: Date | null }[]>`select last_success_at from app.push_subscriptions where owner = ${owner}`;
  t.true(browsers.every((b) => b.last_success_at !== null), 'last success recorded');
  t.is(pushService.on('/push/ann-laptop').length, 1, 'still exactly one');
});

test.serial('410 from the push service removes the subscription; the alarm stays triggered', async (t) => {
  const { owner, client } = await account('gina');
  await subscribe(client, '/push/gina-gone');
  pushService.script('/push/gina-gone', [410]);
  const alarmId = await pushAlarm(owner, '200');
  t.is(await trigger('200'), 1);
  await settled(owner);
  t.like((await messagesOf(owner))[0], { status: 'gone', attempts: 1, response_status: 410, subscription_id: null });
  t.deepEqual((await attemptsOf(owner)).map((a) => [a.outcome, a.response_status]), [['gone', 410]]);
  t.is(await subscriptionsOf(owner), 0, 'removed');
  t.is(pushService.on('/push/gina-gone').length, 1, 'not retried');
  const [alarm] = await db.sql`select status from app.alarms where id = ${alarmId}`;
  t.is(alarm!.status, 'triggered');
  await db.sql`update market.coin_state set price = 100 where coin_id = 601`;
});

test.serial('a 500 and then a time-out are retried with back-off, and the push is delivered once', async (t) => {
  const { owner, client } = await account('rita');
  const browser = await subscribe(client, '/push/rita');
  pushService.script('/push/rita', [500, 'hang', 201]);
  const alarmId = await pushAlarm(owner, '300');
  t.is(await trigger('300'), 1);
  await settled(owner);
  t.like((await messagesOf(owner))[0], { status: 'delivered', attempts: 3, response_status: 201, error: null });
  const attempts = await attemptsOf(owner);
  t.deepEqual(attempts.map((a) => [a.outcome, a.response_status]), [['failed', 500], ['failed', null], ['delivered', 201]]);
  t.is(attempts[0]!.error, 'HTTP 500');
  t.regex(attempts[1]!.error!, /timed out after 400 ms/);
  const requests = pushService.on('/push/rita');
  t.deepEqual(requests.map((r) => r.status), [500, null, 201]);
  t.is(JSON.parse(decrypt(requests[2]!.body, browser)).data.alarm.id, alarmId);
  await until('no deliver_push job left', async () => (await pushJobs()) === 0);
  t.is(pushService.on('/push/rita').length, 3, 'nothing more after the delivery');
  t.is(await subscriptionsOf(owner), 1, 'a failure does not remove the subscription');
  await db.sql`update market.coin_state set price = 100 where coin_id = 601`;
});

test.serial('a push service that keeps failing: four attempts, then recorded as failed; another 4xx fails at once', async (t) => {
  const { owner, client } = await account('fred');
  await subscribe(client, '/push/fred-down');
  await subscribe(client, '/push/fred-refusing');
  pushService.script('/push/fred-down', [503]);
  pushService.script('/push/fred-refusing', [403]);
  await pushAlarm(owner, '400');
  t.is(await trigger('400'), 2);
  await settled(owner, 2);
  const messages = await messagesOf(owner);
  t.deepEqual(messages.map((m) => [m.status, m.response_status]).sort(), [['failed', 403], ['failed', 503]]);
  t.is(pushService.on('/push/fred-down').length, 4, 'the first attempt and three retries');
  t.is(pushService.on('/push/fred-refusing').length, 1, 'a refusal is not retried');
  t.deepEqual((await attemptsOf(owner)).map((a) => a.outcome).sort(), ['failed', 'failed', 'failed', 'failed', 'refused']);
  t.is(await subscriptionsOf(owner), 2, 'kept: only 404/410 remove a subscription');
  await db.sql`update market.coin_state set price = 100 where coin_id = 601`;
});

test.serial('the console\'s test notification reaches the browser; a removed browser is not pushed to', async (t) => {
  const { owner, client } = await account('tess');
  const browser = await subscribe(client, '/push/tess');
  const [row] = await db.sql<{ id: string }[]>`select id from app.push_subscriptions where owner = ${owner}`;
  const sent = await client.post('/console/push/test', { subscription: row!.id });
  t.is(sent.status, 200);
  t.regex(sent.text, /Test notification sent/);
  await settled(owner);
  const message = JSON.parse(decrypt(pushService.on('/push/tess')[0]!.body, browser));
  t.like(message, { type: 'push.test', title: 'Test notification', url: '/console/account' });

  await pushAlarm(owner, '500');
  const removed = await client.post('/console/push/remove', { subscription: row!.id });
  t.is(removed.status, 200);
  t.regex(removed.text, /Browser removed/);
  t.is(await subscriptionsOf(owner), 0);
  t.is(await trigger('500'), 0, 'no browser left: the alarm triggers without a push');
  t.is(pushService.on('/push/tess').length, 1);
  t.is((await client.post('/console/push/test', { subscription: row!.id })).status, 404, 'gone: a clear message, not a 500');
  await db.sql`update market.coin_state set price = 100 where coin_id = 601`;
});
