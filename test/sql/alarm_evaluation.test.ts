// app.evaluate_alarms(): a crossing triggers an alarm once, with one alarm.triggered delivery
// (and its graphile-worker job) per delivering endpoint of the owner, or one e-mail, in the same transaction;
// the price refresh runs it; concurrent evaluations and rollbacks never duplicate or orphan an event.
import test from 'ava';
import type postgres from 'postgres';
import { AlarmTriggeredEvent } from '../../src/alarms.ts';
import { createSql } from '../../src/db/client.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { sleep } from '../../dev/wait.ts';

let db: TestDatabase;
/** a connection or a transaction on one */
type Sql = postgres.Sql | postgres.TransactionSql;
const COINS = { alpha: 401, beta: 402, gamma: 403, delta: 404, hooked: 405 } as const;

test.before(async () => {
  db = await testDatabase();
  const { sql } = db;
  await sql`insert into market.data_sources (name, kind, description) values ('alarm-eval', 'import', 'Alarm evaluation fixture')`;
  for (const [slug, id] of Object.entries(COINS)) {
    await sql`insert into market.coins (id, slug, symbol, name, type, circulating_supply, source)
      values (${id}, ${slug}, ${slug.slice(0, 3).toUpperCase()}, ${slug}, 'coin', 1000, 'alarm-eval')`;
    // one bar ten minutes ago at 100: every coin has a price after a refresh
    await sql`insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
      values (date_trunc('minute', now()) - interval '10 minutes', ${id}, 100, 100, 100, 100, 10)`;
  }
  await sql`select market.refresh_coin_state()`;
  // owner "ann": two delivering endpoints and a disabled one; "bob" one delivering endpoint
  for (const [owner, url] of [['ann', 'https://a.example/1'], ['ann', 'https://a.example/2'], ['ann', 'https://a.example/off'], ['bob', 'https://b.example/']] as const) {
    await sql`select app.create_webhook_endpoint(${owner}, ${url}, array['alarm.triggered'], 10)`;
  }
  await sql`update app.webhook_endpoints set status = 'disabled', disabled_at = now() where url = 'https://a.example/off'`;
  await sql`insert into app.owners (owner, email) values ('ann', 'ann@example.com')`;
});
test.after.always(() => db?.close());

const createAlarm = async (owner: string, coin: string, direction: string, target: string, notification = 'webhook') => {
  const [row] = await db.sql<{ id: string }[]>`
    select (app.create_alarm(${owner}, 'test', ${coin}, 'rate', ${direction}, ${target}, ${notification}, array['webhook', 'email']) -> 'alarm' ->> 'id') as id`;
  return Number(row!.id);
};
const setPrice = (sql: Sql, coin: number, price: string) => sql`update market.coin_state set price = ${price}::numeric where coin_id = ${coin}`;
const evaluate = async (sql: Sql) => (await sql<{ triggered: number; deliveries: number; emails: number; pushes: number }[]>`select * from app.evaluate_alarms()`)[0]!;
const alarm = async (id: number) => (await db.sql`select status, triggered_value::text, triggered_at from app.alarms where id = ${id}`)[0]!;

/** The alarm.triggered events of one alarm, their deliveries (endpoint urls) and queued deliver_webhook jobs. */
async function eventsOf(alarmId: number, sql: Sql = db.sql) {
  const [row] = await sql<{ events: number; urls: string[] | null; jobs: number }[]>`
    with events as (select * from app.webhook_events where event = 'alarm.triggered' and (data -> 'alarm' ->> 'id')::bigint = ${alarmId}),
    deliveries as (select d.id, e.url from app.webhook_deliveries d join app.webhook_endpoints e on e.id = d.endpoint_id where d.event_id in (select id from events))
    select (select count(*)::int from events) as events,
      (select array_agg(url order by url) from deliveries) as urls,
      (select count(*)::int from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id
       where k.identifier = 'deliver_webhook' and (j.payload ->> 'delivery_id')::bigint in (select id from deliveries)) as jobs`;
  return row!;
}

