// /api/v1/ws: the live prices over WebSocket with the rules of the SSE stream (one hub, one
// admission): the key on the upgrade request or in the first message, subscribe/unsubscribe with
// the /prices selectors, the same price data as the SSE event, pings; refusals as an error
// envelope then a close (401, 403 plan_required, 422, 429 quota); the per-key concurrent limit
// over SSE and WebSocket together and across API processes; a revoked key closed within a second.
import test from 'ava';
import { WebSocket } from 'ws';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import { revokeKey } from '../../src/keys.ts';
import type { StreamHub } from '../../src/streams/hub.ts';
import { poll, sleep, until } from '../../dev/wait.ts';

let db: TestDatabase;
let api: TestApi;
/** a second API process on the same database: its own hub and stream slots */
let other: TestApi;

test.before(async () => {
  db = await testDatabase();
  await db.sql`insert into market.coins (slug, symbol, name, type, source)
    select 'live-' || i, 'LV' || i, 'Live coin ' || i, 'coin', 'exchanges' from generate_series(1, 5) i`;
  await setPrice(1, '100');
  await setPrice(2, '200');
  const env = { STREAM_HEARTBEAT_MS: '300', STREAM_CONNECTIONS: 'starter=3,pro=10', STREAM_LEASE_SECONDS: '3' };
  api = await testApi(db, { env });
  other = await testApi(db, { env });
});
test.after.always(async () => {
  await api?.close();
  await other?.close();
  await db?.close();
});

/** As market.refresh_live_prices writes a coin's live price: a new version, then NOTIFY. */
async function setPrice(coin: number, price: string) {
  await db.sql.begin(async (sql) => {
    const [row] = await sql`
      insert into market.live_prices as l (coin_id, price, venues, at, version)
      select c.id, ${price}::numeric, 3, now(), nextval('market.live_price_version') from market.coins c where c.slug = ${`live-${coin}`}
      on conflict (coin_id) do update set price = excluded.price, at = excluded.at, version = excluded.version
      returning l.version::text as v`;
    await sql`select pg_notify('live_prices', ${row!.v as string})`;
  });
}

interface Client {
  ws: WebSocket;
  messages: Record<string, any>[];
  next: (type: string, ms?: number) => Promise<Record<string, any>>;
  send: (message: unknown) => void;
  closed: Promise<{ code: number; at: number }>;
}

