// The response cache (src/http/cache.ts): bodies kept until a refresh bumps their data version,
// seen by two API processes at once; ETag/304 still counted; per-key routes never cached; gzip
// and brotli negotiated; the cache turned off with RESPONSE_CACHE_MB=0.
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import test from 'ava';
import { createSql } from '../../src/db/client.ts';
import { testApi, useApi, type TestApi } from '../helpers/http.ts';
import { loadCoinFixture } from '../api/fixtures.ts';
import { importContent } from '../../src/content/import.ts';
import { ARTICLES, fixtureFiles, writeContentDir } from '../content/fixtures.ts';
import { poll, sleep, until } from '../../dev/wait.ts';
import { embeddedOnly } from '../helpers/targets.ts';

const extra: { second?: TestApi; off?: TestApi; notify?: TestApi; read?: TestApi; close?: () => Promise<void> } = {};
const handles = useApi(test, {
  setup: async ({ db }) => {
    await loadCoinFixture(db);
    // a second API process: its own app over its own pool (and its own LISTEN connection)
    const sql = createSql({ url: db.url, pooled: true, embedded: true }, { max: 2 });
    extra.second = await testApi({ ...db, sql });
    extra.off = await testApi(db, { env: { RESPONSE_CACHE_MB: '0' } });
    extra.notify = await testApi(db, { env: { CACHE_FRESHNESS: 'notify' } });
    extra.read = await testApi(db, { env: { CACHE_FRESHNESS: 'read' } });
    extra.close = async () => {
      await extra.second?.close();
      await extra.off?.close();
      await extra.notify?.close();
      await extra.read?.close();
      await sql.end({ timeout: 5 });
    };
  },
});
test.after.always(async () => extra.close?.());

let proKey: Promise<string> | undefined;
const key = () => (proKey ??= handles.api.key({ plan: 'pro' }));

/** A market tick: alpha's bar of the current minute at `price`, then the refresh (which bumps the version). */
async function tick(price: string) {
  const { sql } = handles.db;
  await sql.begin(async (tx) => {
    await tx`delete from market.coin_bars_1m where coin_id = 101 and time = date_trunc('minute', now())`;
    await tx`insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume, marketcap)
      values (date_trunc('minute', now()), 101, ${price}::numeric, ${price}::numeric, ${price}::numeric, ${price}::numeric, 5, null)`;
    await tx`select market.refresh_coin_state()`;
  });
}

const alphaPrice = async (api: TestApi) => {
  const response = await api.get('/api/v1/prices?slugs=alpha', await key());
  return { price: response.body.data[0].price as string, etag: response.headers.get('etag') };
};