test.serial('a crossing triggers once, with one delivery and job per delivering endpoint of the owner', async (t) => {
  const above = await createAlarm('ann', 'alpha', 'above', '150');
  const email = await createAlarm('ann', 'alpha', 'above', '120', 'email');
  const untouched = await createAlarm('ann', 'alpha', 'above', '200');
  const below = await createAlarm('bob', 'alpha', 'below', '90');
  t.deepEqual(await evaluate(db.sql), { triggered: 0, deliveries: 0, emails: 0, pushes: 0 }, 'nothing crossed yet');

  await setPrice(db.sql, COINS.alpha, '150.5');
  t.deepEqual(await evaluate(db.sql), { triggered: 2, deliveries: 2, emails: 1, pushes: 0 }, 'the webhook alarm (2 endpoints) and the email alarm');
  t.like(await alarm(above), { status: 'triggered', triggered_value: '150.5' });
  t.like(await alarm(email), { status: 'triggered', triggered_value: '150.5' });
  t.like(await alarm(untouched), { status: 'active', triggered_value: null });
  t.like(await alarm(below), { status: 'active' });
  t.deepEqual(await eventsOf(above), { events: 1, urls: ['https://a.example/1', 'https://a.example/2'], jobs: 2 }, 'not the disabled endpoint, not bob\'s');
  t.deepEqual(await eventsOf(email), { events: 0, urls: null, jobs: 0 }, 'an e-mail alarm raises no webhook event');
  const mails = await db.sql`
    select m.recipient, m.status, m.data -> 'alarm' ->> 'id' as alarm, m.data ->> 'value' as value,
      (select count(*)::int from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id
       where k.identifier = 'send_email' and j.payload ->> 'message_id' = m.id::text) as jobs
    from app.email_messages m where m.kind = 'alarm.triggered'`;
  t.deepEqual(mails.map((row) => ({ ...row })), [{ recipient: 'ann@example.com', status: 'pending', alarm: String(email), value: '150.5', jobs: 1 }],
    'one e-mail and its send_email job, in the same transaction');

  const [event] = await db.sql`select owner, data from app.webhook_events where (data -> 'alarm' ->> 'id')::bigint = ${above}`;
  t.is(event!.owner, 'ann');
  t.like(event!.data, {
    alarm: { id: above, type: 'TARGET', coin: { slug: 'alpha', symbol: 'ALP', name: 'alpha' }, metric: 'rate', direction: 'above', target: '150', status: 'triggered', notification: 'webhook', triggered_value: '150.5' },
    coin: { id: COINS.alpha, slug: 'alpha', name: 'alpha', symbol: 'ALP' },
    metric: 'rate', direction: 'above', target: '150', value: '150.5',
  });
  t.is(event!.data.triggered_at, event!.data.alarm.triggered_at);
  // a real trigger's data (its alarm not null) has the documented AlarmTriggeredEvent shape
  t.deepEqual(AlarmTriggeredEvent.shape.data.parse(event!.data), event!.data);

  t.deepEqual(await evaluate(db.sql), { triggered: 0, deliveries: 0, emails: 0, pushes: 0 }, 'a second evaluation does nothing');
  await setPrice(db.sql, COINS.alpha, '160');
  t.deepEqual(await evaluate(db.sql), { triggered: 0, deliveries: 0, emails: 0, pushes: 0 }, 'a triggered alarm is not evaluated again');
  t.deepEqual(await eventsOf(above), { events: 1, urls: ['https://a.example/1', 'https://a.example/2'], jobs: 2 });

  await setPrice(db.sql, COINS.alpha, '89');
  t.deepEqual(await evaluate(db.sql), { triggered: 1, deliveries: 1, emails: 0, pushes: 0 }, "bob's below alarm, to his one endpoint");
  t.deepEqual((await eventsOf(below)).urls, ['https://b.example/']);
});

test.serial('the price refresh evaluates alarms in its own transaction', async (t) => {
  const id = await createAlarm('ann', 'hooked', 'above', '110');
  const addBar = (sql: Sql, close: string) => sql`
    insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
    values (date_trunc('minute', now()) - interval '1 minute', ${COINS.hooked}, 100, ${close}::numeric, 100, ${close}::numeric, 10)`;

  // a refresh that rolls back takes the trigger and the event with it
  const rolledBack = new Error('roll back');
  const outcome = await db.sql
    .begin(async (tx) => {
      await addBar(tx, '111');
      await tx`select market.refresh_coin_state()`;
      const [inside] = await tx`select status from app.alarms where id = ${id}`;
      t.is(inside!.status, 'triggered');
      throw rolledBack;
    })
    .catch((error) => error);
  t.is(outcome, rolledBack);
  t.like(await alarm(id), { status: 'active' });
  t.deepEqual(await eventsOf(id), { events: 0, urls: null, jobs: 0 });

  await addBar(db.sql, '111');
  await db.sql`select market.refresh_coin_state()`;
  t.like(await alarm(id), { status: 'triggered', triggered_value: '111' });
  t.deepEqual(await eventsOf(id), { events: 1, urls: ['https://a.example/1', 'https://a.example/2'], jobs: 2 });
});