function connect(key?: string, on: TestApi = api): Promise<Client> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${on.base.replace('http', 'ws')}/api/v1/ws`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
    const messages: Record<string, any>[] = [];
    let taken = 0;
    ws.on('message', (data) => messages.push(JSON.parse(String(data))));
    const closed = new Promise<{ code: number; at: number }>((done) => ws.on('close', (code) => done({ code, at: Date.now() })));
    ws.on('error', reject);
    ws.on('open', () =>
      resolve({
        ws, messages, closed,
        send: (message) => ws.send(typeof message === 'string' ? message : JSON.stringify(message)),
        // the next message of that type after those already taken
        next: async (type, ms = 2_000) => {
          // one past the message's index: 0 is "not yet"
          taken = await until(
            () => `a ${type} message, after: ${JSON.stringify(messages.slice(-5))}`,
            () => messages.findIndex((message, i) => i >= taken && message.type === type) + 1,
            { timeoutMs: ms, everyMs: 10 },
          );
          return messages[taken - 1]!;
        },
      }));
  });
}

test.serial('refusals are an error envelope, then a close: no key, a Free key, an unknown selector, a bad message', async (t) => {
  const none = await connect();
  none.send({ type: 'subscribe', slugs: ['live-1'] });
  t.like((await none.next('error')).error, { code: 'unauthorized' });
  t.is((await none.closed).code, 4401);

  const free = await connect(await api.key({ plan: 'free' }));
  const refusal = await free.next('error');
  t.deepEqual(refusal.error, { code: 'plan_required', message: refusal.error.message, details: { required_plan: 'starter' } });
  t.is((await free.closed).code, 4403);

  const starter = await api.key({ plan: 'starter' });
  const unknown = await connect(starter);
  await unknown.next('ready');
  unknown.send({ type: 'subscribe', slugs: ['live-1', 'no-such-coin'] });
  const invalid = await unknown.next('error');
  t.is(invalid.error.code, 'validation');
  t.regex(JSON.stringify(invalid.error.details), /no-such-coin/);
  t.is((await unknown.closed).code, 4422);

  const garbage = await connect(starter);
  garbage.send('{"type":');
  t.is((await garbage.next('error')).error.code, 'invalid_json');
  t.is((await garbage.closed).code, 4400);
});

test.serial('the key in the first message; a snapshot per subscription, then each change with the SSE event\'s data; unsubscribe; ping', async (t) => {
  const key = await api.key({ plan: 'starter' });
  const client = await connect();
  client.send({ type: 'auth', key });
  t.is((await client.next('ready')).plan, 'starter');
  client.send({ type: 'subscribe', slugs: ['live-1'], symbols: 'lv2' });
  const snapshot = await client.next('snapshot');
  t.deepEqual(snapshot.data.map((row: { slug: string; price: string }) => [row.slug, row.price]).sort(), [['live-1', '100'], ['live-2', '200']]);
  t.deepEqual(snapshot.meta, { currency: 'USD', count: 2 });

  const started = Date.now();
  await setPrice(2, '201.25');
  const price = await client.next('price', 1_000);
  t.true(Date.now() - started < 1_000);
  // the SSE price event's data, and its id as the version
  t.deepEqual(Object.keys(price.data), ['id', 'slug', 'symbol', 'price', 'currency', 'at', 'kind']);
  t.is(price.data.kind, 'live');
  t.like(price.data, { slug: 'live-2', symbol: 'LV2', price: '201.25', currency: 'USD' });
  t.regex(price.version, /^\d+$/);

  // a second subscription in EUR: its own snapshot, converted
  client.send({ type: 'subscribe', slugs: ['live-1'], convert: 'eur' });
  const eur = await client.next('snapshot');
  t.is(eur.meta.currency, 'EUR');
  t.not(eur.data[0].price, '100');

  client.send({ type: 'unsubscribe', symbols: ['LV2'] });
  await client.next('unsubscribed');
  await setPrice(2, '202');
  await setPrice(1, '101');
  const next = await client.next('price', 1_000);
  t.is(next.data.slug, 'live-1', 'live-2 is no longer sent');
  client.send({ type: 'ping' });
  await client.next('pong');
  t.false(client.messages.some((message) => message.type === 'price' && message.data.price === '202'));
  client.ws.close();
});

test.serial('the concurrent limit counts SSE and WebSocket streams of a key together, across API processes', async (t) => {
  const key = await api.key({ plan: 'starter' });
  const sse = await fetch(`${api.base}/api/v1/stream/prices?slugs=live-1`, { headers: { authorization: `Bearer ${key}` } });
  t.is(sse.status, 200);
  const first = await connect(key);
  await first.next('ready');
  // the third in the other process: still within the limit of 3
  const second = await connect(key, other);
  await second.next('ready');
  const fourth = await connect(key, other);
  t.like((await fourth.next('error')).error, { code: 'too_many_streams', details: { limit: 3 } });
  t.is((await fourth.closed).code, 4429);
  const refusedSse = await api.get('/api/v1/stream/prices?slugs=live-1', key);
  t.is(refusedSse.status, 429);
  // one closes: its slot is free again, in either process
  first.ws.close();
  await first.closed;
  await sleep(200);
  const again = await connect(key, other);
  await again.next('ready');
  again.ws.close();
  second.ws.close();
  await sse.body?.cancel();

  // a process that died holding a key's streams: they count until its rows expire, then not
  const orphan = await api.key({ plan: 'starter', owner: 'orphan' });
  await db.sql`insert into app.stream_slots (key_id, process, streams, expires_at)
    select id, 'dead-host:1:x', 3, now() + interval '1 second' from app.api_keys where owner = 'orphan'`;
  const blocked = await connect(orphan);
  t.is((await blocked.next('error')).error.code, 'too_many_streams');
  await sleep(1_100);
  const freed = await connect(orphan);
  await freed.next('ready');
  freed.ws.close();
});

test.serial('the quota counts a WebSocket stream as it does SSE (quota_exceeded); a revoked key\'s socket closes within a second', async (t) => {
  await db.sql`insert into app.plans (name, rank, monthly_quota, requests_per_minute, per_page_cap) values ('tiny', 10, 2, 100, 10)`;
  const tiny = await api.key({ plan: 'tiny' as never });
  for (let i = 0; i < 2; i++) t.is((await api.get('/api/v1/ping', tiny)).status, 200);
  const over = await connect(tiny);
  t.like((await over.next('error')).error, { code: 'quota_exceeded' });
  t.is((await over.closed).code, 4429);

  const key = await api.key({ plan: 'starter', owner: 'revoked-owner' });
  const client = await connect(key);
  await client.next('ready');
  client.send({ type: 'subscribe', slugs: ['live-1'] });
  await client.next('snapshot');
  const [row] = await db.sql`select id::text from app.api_keys where owner = 'revoked-owner'`;
  const started = Date.now();
  t.is(await revokeKey(db.sql, row!.id as string), 1);
  const closed = await client.closed;
  t.true(closed.at - started < 1_000, `closed after ${closed.at - started} ms`);
  t.is(closed.code, 4401);
  t.like(client.messages.at(-1), { type: 'end', reason: 'revoked' });
});

test.serial('each connection is one response in the key\'s usage (app.usage_daily): an opening as 2xx, a refusal by its status', async (t) => {
  const owner = 'usage-owner';
  const key = await api.key({ plan: 'starter', owner });
  for (let i = 0; i < 2; i++) {
    const client = await connect(key);
    await client.next('ready');
    // a refusal after the opening does not count the connection again
    client.send({ type: 'subscribe', slugs: ['no-such-coin'] });
    await client.next('error');
    await client.closed;
  }
  const free = await connect(await api.key({ plan: 'free', owner }));
  await free.next('error');
  await free.closed;
  const usage = async () => db.sql<{ status_class: string; requests: string }[]>`
    select u.status_class, sum(u.requests)::text as requests from app.usage_daily u join app.api_keys k on k.id = u.key_id
    where k.owner = ${owner} and u.endpoint = 'GET /api/v1/ws' group by 1 order by 1`;
  const rows = await poll(usage, (found) => found.length >= 2, { timeoutMs: 5_000, everyMs: 100 });
  t.deepEqual(rows.map((row) => ({ ...row })), [{ status_class: '2xx', requests: '2' }, { status_class: '4xx', requests: '1' }]);
});

test.serial('a stream whose quota runs out while it is open ends with quota_exceeded at its next minute\'s admission', async (t) => {
  await db.sql`insert into app.plans (name, rank, monthly_quota, requests_per_minute, per_page_cap) values ('three', 11, 3, 100, 10)`;
  const key = await api.key({ plan: 'three' as never });
  const hub = api.app.streams as StreamHub;
  hub.readmitMs = 250;
  try {
    const client = await connect(key);
    await client.next('ready');
    client.send({ type: 'subscribe', slugs: ['live-1'] });
    await client.next('snapshot');
    const opened = Date.now();
    // the opening took one request of three; two more minutes are admitted, the third is refused
    const end = await client.next('end', 5_000);
    t.is(end.reason, 'quota_exceeded');
    t.is((await client.closed).code, 4429);
    const lasted = Date.now() - opened;
    t.true(lasted >= 600, `ended after ${lasted} ms: two minutes admitted first`);
  } finally {
    hub.readmitMs = 60_000;
  }
});
