// Admission counted in the API process and flushed in batches (ADMISSION_FLUSH_MS): two API
// processes (two apps on two pools over one database) share one quota and one rate limit within
// the stated bound, the per-request path (0) is exact, counts reach the counter rows, and a revoked
// key is refused by both processes within a second.
import { createServer } from 'node:http';
import test from 'ava';
import { createApp, guardServer } from '../../src/http/app.ts';
import { createSql } from '../../src/db/client.ts';
import { createKey, revokeKey } from '../../src/keys.ts';
import { silentLogger } from '../../src/log.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { awayFromMinuteBoundary } from '../helpers/http.ts';
import { fixtureRoutes } from './fixtures.ts';
import { poll, sleep } from '../../dev/wait.ts';

let db: TestDatabase;
let rank = 100;

test.before(async () => {
  db = await testDatabase();
});
test.after.always(async () => {
  await db?.close();
});

/** A plan of its own and a key on it. */
async function keyOn(quota: number, perMinute: number) {
  const name = `plan-${++rank}`;
  await db.sql`insert into app.plans (name, rank, monthly_quota, requests_per_minute, per_page_cap) values (${name}, ${rank}, ${quota}, ${perMinute}, 100)`;
  return (await createKey(db.sql, { plan: name as never, owner: name, scope: 'data-api' })).key;
}

/** One API process: an app on a pool of its own, listening on an ephemeral port. */
async function apiProcess(env: Record<string, string>) {
  const sql = createSql({ url: db.url, pooled: db.embeddedPort !== null, embedded: db.embeddedPort !== null }, { max: 4 });
  const app = createApp({ sql, config: db.config(env) }, { logger: silentLogger }, { routes: fixtureRoutes });
  const server = createServer(app.callback());
  guardServer(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  // Every admission of a counted request and every flush's snapshot of the pending counts, on the
  // batcher's own clock: what the bound speaks of.
  const admitted: number[] = [];
  const snapshots: number[] = [];
  const batcher = app.admission as unknown as Record<string, (...args: unknown[]) => any> | null;
  if (batcher) {
    // until its LISTEN is in place a process admits with app.admit: wait for it, to know which path ran
    await poll(() => (batcher as unknown as { listening: boolean }).listening, Boolean, { timeoutMs: 5000, everyMs: 10 });
    const decide = batcher.decide!.bind(batcher);
    batcher.decide = (entry, route, now) => {
      const row = decide(entry, route, now);
      if (row.outcome === 'ok' && (route as { consume: boolean }).consume) admitted.push(now as number);
      return row;
    };
    const flushOnce = batcher.flushOnce!.bind(batcher);
    batcher.flushOnce = () => {
      snapshots.push(Date.now());
      return flushOnce();
    };
  }
  return {
    app,
    async get(path: string, key: string) {
      const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
      return { status: response.status, headers: response.headers, body: await response.json() as any };
    },
    flush: () => app.admission!.flush(),
    /** The most requests this process admitted within two consecutive flush intervals. */
    mostBetweenFlushes() {
      const marks = [-Infinity, ...snapshots, Infinity];
      let most = 0;
      for (let i = 0; i + 2 < marks.length || i === 0; i++) {
        const [from, to] = [marks[i]!, marks[Math.min(i + 2, marks.length - 1)]!];
        most = Math.max(most, admitted.filter((at) => at >= from && at < to).length);
      }
      return most;
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await app.close();
      await sql.end({ timeout: 5 });
    },
  };
}

const usedIn = async (key: string) => {
  const [row] = await db.sql<{ used: number }[]>`
    select coalesce(sum(u.used), 0)::int as used from app.usage_monthly u join app.api_keys k on k.id = u.key_id where k.prefix = ${key.slice(0, 12)}`;
  return row!.used;
};

/** `count` requests, `concurrency` at a time; the statuses. */
async function hammer(get: () => Promise<{ status: number }>, count: number, concurrency: number) {
  const statuses: number[] = [];
  let left = count;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (left-- > 0) statuses.push((await get()).status);
  }));
  return statuses;
}

const ok = (statuses: number[]) => statuses.filter((status) => status === 200).length;