test.serial('a rolled-back evaluation leaves neither the trigger nor the event', async (t) => {
  const id = await createAlarm('ann', 'beta', 'below', '50');
  const rolledBack = new Error('roll back');
  const outcome = await db.sql
    .begin(async (tx) => {
      await setPrice(tx, COINS.beta, '49');
      t.deepEqual(await evaluate(tx), { triggered: 1, deliveries: 2, emails: 0, pushes: 0 });
      t.deepEqual(await eventsOf(id, tx), { events: 1, urls: ['https://a.example/1', 'https://a.example/2'], jobs: 2 }, 'recorded and queued inside it');
      throw rolledBack;
    })
    .catch((error) => error);
  t.is(outcome, rolledBack);
  t.like(await alarm(id), { status: 'active', triggered_value: null, triggered_at: null });
  t.deepEqual(await eventsOf(id), { events: 0, urls: null, jobs: 0 });

  await setPrice(db.sql, COINS.beta, '49');
  t.deepEqual(await evaluate(db.sql), { triggered: 1, deliveries: 2, emails: 0, pushes: 0 });
  t.deepEqual(await eventsOf(id), { events: 1, urls: ['https://a.example/1', 'https://a.example/2'], jobs: 2 });
});

test.serial('two evaluations running concurrently on two connections trigger once, one delivery per endpoint', async (t) => {
  const ids = [await createAlarm('ann', 'gamma', 'above', '105'), await createAlarm('bob', 'gamma', 'above', '104'), await createAlarm('ann', 'delta', 'below', '95')];
  await setPrice(db.sql, COINS.gamma, '106');
  await setPrice(db.sql, COINS.delta, '94');
  const first = createSql({ url: db.url, pooled: true, embedded: db.embeddedPort !== null }, { max: 1 });
  const second = createSql({ url: db.url, pooled: true, embedded: db.embeddedPort !== null }, { max: 1 });
  try {
    // The first evaluation holds its transaction (and its row locks) open while the second starts;
    // the second must wait (row locks on a server, the multiplexer on the embedded database) and
    // then find the alarms triggered.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let evaluated!: (result: { triggered: number; deliveries: number }) => void;
    const firstResult = new Promise<{ triggered: number; deliveries: number }>((resolve) => (evaluated = resolve));
    const firstTx = first.begin(async (tx) => {
      evaluated(await evaluate(tx));
      await held;
    });
    t.deepEqual(await firstResult, { triggered: 3, deliveries: 5, emails: 0, pushes: 0 });
    const secondTx = second.begin(async (tx) => evaluate(tx));
    await sleep(300);
    release();
    await firstTx;
    t.deepEqual(await secondTx, { triggered: 0, deliveries: 0, emails: 0, pushes: 0 });
  } finally {
    await first.end({ timeout: 5 });
    await second.end({ timeout: 5 });
  }
  t.deepEqual(await eventsOf(ids[0]!), { events: 1, urls: ['https://a.example/1', 'https://a.example/2'], jobs: 2 });
  t.deepEqual(await eventsOf(ids[1]!), { events: 1, urls: ['https://b.example/'], jobs: 1 });
  t.deepEqual(await eventsOf(ids[2]!), { events: 1, urls: ['https://a.example/1', 'https://a.example/2'], jobs: 2 });
});

test.serial('a target passed between two refreshes triggers by the bar high or low; bars before arming never do', async (t) => {
  const { sql } = db;
  const wick = 406;
  await sql`insert into market.coins (id, slug, symbol, name, type, circulating_supply, source)
    values (${wick}, 'wick', 'WCK', 'wick', 'coin', 1000, 'alarm-eval')`;
  const bar = (minutesAgo: number, high: number, low: number) => sql`
    insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume)
    values (date_trunc('minute', now()) - ${minutesAgo} * interval '1 minute', ${wick}, 100, ${high}, ${low}, 100, 10)`;
  // a wick to 170 before any alarm exists, then the price refresh: the close is 100
  await bar(9, 170, 100);
  await sql`select market.refresh_coin_state()`;
  const late = await createAlarm('ann', 'wick', 'above', '165');
  const above = await createAlarm('ann', 'wick', 'above', '150');
  const below = await createAlarm('bob', 'wick', 'below', '50');
  // between two refreshes the price touches 160 and 40, and closes at 100 each minute
  await bar(5, 160, 99);
  await bar(4, 101, 40);
  await sql`select market.refresh_coin_state()`;
  t.like(await alarm(above), { status: 'triggered', triggered_value: '160' });
  t.like(await alarm(below), { status: 'triggered', triggered_value: '40' });
  t.like(await alarm(late), { status: 'active' }, 'the wick to 170 came before the alarm was armed');
  t.deepEqual(await eventsOf(above), { events: 1, urls: ['https://a.example/1', 'https://a.example/2'], jobs: 2 });
  t.deepEqual(await eventsOf(below), { events: 1, urls: ['https://b.example/'], jobs: 1 });
  // compared bars are not compared again: a re-armed alarm below the old wick stays active
  await sql`select app.update_alarm('ann', ${above}, '{"status": "active"}'::jsonb)`;
  t.deepEqual(await evaluate(sql), { triggered: 0, deliveries: 0, emails: 0, pushes: 0 });
  t.like(await alarm(above), { status: 'active' });
  const [mark] = await sql`select through = (select last_updated from market.coin_state where coin_id = ${wick}) as current
    from app.alarm_watermarks where coin_id = ${wick}`;
  t.true(mark!.current, 'the watermark is at the newest bar');
});

