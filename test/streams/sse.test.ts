// GET /api/v1/stream/prices as Server-Sent Events over live prices written as the stream holder
// writes them (market.live_prices and NOTIFY live_prices): refusals before the stream opens, the
// snapshot first (a coin without a live price yet with its minute price), changes within a second, Last-Event-ID, heartbeats, a revoked key, a per-key
// limit, and a client that never reads, dropped with its buffer bounded.
import test from 'ava';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import { revokeKey } from '../../src/keys.ts';
import type { StreamHub } from '../../src/streams/hub.ts';
import { sleep, until } from '../../dev/wait.ts';

let db: TestDatabase;
let api: TestApi;
const BUFFER = 4096;

test.before(async () => {
  db = await testDatabase();
  await db.sql`insert into market.coins (slug, symbol, name, type, source)
    select 'live-' || i, 'LV' || i, 'Live coin ' || i, 'coin', 'exchanges' from generate_series(1, 100) i`;
  await setPrices(1, 100, '100');
  api = await testApi(db, { env: { STREAM_HEARTBEAT_MS: '300', STREAM_BUFFER_BYTES: String(BUFFER), STREAM_CONNECTIONS: 'starter=3,pro=10' } });
});
test.after.always(async () => {
  await api?.close();
  await db?.close();
});

/** As market.refresh_live_prices writes them: a new version per changed coin, kept for resumption, then NOTIFY. */
async function setPrices(from: number, to: number, price: string) {
  await db.sql.begin(async (sql) => {
    const [row] = await sql`
      with written as (
        insert into market.live_prices as l (coin_id, price, venues, at, version)
        select c.id, ${price}::numeric, 3, now(), nextval('market.live_price_version')
        from market.coins c where c.slug in (select 'live-' || i from generate_series(${from}::int, ${to}::int) i)
        on conflict (coin_id) do update set price = excluded.price, at = excluded.at, version = excluded.version
        returning l.*
      ),
      kept as (insert into market.live_price_changes (version, coin_id, price, venues, at) select version, coin_id, price, venues, at from written)
      select max(version)::text as v from written`;
    await sql`select pg_notify('live_prices', ${row?.v ?? '0'})`;
  });
}

interface Stream {
  response: IncomingMessage;
  text: () => string;
  waitFor: (pattern: RegExp, ms?: number) => Promise<number>;
  ended: Promise<void>;
  close: () => void;
}