/** A raw GET (fetch would decode the body): status, headers and the bytes as sent. */
function rawGet(api: TestApi, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; bytes: Buffer }>((resolve, reject) => {
    const request = httpRequest(`${api.base}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
    });
    request.on('error', reject);
    request.end();
  });
}

test.serial('a tick is served at once by two API processes, never the body cached before it', async (t) => {
  await tick('41');
  for (const api of [handles.api, extra.second!]) {
    const first = await alphaPrice(api);
    const again = await alphaPrice(api);
    t.is(first.price, '41');
    t.is(again.etag, first.etag, 'the same body, from the cache');
  }
  await tick('42');
  // no waiting: the refresh has committed, so its version is what the next request must see
  t.is((await alphaPrice(handles.api)).price, '42');
  t.is((await alphaPrice(extra.second!)).price, '42');
  await tick('43.5');
  t.deepEqual(await Promise.all([alphaPrice(handles.api), alphaPrice(extra.second!)]).then((both) => both.map((b) => b.price)), ['43.5', '43.5']);
});

test.serial('a content import is served at once by two API processes', async (t) => {
  const path = '/api/v1/articles/alpha-guide';
  const title = async (api: TestApi) => (await api.get(path, await key())).body.data.title as string;
  const withTitle = (text: string) => {
    const files = fixtureFiles();
    const articles = ARTICLES.map((article) => article.slug === 'alpha-guide'
      ? { ...article, translations: { ...article.translations, en: { ...article.translations.en, title: text } } }
      : article);
    return writeContentDir({ ...files, articles: { ...(files.articles as object), articles } });
  };
  await importContent(handles.db.sql, withTitle('Alpha guide, first edition'));
  for (const api of [handles.api, extra.second!]) {
    t.is(await title(api), 'Alpha guide, first edition');
    t.is(await title(api), 'Alpha guide, first edition', 'now from the cache');
  }
  // the import records itself (market.record_content_import), which bumps the content version
  await importContent(handles.db.sql, withTitle('Alpha guide, second edition'));
  t.deepEqual(await Promise.all([title(handles.api), title(extra.second!)]), ['Alpha guide, second edition', 'Alpha guide, second edition']);
});

test.serial('a liquidation ingest is served at once by two API processes; the daily routes are not cached', async (t) => {
  const path = '/api/v1/liquidations?per_page=1';
  const total = async (api: TestApi) => (await api.get(path, await key())).body.meta.total as number;
  const ingest = (ms: number) => handles.db.sql`select * from market.ingest_okx_liquidations(${handles.db.sql.json([
    { symbol: 'ALP/USDT:USDT', instId: 'ALP-USDT-SWAP', ts: String(ms), price: '100.5', contracts: '3', contractSize: '1', side: 'sell' },
  ] as never)})`;
  const before = await total(handles.api);
  t.is(await total(extra.second!), before);
  t.is(await total(handles.api), before, 'from the cache');
  await ingest(Date.now() - 60_000);
  t.deepEqual(await Promise.all([total(handles.api), total(extra.second!)]), [before + 1, before + 1]);
  t.truthy((await handles.api.get(path, await key())).headers.get('etag'));
  t.is((await handles.api.get('/api/v1/liquidations/daily', await key())).headers.get('etag'), null, 'read from an aggregate that announces no version');
});

test.serial('the cached body is served without the query until the data version changes', async (t) => {
  const path = '/api/v1/coins/alpha';
  const before = await handles.api.get(path, await key());
  // written behind the refresh functions' back: no version bump, so the cache still answers
  await handles.db.sql`update market.coins set name = 'Alpha Renamed' where id = 101`;
  t.is((await handles.api.get(path, await key())).body.data.name, before.body.data.name);
  t.is((await extra.off!.get(path, await key())).body.data.name, 'Alpha Renamed', 'without a cache the query runs every time');
  await handles.db.sql`select app.bump_data_version('market')`;
  t.is((await handles.api.get(path, await key())).body.data.name, 'Alpha Renamed');
  await handles.db.sql`update market.coins set name = ${before.body.data.name} where id = 101`;
  await handles.db.sql`select app.bump_data_version('market')`;
});

test.serial('a read of the versions (strict on a server, or read) sees a bump whose NOTIFY is still on its way; notify mode trusts the notifications it received', async (t) => {
  const path = '/api/v1/coins/alpha';
  const name = async (api: TestApi) => (await api.get(path, await key())).body.data.name as string;
  const reader = process.env.TEST_DATABASE_URL ? handles.api : extra.read!;
  const before = await name(reader);
  t.is(await name(extra.notify!), before);
  try {
    await handles.db.sql`update market.coins set name = 'Alpha Quietly Renamed' where id = 101`;
    // a version bumped without its NOTIFY: what a notification still on its way looks like to a listener
    await handles.db.sql`update app.data_versions set version = version + 1 where name = 'market'`;
    const [read, notify] = await Promise.all([name(reader), name(extra.notify!)]);
    t.is(read, 'Alpha Quietly Renamed', 'read: the version read after the request arrived');
    t.is(notify, before, 'notify: the body of the last version announced');
    // announced: the notify process follows as soon as the NOTIFY arrives
    await handles.db.sql`update market.coins set name = 'Alpha Announced' where id = 101`;
    await handles.db.sql`select app.bump_data_version('market')`;
    const announced = await poll(() => name(extra.notify!), (value) => value === 'Alpha Announced', { timeoutMs: 1000, everyMs: 50 });
    t.is(announced, 'Alpha Announced');
  } finally {
    await handles.db.sql`update market.coins set name = ${before} where id = 101`;
    await handles.db.sql`select app.bump_data_version('market')`;
  }
});

/** mdapi_cache_confirm_reads_total of an app */
const confirmReads = async (api: TestApi) => Number(/mdapi_cache_confirm_reads_total (\d+)/.exec((await api.get('/metrics')).body as string)?.[1]);

embeddedOnly(test, 'its server delivers every NOTIFY before it acknowledges the commit; a server confirms by a read (the test above)')
  .serial('strict on the embedded database: every refresh acknowledged before a request is in its answer, confirmed by a turn of the event loop, without a read', async (t) => {
  const k = await key();
  await alphaPrice(handles.api);
  const readsBefore = await confirmReads(handles.api);
  for (let index = 1; index <= 30; index++) {
    const price = `${400 + index}.25`;
    // acknowledged by the database (another connection, as a worker's would be) before the request is sent
    await tick(price);
    const answer = await handles.api.get('/api/v1/prices?slugs=alpha', k);
    t.is(answer.body.data[0].price, price, `tick ${index}`);
  }
  t.is(await confirmReads(handles.api), readsBefore, 'no versions read to confirm them');
  t.true(readsBefore >= 0);
  // the read mode does read: the metric can move
  await alphaPrice(extra.read!);
  t.true((await confirmReads(extra.read!)) > 0);
});

test.serial('read: a versions read queued behind a long statement gives way after CACHE_CONFIRM_WAIT_MS to the versions announced', async (t) => {
  const bounded = await testApi(handles.db, { env: { CACHE_FRESHNESS: 'read', CACHE_CONFIRM_WAIT_MS: '50' } });
  try {
    // until its listener is in place the app admits through the database, which the statement below holds
    await until('the new app listening for key changes', () => bounded.app.admission?.live);
    const k = await key();
    await tick('321.5');
    // the new version's body, computed once (that needs the database)
    t.is((await alphaPrice(bounded)).price, '321.5');
    // a statement that holds the embedded database (one session) for two seconds; on a server it
    // holds one connection only and the read is not queued at all
    const holding = handles.db.sql`select pg_sleep(2)`.then(() => Date.now());
    await sleep(200);
    const asked = Date.now();
    const answer = await bounded.get('/api/v1/prices?slugs=alpha', k);
    const answered = Date.now();
    t.is(answer.status, 200);
    t.is(answer.body.data[0].price, '321.5');
    const released = await holding;
    t.true(answered < released, `answered ${released - answered} ms before the statement ended`);
    t.true(answered - asked < 1000, `answered in ${answered - asked} ms`);
    if (!process.env.TEST_DATABASE_URL) {
      const metrics = await bounded.get('/metrics');
      t.regex(metrics.body as string, /mdapi_cache_confirm_waits_out_total [1-9]/);
    }
  } finally {
    await bounded.close();
  }
});

test.serial('ETag and If-None-Match: 304 without a body, the request still counted against the quota', async (t) => {
  const k = await handles.api.key({ plan: 'free' });
  const first = await handles.api.get('/api/v1/coins/alpha', k);
  const etag = first.headers.get('etag')!;
  t.regex(etag, /^"[\w-]{27}"$/, 'a strong ETag');
  t.is(first.headers.get('cache-control'), 'private, max-age=30');
  t.false(Number.isNaN(Date.parse(first.headers.get('last-modified')!)));
  const used = Number(first.headers.get('x-quota-used'));
  for (const header of [etag, `"other", ${etag}`, `W/${etag}`, '*']) {
    const again = await handles.api.get('/api/v1/coins/alpha', k, { 'if-none-match': header });
    t.is(again.status, 304, header);
    t.is(again.body, '', 'no body');
    t.is(again.headers.get('etag'), etag);
  }
  const last = await handles.api.get('/api/v1/coins/alpha', k, { 'if-none-match': '"stale"' });
  t.is(last.status, 200);
  t.is(Number(last.headers.get('x-quota-used')), used + 5, 'each 304 counted');
  // the other process computes the same ETag for the same body
  t.is((await extra.second!.get('/api/v1/coins/alpha', k, { 'if-none-match': etag })).status, 304);
  // and so does a process without a cache, which runs the query for the revalidation too
  const off = await extra.off!.get('/api/v1/coins/alpha', k, { 'if-none-match': etag });
  t.is(off.status, 304, 'the digest of the same body, computed afresh');
  t.is(off.headers.get('etag'), etag);
  t.is(off.headers.get('cache-control'), 'private, max-age=30');
  const changed = await extra.off!.get('/api/v1/coins/alpha', k, { 'if-none-match': '"stale"' });
  t.is(changed.status, 200);
  t.is(changed.headers.get('etag'), etag, 'a 200 carries the same ETag');
  await handles.db.sql`select app.bump_data_version('market')`;
  t.is((await handles.api.get('/api/v1/coins/alpha', k, { 'if-none-match': etag })).status, 304, 'a new version with the same body keeps its ETag');
});

test.serial('per-key routes and ping are never cached: no-store or no ETag, never a 304', async (t) => {
  const k = await key();
  for (const path of ['/api/v1/alarms', '/api/v1/webhooks']) {
    const response = await handles.api.get(path, k, { 'if-none-match': '*' });
    t.is(response.status, 200, path);
    t.is(response.headers.get('cache-control'), 'no-store', path);
    t.is(response.headers.get('etag'), null, path);
  }
  for (const path of ['/api/v1/usage', '/api/v1/ping']) {
    const response = await handles.api.get(path, k, { 'if-none-match': '*' });
    t.is(response.status, 200, path);
    t.is(response.headers.get('etag'), null, path);
  }
});

test.serial('gzip and brotli by Accept-Encoding above 1 KiB, the same JSON decoded; small bodies as they are', async (t) => {
  const authorization = `Bearer ${await key()}`;
  for (const api of [handles.api, extra.off!]) {
    const plain = await rawGet(api, '/api/v1/coins?per_page=100', { authorization });
    t.is(plain.headers['content-encoding'], undefined);
    t.true(plain.bytes.length > 1024, `${plain.bytes.length} bytes`);
    t.regex(String(plain.headers.vary), /accept-encoding/i);
    const json = JSON.parse(plain.bytes.toString());
    const br = await rawGet(api, '/api/v1/coins?per_page=100', { authorization, 'accept-encoding': 'gzip;q=0.5, br' });
    t.is(br.headers['content-encoding'], 'br');
    t.deepEqual(JSON.parse(brotliDecompressSync(br.bytes).toString()), json);
    t.true(br.bytes.length < plain.bytes.length);
    const gz = await rawGet(api, '/api/v1/coins?per_page=100', { authorization, 'accept-encoding': 'gzip' });
    t.is(gz.headers['content-encoding'], 'gzip');
    t.deepEqual(JSON.parse(gunzipSync(gz.bytes).toString()), json);
    t.is(gz.headers.etag, plain.headers.etag, 'one ETag for every encoding of the body');
    const small = await rawGet(api, '/api/v1/prices?slugs=alpha', { authorization, 'accept-encoding': 'gzip, br' });
    t.true(small.bytes.length < 1024);
    t.is(small.headers['content-encoding'], undefined, 'under the threshold');
  }
});

test.serial('the cache key: parameter order does not matter, the values do; pagination links keep the request', async (t) => {
  const k = await key();
  const a = await handles.api.get('/api/v1/prices?slugs=alpha,beta&convert=EUR', k);
  const b = await handles.api.get('/api/v1/prices?convert=EUR&slugs=alpha,beta', k);
  t.deepEqual(b.body, a.body);
  const usd = await handles.api.get('/api/v1/prices?slugs=alpha,beta', k);
  t.is(usd.body.meta.currency, 'USD');
  const page = await handles.api.get('/api/v1/coins?per_page=2&page=1', k);
  const swapped = await handles.api.get('/api/v1/coins?page=1&per_page=2', k);
  t.is(page.body.links.first, `${handles.api.base}/api/v1/coins?per_page=2&page=1`);
  t.is(swapped.body.links.first, `${handles.api.base}/api/v1/coins?page=1&per_page=2`);
});

test.serial('the cache key: the Host the links are built on, never the Origin header a browser adds', async (t) => {
  const k = await key();
  const path = '/api/v1/coins?per_page=2&page=1';
  const port = new URL(handles.api.base).port;
  // the same Origin through two host names: each answer links to its own host
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `127.0.0.1:${port}`]) {
    const answer = await rawGet(handles.api, path, { authorization: `Bearer ${k}`, host, origin: 'https://shop.example', 'accept-encoding': 'identity' });
    t.is(JSON.parse(answer.bytes.toString()).links.first, `http://${host}${path}`);
  }
  // other Origin headers are the same answer (one kept body: the same strong ETag)
  const etags = new Set<string>();
  for (const origin of ['https://a.example', 'https://b.example', 'null']) {
    const answer = await rawGet(handles.api, path, { authorization: `Bearer ${k}`, origin, 'accept-encoding': 'identity' });
    etags.add(String(answer.headers.etag));
  }
  t.is(etags.size, 1);
});