test.serial('two processes share one quota: over it by at most what one admitted between its flushes', async (t) => {
  // no timer flush during the test: the flushes happen where the test says
  const [a, b] = [await apiProcess({ ADMISSION_FLUSH_MS: '60000' }), await apiProcess({ ADMISSION_FLUSH_MS: '60000' })];
  try {
    const key = await keyOn(50, 10_000);
    const fromA = [];
    for (let i = 0; i < 30; i++) fromA.push(await a.get('/api/v1/ping', key));
    t.deepEqual(fromA.map((r) => r.status), Array(30).fill(200));
    t.deepEqual(fromA.map((r) => Number(r.headers.get('x-quota-used'))), Array.from({ length: 30 }, (_, i) => i + 1), 'exact within one process');
    // B has not seen A's 30 (A has not flushed): it admits 30 too, 10 over the quota of 50, fewer than the 30 A admitted unflushed
    const fromB = [];
    for (let i = 0; i < 30; i++) fromB.push((await b.get('/api/v1/ping', key)).status);
    t.is(ok(fromB), 30);
    await a.flush();
    await b.flush();
    await a.flush();
    t.is(await usedIn(key), 50, 'the shared row holds the quota, never more');
    const [overA, overB] = [await a.get('/api/v1/ping', key), await b.get('/api/v1/ping', key)];
    t.deepEqual([overA.status, overB.status], [429, 429]);
    t.deepEqual([overA.body.error.code, overB.body.error.code], ['quota_exceeded', 'quota_exceeded']);
    t.is(overA.headers.get('x-quota-used'), '50');
    t.true(Number(overB.headers.get('retry-after')) > 0);
  } finally {
    await a.close();
    await b.close();
  }
});

test.serial('two processes share one per-minute limit within the same bound', async (t) => {
  await awayFromMinuteBoundary(15);
  const [a, b] = [await apiProcess({ ADMISSION_FLUSH_MS: '60000' }), await apiProcess({ ADMISSION_FLUSH_MS: '60000' })];
  try {
    const key = await keyOn(100_000, 20);
    const fromA = [];
    for (let i = 0; i < 15; i++) fromA.push(await a.get('/api/v1/ping', key));
    t.is(fromA[14]!.headers.get('x-ratelimit-remaining'), '5');
    await a.flush();
    // B reads A's 15 at its first lookup: exact again
    const fromB = [];
    for (let i = 0; i < 6; i++) fromB.push(await b.get('/api/v1/ping', key));
    t.deepEqual(fromB.map((r) => r.status), [200, 200, 200, 200, 200, 429]);
    t.is(fromB[5]!.body.error.code, 'rate_limited');
    t.is(fromB[5]!.headers.get('x-quota-used'), '20', 'a rate-limited request costs no quota');
    // A has not read B's 5 yet: it may admit up to 5 more (what B admitted between its flushes)
    const moreA = [];
    for (let i = 0; i < 10; i++) moreA.push((await a.get('/api/v1/ping', key)).status);
    t.is(ok(moreA), 5);
    await b.flush();
    await a.flush();
    t.is((await a.get('/api/v1/ping', key)).status, 429, 'once flushed, A sees B\'s counts');
    const [row] = await db.sql<{ requests: number }[]>`
      select sum(requests)::int as requests from app.rate_windows w join app.api_keys k on k.id = w.key_id where k.prefix = ${key.slice(0, 12)}`;
    t.is(row!.requests, 15 + 6 + 10, 'every attempt flushed is counted in the minute\'s row, refused ones too');
  } finally {
    await a.close();
    await b.close();
  }
});

test.serial('two processes hammering one key: the quota holds within the stated bound', async (t) => {
  const [a, b] = [await apiProcess({ ADMISSION_FLUSH_MS: '50' }), await apiProcess({ ADMISSION_FLUSH_MS: '50' })];
  try {
    const quota = 200;
    const key = await keyOn(quota, 100_000);
    const [fromA, fromB] = await Promise.all([
      hammer(() => a.get('/api/v1/ping', key), 300, 8),
      hammer(() => b.get('/api/v1/ping', key), 300, 8),
    ]);
    const admitted = ok(fromA) + ok(fromB);
    const bound = Math.max(a.mostBetweenFlushes(), b.mostBetweenFlushes());
    t.true(admitted >= quota, `never refused before the quota is used (${admitted})`);
    t.true(admitted - quota <= bound, `over the quota by ${admitted - quota}, at most ${bound}`);
    t.true([...fromA, ...fromB].every((status) => status === 200 || status === 429));
    await sleep(300);
    t.is(await usedIn(key), quota);
  } finally {
    await a.close();
    await b.close();
  }
});

test.serial('ADMISSION_FLUSH_MS=0: every request admitted by app.admit, exact across processes', async (t) => {
  const [a, b] = [await apiProcess({ ADMISSION_FLUSH_MS: '0' }), await apiProcess({ ADMISSION_FLUSH_MS: '0' })];
  try {
    t.is(a.app.admission, null);
    const key = await keyOn(60, 100_000);
    const [fromA, fromB] = await Promise.all([
      hammer(() => a.get('/api/v1/ping', key), 50, 6),
      hammer(() => b.get('/api/v1/ping', key), 50, 6),
    ]);
    t.is(ok(fromA) + ok(fromB), 60);
    t.is(await usedIn(key), 60, 'in the row at once, without a flush');
  } finally {
    await a.close();
    await b.close();
  }
});

