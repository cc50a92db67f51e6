// Read replicas on a real primary and streaming replica (TEST_DATABASE_URL, TEST_DATABASE_READ_URL):
// the whole service with DATABASE_READ_URL. The replica is told apart from the primary by pausing its
// WAL replay: a price written on the primary then is not on the replica, so the answer says who served it.
import test from 'ava';
import { createSql, type Sql } from '../../src/db/client.ts';
import { createKey } from '../../src/keys.ts';
import { silentLogger } from '../../src/log.ts';
import { startService, type RunningService } from '../../src/service.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { onServer, replicaOnly, replicaUrl } from '../helpers/targets.ts';
import { until } from '../../dev/wait.ts';

const run = replicaOnly(test, 'needs a streaming replica of the server');

const MAX_LAG_MS = 3000;
let db: TestDatabase;
let replica: Sql;
let key: string;
const services: RunningService[] = [];

/** The replica's URL for this file's database (streaming replication copies every database of the server). */
const onReplica = (databaseUrl: string) => {
  const url = new URL(replicaUrl!);
  url.pathname = new URL(databaseUrl).pathname;
  return url.toString();
};


// a replica refuses connections while it starts: an error is "not yet"
const untilReplica = <T>(what: string, probe: () => Promise<T>) => until(what, () => probe().catch(() => undefined), { timeoutMs: 20_000, everyMs: 100 });

test.before(async () => {
  if (!onServer || !replicaUrl) return;
  db = await testDatabase();
  await db.sql`insert into market.data_sources (name, kind, description) values ('replica-test', 'import', 'Read replica test fixture')`;
  await db.sql`insert into market.coins (id, slug, symbol, name, type, circulating_supply, source) values (401, 'alpha', 'ALP', 'Alpha', 'coin', 1000, 'replica-test')`;
  await db.sql`insert into market.coin_state (coin_id, price, volume_24h, marketcap) values (401, 100, 5000, 100000)`;
  ({ key } = await createKey(db.sql, { plan: 'pro', owner: 'replica-test', scope: 'data-api' }));
  replica = createSql({ url: onReplica(db.url), pooled: false, embedded: false }, { max: 1 });
  await untilReplica('the test database on the replica', async () => (await replica`select 1 from app.api_keys`).length === 1);
});

test.after.always(async () => {
  // Whatever failed, the replica replays again for whoever uses it next.
  if (replica) await replica`select pg_wal_replay_resume()`.catch(() => {});
  for (const service of services) await service.close();
  await replica?.end({ timeout: 5 });
  await db?.close();
});

async function start(readUrls: string[]) {
  const service = await startService(
    db.config({ PORT: '0', DATABASE_READ_URL: readUrls.join(','), DATABASE_READ_MAX_LAG_MS: String(MAX_LAG_MS), DATABASE_READ_CHECK_MS: '200' }),
    silentLogger,
  );
  services.push(service);
  return service;
}

const get = async (service: RunningService, path: string, headers: Record<string, string> = { authorization: `Bearer ${key}` }) => {
  const response = await fetch(`${service.url}${path}`, { headers });
  return { status: response.status, headers: response.headers, body: await response.json().catch(() => null) };
};

const price = async (service: RunningService) => {
  const response = await get(service, '/api/v1/prices/alpha');
  if (response.status !== 200) throw new Error(`GET /prices/alpha answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.data.price as string;
};

/** The replica statuses /readyz shows (it is informational: ready either way). */
const statuses = async (service: RunningService) => {
  const response = await get(service, '/readyz', {});
  const checks = response.status === 200 ? response.body.checks : response.body.error.details.checks;
  return (checks.replicas.replicas as { status: string }[]).map((replicaState) => replicaState.status);
};

const waitForStatuses = (service: RunningService, expected: string[]) =>
  untilReplica(`replica statuses ${expected.join(', ')}`, async () => JSON.stringify(await statuses(service)) === JSON.stringify(expected));

async function pauseReplay() {
  await replica`select pg_wal_replay_pause()`;
  await untilReplica('replay paused', async () => (await replica`select pg_get_wal_replay_pause_state() as state`)[0]!.state === 'paused');
}

async function setPrice(value: number) {
  await db.sql`update market.coin_state set price = ${value} where coin_id = 401`;
}

let service: RunningService;

run.serial('a market-data GET is served by the replica; admission, usage and alarms stay on the primary', async (t) => {
  service = await start([onReplica(db.url)]);
  await waitForStatuses(service, ['healthy']);
  t.is(await price(service), '100');
  await pauseReplay();
  await setPrice(200);
  t.is(await price(service), '100', 'the paused replica answered, within the lag bound');

  // Admission wrote its counters (a replica refuses writes), and /usage reads them where they were written.
  const usage = await get(service, '/api/v1/usage');
  t.is(usage.status, 200);
  t.is(String(usage.body.data.used), String(usage.headers.get('x-quota-used')));
  const [onReplicaUsed] = await replica<{ used: number }[]>`select coalesce(sum(used), 0)::int as used from app.usage_monthly`;
  t.true(onReplicaUsed!.used < Number(usage.body.data.used), 'the paused replica has not seen the latest counts');

  const created = await fetch(`${service.url}/api/v1/alarms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Alpha to 500', coin: 'alpha', metric: 'rate', direction: 'above', target: 500, notification: 'webhook' }),
  });
  t.is(created.status, 201);
  const { id } = (await created.json()).data;
  const alarm = await get(service, `/api/v1/alarms/${id}`);
  t.is(alarm.status, 200, 'read from the primary: the paused replica does not have the alarm');
  t.is((await replica`select 1 from app.alarms where id = ${id}`).length, 0);
});

run.serial('a replica further behind than DATABASE_READ_MAX_LAG_MS is skipped and the primary answers', async (t) => {
  // replay is still paused since the previous test
  await waitForStatuses(service, ['lagging']);
  t.is(await price(service), '200');
  const metrics = await fetch(`${service.url}/metrics`).then((response) => response.text());
  t.regex(metrics, /mdapi_read_replica_healthy\{replica="[^"]+",status="lagging"\} 0/);
  t.regex(metrics, /mdapi_read_replica_lag_seconds\{replica="[^"]+"\} [3-9]/);
});

run.serial('once replay resumes and catches up, the replica serves reads again', async (t) => {
  await replica`select pg_wal_replay_resume()`;
  await waitForStatuses(service, ['healthy']);
  t.is(await price(service), '200');
  await pauseReplay();
  await setPrice(300);
  t.is(await price(service), '200', 'the replica answered again');
  await replica`select pg_wal_replay_resume()`;
  await untilReplica('price 300 on the replica', async () => (await replica`select price::text from market.coin_state where coin_id = 401`)[0]!.price === '300');
});

run.serial('a replica that is down, or a server not in recovery, is skipped; round robin serves from the healthy one', async (t) => {
  const down = onReplica(db.url).replace(/:\d+\//, ':1/');
  const mixed = await start([down, db.url, onReplica(db.url)]);
  const none = await start([down, db.url]);
  await waitForStatuses(mixed, ['down', 'not_a_replica', 'healthy']);
  await waitForStatuses(none, ['down', 'not_a_replica']);
  await pauseReplay();
  await setPrice(400);
  const answers = [];
  for (let i = 0; i < 4; i++) answers.push(await price(mixed));
  t.deepEqual(answers, ['300', '300', '300', '300'], 'only the healthy replica served');
  t.is(await price(none), '400', 'no healthy replica: the primary');
  await replica`select pg_wal_replay_resume()`;
});