test.serial('a URL answered again without parsing or routing: the same headers, each request admitted and counted, refusals as before', async (t) => {
  const k = await handles.api.key({ plan: 'free' });
  const path = '/api/v1/coins/alpha?convert=USD';
  const first = await handles.api.get(path, k);
  const again = await handles.api.get(path, k);
  t.is(again.status, 200);
  t.deepEqual(again.body, first.body);
  const varying = new Set(['date', 'x-request-id', 'x-quota-used', 'x-quota-remaining', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit']);
  const names = (response: typeof first) => [...response.headers.keys()].filter((name) => !varying.has(name)).sort();
  t.deepEqual(names(again), names(first), 'the same headers as the answer of the full path');
  for (const name of names(first)) t.is(again.headers.get(name), first.headers.get(name), name);
  t.is(again.headers.get('x-content-type-options'), 'nosniff');
  t.truthy(again.headers.get('content-security-policy'));
  t.is(again.headers.get('x-powered-by'), null);
  t.is(Number(again.headers.get('x-quota-used')), Number(first.headers.get('x-quota-used')) + 1, 'counted');
  // a key revoked, a key missing, a key without the plan: refused as the full path refuses them
  t.is((await handles.api.get(path, null)).status, 401);
  t.is((await handles.api.get(path, 'mdk_not-a-key-at-all-0000000000000000000000000')).status, 401);
  await handles.db.sql`update app.api_keys set revoked_at = now() where prefix = ${k.slice(0, 12)}`;
  // refused within a second (the revocation's NOTIFY), as admission promises
  const revoked = await poll(() => handles.api.get(path, k), (answer) => answer.status !== 200, { timeoutMs: 1000, everyMs: 50 });
  t.is(revoked.status, 401);
  t.is(revoked.body.error.code, 'unauthorized');
  // the request log and metrics name the declared route
  const metrics = await handles.api.get('/metrics');
  t.regex(metrics.body as string, /mdapi_http_requests_total\{method="GET",route="\/api\/v1\/coins\/\{slug\}",status="200"\} (?:[2-9]|[1-9]\d+)\n/);
});