function open(path: string, key: string, headers: Record<string, string> = {}): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${api.base}${path}`, { headers: { authorization: `Bearer ${key}`, ...headers } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      const ended = new Promise<void>((done) => response.on('close', () => done()));
      resolve({
        response,
        text: () => text,
        waitFor: async (pattern, ms = 2_000) => {
          const started = Date.now();
          await until(() => `${pattern} in: ${text.slice(-500)}`, () => pattern.test(text), { timeoutMs: ms, everyMs: 10 });
          return Date.now() - started;
        },
        ended,
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const events = (text: string) =>
  text.split('\n\n').filter((block) => /^(id|event|data):/m.test(block)).map((block) => ({
    id: /^id: (.*)$/m.exec(block)?.[1],
    event: /^event: (.*)$/m.exec(block)?.[1],
    data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null'),
  }));

test.serial('refused before the stream opens: unknown selectors, a bad currency, a Free key, too many selectors', async (t) => {
  const starter = await api.key({ plan: 'starter' });
  const unknown = await api.get('/api/v1/stream/prices?slugs=live-1,no-such-coin', starter);
  t.is(unknown.status, 422);
  t.regex(JSON.stringify(unknown.body.error.details), /no-such-coin/);
  t.is((await api.get('/api/v1/stream/prices?slugs=live-1&convert=XXX', starter)).status, 422);
  t.is((await api.get(`/api/v1/stream/prices?ids=${Array.from({ length: 101 }, (_, i) => i + 1).join(',')}`, starter)).status, 422);
  const free = await api.get('/api/v1/stream/prices?slugs=live-1', await api.key({ plan: 'free' }));
  t.is(free.status, 403);
  t.is(free.body.error.code, 'plan_required');
  t.is((await api.get('/api/v1/stream/prices?slugs=live-1')).status, 401);
});

test.serial('the snapshot first, a change within a second as a price event, Last-Event-ID resumes, heartbeats', async (t) => {
  const key = await api.key({ plan: 'starter' });
  const stream = await open('/api/v1/stream/prices?slugs=live-1,live-2&symbols=lv3', key);
  t.is(stream.response.statusCode, 200);
  t.regex(String(stream.response.headers['content-type']), /^text\/event-stream/);
  t.truthy(stream.response.headers['x-quota-limit'], 'counted by admission');
  await stream.waitFor(/event: snapshot/);
  const [snapshot] = events(stream.text());
  t.is(snapshot!.event, 'snapshot');
  t.deepEqual(snapshot!.data.data.map((row: { slug: string }) => row.slug).sort(), ['live-1', 'live-2', 'live-3']);
  t.is(snapshot!.data.data[0].price, '100');

  const started = Date.now();
  await setPrices(2, 2, '101.5');
  await stream.waitFor(/event: price/, 1_000);
  t.true(Date.now() - started < 1_000);
  const price = events(stream.text()).find((event) => event.event === 'price')!;
  t.like(price.data, { slug: 'live-2', price: '101.5', currency: 'USD' });
  t.regex(price.id!, /^\d+$/);
  // a coin not selected sends nothing
  await setPrices(50, 50, '7');
  await stream.waitFor(/^: heartbeat$/m, 1_000);
  stream.close();

  // missed while away: live-1 changed; resuming gets exactly that, no snapshot
  await setPrices(1, 1, '99');
  const resumed = await open('/api/v1/stream/prices?slugs=live-1,live-2', key, { 'last-event-id': price.id! });
  await resumed.waitFor(/event: price/);
  await sleep(200);
  const got = events(resumed.text());
  t.deepEqual(got.map((event) => [event.event, event.data.slug, event.data.price]), [['price', 'live-1', '99']]);
  resumed.close();

  // in EUR: converted
  const eur = await open('/api/v1/stream/prices?slugs=live-1&convert=eur', key);
  await eur.waitFor(/event: snapshot/);
  t.is(events(eur.text())[0]!.data.meta.currency, 'EUR');
  t.not(events(eur.text())[0]!.data.data[0].price, '99');
  eur.close();
});

test.serial('Last-Event-ID within the replay buffer gets every missed change; beyond it, a snapshot', async (t) => {
  const key = await api.key({ plan: 'starter' });
  const stream = await open('/api/v1/stream/prices?slugs=live-10,live-11', key);
  await stream.waitFor(/event: snapshot/);
  const last = events(stream.text())[0]!.id!;
  stream.close();
  // away: live-10 changed twice, live-11 once — each change is replayed, not only each coin's latest
  await setPrices(10, 10, '110');
  await setPrices(11, 11, '111');
  await setPrices(10, 10, '112');
  const resumed = await open('/api/v1/stream/prices?slugs=live-10,live-11', key, { 'last-event-id': last });
  await resumed.waitFor(/"price":"112"/);
  await sleep(200);
  t.deepEqual(events(resumed.text()).map((event) => [event.event, event.data.slug, event.data.price, event.data.kind]),
    [['price', 'live-10', '110', 'live'], ['price', 'live-11', '111', 'live'], ['price', 'live-10', '112', 'live']]);
  const ids = events(resumed.text()).map((event) => Number(event.id));
  t.deepEqual(ids, [...ids].sort((a, b) => a - b));
  resumed.close();

  // the buffer no longer reaches back to the client's last event (trimmed as after STREAM_REPLAY_SECONDS): a snapshot
  await setPrices(10, 10, '113');
  await db.sql`delete from market.live_price_changes where version <= (select max(version) - 1 from market.live_price_changes)`;
  const behind = await open('/api/v1/stream/prices?slugs=live-10,live-11', key, { 'last-event-id': last });
  await behind.waitFor(/event: snapshot/);
  await sleep(200);
  const got = events(behind.text());
  t.is(got.length, 1);
  t.is(got[0]!.event, 'snapshot');
  t.deepEqual(got[0]!.data.data.map((row: { slug: string; price: string }) => [row.slug, row.price]).sort(), [['live-10', '113'], ['live-11', '111']]);
  const [newest] = await db.sql`select max(version)::text as v from market.live_prices l join market.coins c on c.id = l.coin_id where c.slug in ('live-10', 'live-11')`;
  t.is(got[0]!.id, newest!.v, 'the snapshot carries the version it is as of');
  behind.close();
});

test.serial('a coin without a live price yet starts with its minute price, marked kind minute; its first live price follows', async (t) => {
  await db.sql`insert into market.coins (slug, symbol, name, type, source)
    values ('minute-1', 'MN1', 'Minute coin 1', 'coin', 'exchanges'), ('minute-2', 'MN2', 'Minute coin 2', 'coin', 'exchanges')`;
  // minute-1 has a minute price (market.coin_state), minute-2 none at all
  await db.sql`insert into market.coin_state (coin_id, price, last_updated)
    select id, 42.5, '2026-01-02T03:04:00Z' from market.coins where slug = 'minute-1'`;
  const key = await api.key({ plan: 'starter' });
  const stream = await open('/api/v1/stream/prices?slugs=live-1,minute-1,minute-2', key);
  await stream.waitFor(/event: snapshot/);
  const [snapshot] = events(stream.text());
  const rows = snapshot!.data.data as { slug: string; price: string; kind: string; at: string }[];
  t.deepEqual(rows.map((row) => [row.slug, row.kind]).sort(), [['live-1', 'live'], ['minute-1', 'minute']], 'a coin with neither price is left out');
  t.like(rows.find((row) => row.slug === 'minute-1'), { price: '42.5', at: '2026-01-02T03:04:00.000Z', kind: 'minute' });
  t.is(snapshot!.data.meta.count, 2);
  await db.sql.begin(async (sql) => {
    const [row] = await sql`
      insert into market.live_prices (coin_id, price, venues, at, version)
      select id, 43, 2, now(), nextval('market.live_price_version') from market.coins where slug = 'minute-1'
      returning version::text as v`;
    await sql`select pg_notify('live_prices', ${row!.v})`;
  });
  await stream.waitFor(/event: price/, 1_000);
  const price = events(stream.text()).find((event) => event.event === 'price')!;
  t.like(price.data, { slug: 'minute-1', price: '43', kind: 'live' });
  stream.close();
  // with a live price, the snapshot has that one
  const again = await open('/api/v1/stream/prices?slugs=minute-1', key);
  await again.waitFor(/event: snapshot/);
  t.like(events(again.text())[0]!.data.data[0], { slug: 'minute-1', price: '43', kind: 'live' });
  again.close();
});

test.serial('concurrent streams per key are limited by plan; a revoked key\'s streams close within a second', async (t) => {
  const key = await api.key({ plan: 'starter', owner: 'revoked-owner' });
  const streams = await Promise.all([1, 2, 3].map(() => open('/api/v1/stream/prices?slugs=live-1', key)));
  for (const stream of streams) await stream.waitFor(/event: snapshot/);
  const fourth = await api.get('/api/v1/stream/prices?slugs=live-1', key);
  t.is(fourth.status, 429);
  t.is(fourth.body.error.code, 'too_many_streams');
  const started = Date.now();
  const [row] = await db.sql`select id::text from app.api_keys where owner = 'revoked-owner'`;
  t.is(await revokeKey(db.sql, row!.id as string), 1);
  await Promise.all(streams.map((stream) => stream.ended));
  t.true(Date.now() - started < 1_000, `closed after ${Date.now() - started} ms`);
  for (const stream of streams) t.regex(stream.text(), /event: end\ndata: \{"reason":"revoked"/);
});

test.serial('a client that never reads is dropped with its unsent bytes bounded', async (t) => {
  const key = await api.key({ plan: 'pro' });
  const ids = (await db.sql`select id from market.coins where slug like 'live-%' order by id`).map((row) => row.id).join(',');
  const socket = connect(Number(new URL(api.base).port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.pause();
  socket.write(`GET /api/v1/stream/prices?ids=${ids} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`);
  const hub = api.app.streams as StreamHub;
  await sleep(300);
  let most = 0;
  let round = 0;
  const watch = setInterval(() => {
    for (const subscriber of (hub as unknown as { subscribers: Set<{ transport: { buffered(): number } }> }).subscribers) {
      most = Math.max(most, subscriber.transport.buffered());
    }
  }, 5);
  try {
    while (hub.openFor(Number((await db.sql`select id from app.api_keys where plan = 'pro' order by id desc limit 1`)[0]!.id)) > 0) {
      if (++round > 2_000) throw new Error('never dropped');
      await setPrices(1, 100, String(1000 + round));
      await sleep(5);
    }
  } finally {
    clearInterval(watch);
  }
  // what Node kept for the socket never went far over the bound: one round of events (~100 of them)
  t.true(most < BUFFER + 20_000, `at most ${most} bytes unsent`);
  socket.resume();
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  await new Promise((resolve) => socket.once('close', resolve));
  t.regex(text, /event: end\ndata: \{"reason":"slow_consumer"/);
  t.regex(await (await fetch(`${api.base}/metrics`)).text(), /mdapi_stream_dropped_total\{reason="slow_consumer"\} 1/);
});

test.serial('the OpenAPI document declares the stream, its content type and what it costs against the quota', async (t) => {
  const document = (await api.get('/api/v1/openapi.json')).body;
  const operation = document.paths['/api/v1/stream/prices'].get;
  t.is(operation.operationId, 'streamPrices');
  t.truthy(operation.responses['200'].content['text/event-stream']);
  t.regex(operation.responses['200'].description, /one request per connection-minute/);
  t.true(operation.parameters.some((parameter: { name: string }) => parameter.name === 'slugs'));
});
