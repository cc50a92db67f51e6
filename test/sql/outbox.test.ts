// The one outbox cycle (sql/functions/595_outbox.sql), run by hand for each channel with no worker:
// app.begin_outbox_attempt claims, app.finish_outbox_attempt records. Every channel is retried after
// 1, 5 and 25 bases and fails after its 4th attempt, an attempt a dead worker left open is closed as
// interrupted without using up a retry, a late record is stale, and settled messages older than the
// retention are dropped.
import test from 'ava';
import postgres from 'postgres';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

const BASE_MS = 60_000;
let db: TestDatabase;

test.before(async () => {
  db = await testDatabase();
});
test.after.always(() => db?.close());

interface Channel {
  name: 'webhook' | 'email' | 'push';
  task: string;
  key: string;
  delivered: string;
  retried: string;
  /** a new pending message of `owner` (its endpoint or browser made on first use); its id */
  queue(owner: string): Promise<string>;
  /** a message of `owner` settled `ago`, as the retention sees it */
  settled(owner: string, ago: string): Promise<void>;
  /** how many messages `owner` has */
  count(owner: string): Promise<number>;
}

const one = async <Row>(query: Promise<Row[]>) => (await query)[0]!;
const endpointOf = async (owner: string) => {
  const found = await db.sql<{ id: string }[]>`select id from app.webhook_endpoints where owner = ${owner}`;
  if (found[0]) return found[0].id;
  return (await one(db.sql<{ id: string }[]>`
    select app.create_webhook_endpoint(${owner}, ${`https://${owner}.example/hook`}, array['alarm.triggered'], 10) ->> 'id' as id`)).id;
};
const browserOf = async (owner: string) => {
  await db.sql`insert into app.owners (owner, email) values (${owner}, ${`${owner}@example.com`}) on conflict do nothing`;
  return (await one(db.sql<{ id: string }[]>`
    select app.push_subscribe(${owner}, ${`https://push.example/${owner}`}, ${'B'.repeat(87)}, ${'a'.repeat(22)}, 'test browser')::text as id`)).id;
};

const CHANNELS: Channel[] = [
  {
    name: 'webhook', task: 'deliver_webhook', key: 'delivery_id', delivered: 'succeeded', retried: 'failed',
    async queue(owner) {
      const endpoint = await endpointOf(owner);
      await db.sql`select app.enqueue_webhook_event(${owner}, 'alarm.triggered', '{}')`;
      return (await one(db.sql<{ id: string }[]>`select max(id)::text as id from app.webhook_deliveries where endpoint_id = ${endpoint}`)).id;
    },
    async settled(owner, ago) {
      const endpoint = await endpointOf(owner);
      await db.sql`
        with event as (
          insert into app.webhook_events (owner, event, data, created_at) values (${owner}, 'alarm.triggered', '{}', now() - ${ago}::interval) returning id)
        insert into app.webhook_deliveries (endpoint_id, event_id, status, created_at)
        select ${endpoint}, id, 'succeeded', now() - ${ago}::interval from event`;
    },
    count: async (owner) =>
      (await one(db.sql<{ n: number }[]>`
        select count(*)::int as n from app.webhook_deliveries d join app.webhook_endpoints e on e.id = d.endpoint_id where e.owner = ${owner}`)).n,
  },
  {
    name: 'email', task: 'send_email', key: 'message_id', delivered: 'delivered', retried: 'deferred',
    async queue(owner) {
      await db.sql`insert into app.owners (owner, email) values (${owner}, ${`${owner}@example.com`}) on conflict do nothing`;
      return (await one(db.sql<{ id: string }[]>`select app.queue_email(${owner}, 'alarm.triggered', '{}')::text as id`)).id;
    },
    async settled(owner, ago) {
      await db.sql`
        insert into app.email_messages (owner, kind, recipient, data, status, created_at, settled_at)
        values (${owner}, 'alarm.triggered', ${`${owner}@example.com`}, '{}', 'delivered', now() - ${ago}::interval, now() - ${ago}::interval)`;
    },
    count: async (owner) => (await one(db.sql<{ n: number }[]>`select count(*)::int as n from app.email_messages where owner = ${owner}`)).n,
  },
  {
    name: 'push', task: 'deliver_push', key: 'message_id', delivered: 'delivered', retried: 'failed',
    async queue(owner) {
      return (await one(db.sql<{ id: string }[]>`select app.queue_push(${await browserOf(owner)}, 'push.test', '{}')::text as id`)).id;
    },
    async settled(owner, ago) {
      await db.sql`
        insert into app.push_messages (subscription_id, owner, kind, data, status, created_at, settled_at)
        values (${await browserOf(owner)}, ${owner}, 'push.test', '{}', 'delivered', now() - ${ago}::interval, now() - ${ago}::interval)`;
    },
    count: async (owner) => (await one(db.sql<{ n: number }[]>`select count(*)::int as n from app.push_messages where owner = ${owner}`)).n,
  },
];

const begin = (channel: Channel, id: string) =>
  db.sql<{ attempt_id: string; attempt: number; message: Record<string, unknown> }[]>`select * from app.begin_outbox_attempt(${channel.name}, ${id})`;
const finish = async (channel: Channel, attemptId: string, outcome: string, code: number | null = null) =>
  (await one(db.sql<{ result: string }[]>`
    select app.finish_outbox_attempt(${channel.name}, ${attemptId}, ${outcome}, ${code}, ${`outcome ${outcome}`}, 12, ${BASE_MS}) as result`)).result;
/** Seconds from now until the newest job of the message runs. */
const nextRunIn = async (channel: Channel, id: string) =>
  (await one(db.sql<{ wait: number }[]>`
    select extract(epoch from j.run_at - now())::float8 as wait from graphile_worker._private_jobs j
    join graphile_worker._private_tasks k on k.id = j.task_id
    where k.identifier = ${channel.task} and j.payload ->> ${channel.key} = ${id} order by j.id desc limit 1`)).wait;
const status = async (channel: Channel, id: string) =>
  (await one(db.sql.unsafe<{ status: string; attempts: number; error: string | null }[]>(
    `select status, attempts, error from ${channel.name === 'webhook' ? 'app.webhook_deliveries' : `app.${channel.name}_messages`} where id::text = $1`, [id])));

for (const channel of CHANNELS) {
  test.serial(`${channel.name}: a send that keeps failing is retried after 1, 5 and 25 bases, then fails after its 4th attempt`, async (t) => {
    const id = await channel.queue(`${channel.name}-down`);
    for (const [n, wait] of [[1, 60], [2, 300], [3, 1500]] as const) {
      const [claimed] = await begin(channel, id);
      t.is(claimed?.attempt, n);
      t.is(await finish(channel, claimed!.attempt_id, channel.retried, 503), 'retry');
      const runIn = await nextRunIn(channel, id);
      t.true(Math.abs(runIn - wait) < 5, `retry ${n} in ${runIn} s, not ${wait} s`);
      t.like(await status(channel, id), { status: 'pending', error: `outcome ${channel.retried}` });
    }
    const [last] = await begin(channel, id);
    t.is(last?.attempt, 4);
    t.is(await finish(channel, last!.attempt_id, channel.retried, 503), 'failed');
    t.like(await status(channel, id), { status: 'failed', attempts: 4 });
    t.deepEqual([...await begin(channel, id)], [], 'settled: nothing more to send');
  });

  test.serial(`${channel.name}: an attempt a dead worker left open is closed as interrupted, uses up no retry, and its late record is stale`, async (t) => {
    const id = await channel.queue(`${channel.name}-crash`);
    const [dead] = await begin(channel, id);
    const [again] = await begin(channel, id);
    t.is(again?.attempt, 2);
    t.is(await finish(channel, dead!.attempt_id, channel.delivered, 200), 'stale');
    t.is(await finish(channel, again!.attempt_id, channel.retried, 500), 'retry');
    t.true(Math.abs(await nextRunIn(channel, id) - 60) < 5, 'the first retry: the interrupted attempt did not count');
    const [third] = await begin(channel, id);
    t.is(await finish(channel, third!.attempt_id, channel.delivered, 200), channel.delivered);
    t.like(await status(channel, id), { status: channel.delivered, attempts: 3, error: null });
  });

  test.serial(`${channel.name}: recording a send drops its endpoint's or owner's messages older than the retention, and no others`, async (t) => {
    const owner = `${channel.name}-kept`;
    await channel.settled(owner, '31 days');
    await channel.settled(owner, '2 days');
    await channel.settled(`${channel.name}-other`, '31 days');
    const id = await channel.queue(owner);
    t.is(await channel.count(owner), 3);
    const [claimed] = await begin(channel, id);
    t.is(await finish(channel, claimed!.attempt_id, channel.delivered, 200), channel.delivered);
    t.is(await channel.count(owner), 2, 'the old one went, the recent and the new stay');
    t.is(await channel.count(`${channel.name}-other`), 1, "another owner's is left for its own next send");
  });
}

test.serial('an unknown channel or outcome is refused, and the analyst cannot run the cycle', async (t) => {
  await t.throwsAsync(db.sql`select * from app.begin_outbox_attempt('pigeon', '1')`, { message: /Unknown outbox channel pigeon/ });
  const id = await CHANNELS[1]!.queue('outcomes');
  const [claimed] = await begin(CHANNELS[1]!, id);
  await t.throwsAsync(finish(CHANNELS[1]!, claimed!.attempt_id, 'interrupted'), { message: /Unknown email outcome interrupted/ });
  await t.throwsAsync(finish(CHANNELS[1]!, claimed!.attempt_id, 'gone'), { message: /Unknown email outcome gone/ });
  const analyst = postgres(db.urlAs('analyst'), { prepare: false, max: 1, onnotice: () => {} });
  try {
    for (const query of [analyst`select * from app.begin_outbox_attempt('webhook', '1')`, analyst`select app.finish_outbox_attempt('webhook', 1, 'failed', null, null, 0)`]) {
      t.is(((await t.throwsAsync(query)) as { code?: string }).code, '42501');
    }
  } finally {
    await analyst.end();
  }
});