/**
 * A coin with a bar 8 minutes ago, an alarm above 150 armed on it, then minute M (3 minutes ago) built
 * with `high` and compared by a refresh, as a stream holder's first build of M does.
 */
async function armedThenBuilt(coinId: number, slug: string, high: string): Promise<{ above: number; m: Date }> {
  const { sql } = db;
  await sql`insert into market.coins (id, slug, symbol, name, type, circulating_supply, source)
    values (${coinId}, ${slug}, ${slug.slice(0, 3).toUpperCase()}, ${slug}, 'coin', 1000, 'alarm-eval')`;
  const minute = (minutesAgo: number) => sql`select date_trunc('minute', now()) - ${minutesAgo} * interval '1 minute' as time`.then(([row]) => row!.time as Date);
  await sql`insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume) values (${await minute(8)}, ${coinId}, 100, 100, 100, 100, 10)`;
  await sql`select market.refresh_coin_state()`;
  const above = await createAlarm('bob', slug, 'above', '150');
  const m = await minute(3);
  await sql`insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume) values (${m}, ${coinId}, 100, ${high}, 99, 100, 10)`;
  await sql`select market.refresh_coin_state()`;
  return { above, m };
}

test.serial('a bar built again after it was compared (a venue\'s late candle raising its high) is compared again at the next refresh', async (t) => {
  const { sql } = db;
  const rebuilt = 407;
  // minute M built with the venues' candles in by then: its high 120; compared, the watermark passes it
  const { above, m } = await armedThenBuilt(rebuilt, 'rebuilt', '120');
  t.like(await alarm(above), { status: 'active' });
  const [mark] = await sql`select through from app.alarm_watermarks where coin_id = ${rebuilt}`;
  t.is((mark!.through as Date).getTime(), m.getTime(), 'the watermark at M');
  // a late candle builds M again with a high of 155: the next refresh compares it
  await sql`update market.coin_bars_1m set high = 155 where coin_id = ${rebuilt} and time = ${m}`;
  await sql`select market.refresh_coin_state()`;
  t.like(await alarm(above), { status: 'triggered', triggered_value: '155' });
  t.is((await eventsOf(above)).events, 1);
});

test.serial('a bar compared as served triggers; built again lower (the index rules with a late venue), the trigger stands with the value served', async (t) => {
  const { sql } = db;
  const lowered = 408;
  // minute M first built from the venues' candles in: its high 151.5, served and compared
  const { above, m } = await armedThenBuilt(lowered, 'lowered', '151.5');
  t.like(await alarm(above), { status: 'triggered', triggered_value: '151.5' });
  // a late venue's candle builds M again, its high now 149: the trigger stands, once, with the value served
  await sql`update market.coin_bars_1m set high = 149 where coin_id = ${lowered} and time = ${m}`;
  await sql`select market.refresh_coin_state()`;
  t.like(await alarm(above), { status: 'triggered', triggered_value: '151.5' });
  t.is((await eventsOf(above)).events, 1);
});

test.serial('a thousand active alarms that do not trigger: one evaluation, timed', async (t) => {
  await db.sql`
    insert into app.alarms (owner, name, coin_id, metric, direction, target, notification)
    select 'bulk', 'bulk ' || i, ${COINS.alpha}, 'rate', 'above', 1000 + i, 'webhook' from generate_series(1, 1000) i`;
  const started = performance.now();
  t.deepEqual(await evaluate(db.sql), { triggered: 0, deliveries: 0, emails: 0, pushes: 0 });
  t.log(`evaluated 1000 active alarms in ${(performance.now() - started).toFixed(1)} ms`);
});