test.serial('the counts reach the counter rows after a flush, and /usage of either process reports them', async (t) => {
  await awayFromMinuteBoundary(10);
  const [a, b] = [await apiProcess({ ADMISSION_FLUSH_MS: '100' }), await apiProcess({ ADMISSION_FLUSH_MS: '100' })];
  try {
    const key = await keyOn(1000, 1000);
    for (let i = 0; i < 5; i++) await a.get('/api/v1/ping', key);
    await sleep(400);
    t.is(await usedIn(key), 5);
    const [endpoint] = await db.sql<{ requests: number }[]>`
      select e.requests::int from app.usage_endpoints e join app.api_keys k on k.id = e.key_id
      where k.prefix = ${key.slice(0, 12)} and e.endpoint = 'GET /api/v1/ping'`;
    t.is(endpoint!.requests, 5);
    const [window] = await db.sql<{ requests: number }[]>`
      select w.requests from app.rate_windows w join app.api_keys k on k.id = w.key_id where k.prefix = ${key.slice(0, 12)}`;
    t.is(window!.requests, 5);
    const [touched] = await db.sql<{ last_used_at: Date | null }[]>`select last_used_at from app.api_keys where prefix = ${key.slice(0, 12)}`;
    t.truthy(touched!.last_used_at);
    // B counts its own /usage request, writes it, then reads: A's 5 and its 1
    const usage = await b.get('/api/v1/usage', key);
    t.is(usage.body.data.used, 6);
    t.is(usage.headers.get('x-quota-used'), '6');
  } finally {
    await a.close();
    await b.close();
  }
});

test.serial('closing a process writes the counts it has not flushed yet', async (t) => {
  const a = await apiProcess({ ADMISSION_FLUSH_MS: '60000' });
  const key = await keyOn(1000, 1000);
  for (let i = 0; i < 4; i++) await a.get('/api/v1/ping', key);
  t.is(await usedIn(key), 0, 'nothing written yet');
  await a.close();
  t.is(await usedIn(key), 4);
});

test.serial('a revoked key is refused by both processes within a second; a plan change applies at once', async (t) => {
  const [a, b] = [await apiProcess({ ADMISSION_FLUSH_MS: '200' }), await apiProcess({ ADMISSION_FLUSH_MS: '200' })];
  try {
    const key = await keyOn(1000, 1000);
    const other = await keyOn(500, 1000);
    for (const api of [a, b]) {
      t.is((await api.get('/api/v1/ping', key)).status, 200);
      t.is((await api.get('/api/v1/ping', other)).headers.get('x-quota-limit'), '500');
    }
    const revokedAt = Date.now();
    t.is(await revokeKey(db.sql, key.slice(0, 12)), 1);
    await db.sql`update app.plans set monthly_quota = 700 from app.api_keys k where k.prefix = ${other.slice(0, 12)} and app.plans.name = k.plan`;
    for (const api of [a, b]) {
      // polled until 2 s after the revocation, for both processes
      const within = () => ({ timeoutMs: revokedAt + 2000 - Date.now(), everyMs: 20 });
      const response = await poll(() => api.get('/api/v1/ping', key), (answer) => answer.status !== 200, within());
      t.is(response.status, 401);
      t.is(response.body.error.code, 'unauthorized');
      t.true(Date.now() - revokedAt < 1000, `refused ${Date.now() - revokedAt} ms after the revocation`);
      const limit = await poll(async () => (await api.get('/api/v1/ping', other)).headers.get('x-quota-limit'), (value) => value === '700', within());
      t.is(limit, '700');
    }
  } finally {
    await a.close();
    await b.close();
  }
});

test.serial('a revocation whose NOTIFY never arrives is still refused after the next flush', async (t) => {
  // flushes where the test says
  const a = await apiProcess({ ADMISSION_FLUSH_MS: '60000' });
  try {
    const key = await keyOn(1000, 1000);
    t.is((await a.get('/api/v1/ping', key)).status, 200);
    // as behind a transaction pooler, where LISTEN hears nothing
    await db.sql`alter table app.api_keys disable trigger api_keys_announce_change`;
    await revokeKey(db.sql, key.slice(0, 12));
    await db.sql`alter table app.api_keys enable trigger api_keys_announce_change`;
    t.is((await a.get('/api/v1/ping', key)).status, 200, 'served from the cache until a flush reads the key');
    await a.flush();
    const refused = await a.get('/api/v1/ping', key);
    t.is(refused.status, 401);
    t.is(refused.body.error.code, 'unauthorized');
  } finally {
    await a.close();
  }
});
