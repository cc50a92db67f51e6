// What operators read: /healthz, /readyz, /metrics and the structured request and job logs.
import test from 'ava';
import { createServer } from 'node:http';
import { createApp } from '../../src/http/app.ts';
import { served } from '../../src/service.ts';
import { metricsAccess } from '../../src/http/metrics.ts';
import { createSql } from '../../src/db/client.ts';
import { silentLogger } from '../../src/log.ts';
import { Metrics } from '../../src/metrics.ts';
import { startWorker } from '../../src/worker.ts';
import { testApi, useApi, type TestApi } from '../helpers/http.ts';
import { captureLog } from '../helpers/log.ts';
import { fixtureRoutes } from './fixtures.ts';
import { schedule } from '../../jobs/index.ts';
import { poll } from '../../dev/wait.ts';

const handles = useApi(test, { routes: fixtureRoutes });

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition. */
function samples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample: ${line}`);
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

const find = (all: Sample[], name: string, labels: Record<string, string> = {}) =>
  all.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
const total = (all: Sample[], name: string, labels: Record<string, string> = {}) => find(all, name, labels).reduce((sum, s) => sum + s.value, 0);

async function scrape(api: TestApi, headers: Record<string, string> = {}) {
  const response = await api.get('/metrics', null, headers);
  return { ...response, samples: typeof response.body === 'string' ? samples(response.body) : [] };
}

/** An app over a database nobody listens on: what the probes say when the database is gone. */
async function withDeadDatabase<T>(work: (base: string) => Promise<T>): Promise<T> {
  const dead = createSql({ url: 'postgres://postgres@127.0.0.1:1/postgres', pooled: true, embedded: false }, { max: 1 });
  const app = createApp({ sql: dead, config: handles.db.config() }, { logger: silentLogger }, served);
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await work(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await dead.end({ timeout: 1 });
  }
}

async function withApi<T>(options: Parameters<typeof testApi>[1], work: (api: TestApi) => Promise<T>): Promise<T> {
  const api = await testApi(handles.db, { routes: fixtureRoutes, ...options });
  try {
    return await work(api);
  } finally {
    await api.close();
  }
}

test('/healthz answers 200 without a key, and without the database', async (t) => {
  const response = await handles.api.get('/healthz');
  t.is(response.status, 200);
  t.deepEqual(response.body, { status: 'ok' });
  t.is(response.headers.get('cache-control'), 'no-store');
  t.truthy(response.headers.get('x-request-id'));
  const dead = await withDeadDatabase((base) => fetch(`${base}/healthz`));
  t.is(dead.status, 200, 'no database call');
});

test('/readyz reports 503 with every check when the database is unreachable', async (t) => {
  const { status, body } = await withDeadDatabase(async (base) => {
    const response = await fetch(`${base}/readyz`);
    return { status: response.status, body: await response.json() };
  });
  t.is(status, 503);
  t.is(body.error.code, 'not_ready');
  t.false(body.error.details.checks.database.ok);
  t.false(body.error.details.checks.migrations.ok);
});

test.serial('/readyz is ready with current migrations; a required worker needs a fresh heartbeat', async (t) => {
  await handles.db.sql`delete from app.worker_heartbeats`;
  // WORKER=off (the test default): no worker expected, so none is not fatal.
  const relaxed = await handles.api.get('/readyz');
  t.is(relaxed.status, 200, JSON.stringify(relaxed.body));
  t.is(relaxed.body.status, 'ready');
  t.true(relaxed.body.checks.database.ok);
  t.deepEqual(relaxed.body.checks.migrations.pending, []);
  t.like(relaxed.body.checks.worker, { ok: true, required: false, status: 'none' });
  t.like(relaxed.body.checks.timescaledb_jobs, { ok: true, runner: null }, 'no decision before the worker ran');
  await handles.db.sql`select app.decide_timescaledb_job_runner('on')`;
  t.like((await handles.api.get('/readyz')).body.checks.timescaledb_jobs, { runner: 'service', reason: 'TIMESCALEDB_JOB_RUNNER=on' });

  await withApi({ env: { READY_REQUIRES_WORKER: 'true' } }, async (api) => {
    const none = await api.get('/readyz');
    t.is(none.status, 503);
    t.like(none.body.error.details.checks.worker, { ok: false, required: true, status: 'none' });

    await handles.db.sql`insert into app.worker_heartbeats (worker_id, process, beat_at) values ('stale-worker', 'test:1', now() - interval '45 seconds')`;
    const stale = await api.get('/readyz');
    t.is(stale.status, 503);
    t.is(stale.body.error.code, 'not_ready');
    t.like(stale.body.error.details.checks.worker, { ok: false, status: 'stale', fresh_workers: 0 });
    t.true(stale.body.error.details.checks.worker.newest_beat_age_seconds >= 45);
    t.true(stale.body.error.details.checks.database.ok, 'each check has its own result');

    await handles.db.sql`insert into app.worker_heartbeats (worker_id, process, beat_at) values ('fresh-worker', 'test:2', now() - interval '5 seconds')`;
    const fresh = await api.get('/readyz');
    t.is(fresh.status, 200, JSON.stringify(fresh.body));
    t.like(fresh.body.checks.worker, { ok: true, status: 'fresh', fresh_workers: 1 });
  });
  // WORKER=inline requires the worker by default.
  await handles.db.sql`delete from app.worker_heartbeats`;
  await withApi({ env: { WORKER: 'inline' } }, async (api) => t.is((await api.get('/readyz')).status, 503));
});

test.serial('/readyz is not ready while migrations are behind the code', async (t) => {
  const [last] = await handles.db.sql<{ name: string; applied_at: Date }[]>`select name, applied_at from app.migrations order by name desc limit 1`;
  await handles.db.sql`delete from app.migrations where name = ${last!.name}`;
  try {
    const behind = await handles.api.get('/readyz');
    t.is(behind.status, 503);
    t.like(behind.body.error.details.checks.migrations, { ok: false, pending: [last!.name] });
  } finally {
    await handles.db.sql`insert into app.migrations (name, applied_at) values (${last!.name}, ${last!.applied_at})`;
  }
  t.is((await handles.api.get('/readyz')).status, 200);
});

test.serial('/metrics counts requests by declared route and status, and admission outcomes', async (t) => {
  const key = await handles.api.key();
  const before = (await scrape(handles.api)).samples;
  t.is((await handles.api.get('/api/v1/fixtures/items/7?kind=a', key)).status, 200);
  t.is((await handles.api.get('/api/v1/fixtures/items/8', key)).status, 200);
  t.is((await handles.api.get('/api/v1/fixtures/items/9')).status, 401);
  t.is((await handles.api.get('/api/v1/no/such/path')).status, 404);
  const response = await scrape(handles.api);
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
  const after = response.samples;
  const route = { method: 'GET', route: '/api/v1/fixtures/items/{id}' };
  const moved = (name: string, labels: Record<string, string>) => total(after, name, labels) - total(before, name, labels);
  t.is(moved('mdapi_http_requests_total', { ...route, status: '200' }), 2);
  t.is(moved('mdapi_http_requests_total', { ...route, status: '401' }), 1);
  t.is(moved('mdapi_http_requests_total', { route: 'unmatched', status: '404' }), 1, 'unknown paths share one label');
  t.is(moved('mdapi_http_request_duration_seconds_count', { ...route, status: '200' }), 2);
  t.true(find(after, 'mdapi_http_request_duration_seconds_bucket', { ...route, status: '200', le: '+Inf' }).length === 1, 'the histogram exists');
  t.is(moved('mdapi_admissions_total', { outcome: 'ok' }), 2);
  t.is(moved('mdapi_admissions_total', { outcome: 'unauthorized' }), 1);
  t.false(after.some((s) => Object.values(s.labels).some((v) => v.includes('/items/7'))), 'never the path as sent');
  t.true(find(after, 'mdapi_db_pool_size', { pool: 'api' }).length === 1);
  t.true(find(after, 'mdapi_process_resident_memory_bytes').length === 1, 'process metrics too');
});

test.serial('/metrics reads queue depth, bar age, webhook deliveries, heartbeats and connections at scrape time', async (t) => {
  const { sql } = handles.db;
  await sql`select graphile_worker.add_job('prune_counters', '{}'::json, queue_name => 'metrics-test')`;
  await sql`select graphile_worker.add_job('prune_counters', '{}'::json, queue_name => 'metrics-test', run_at => now() + interval '1 hour')`;
  await sql`insert into market.data_sources (name, kind, description) values ('metrics-test', 'import', 'test source') on conflict do nothing`;
  const [coin] = await sql<{ id: number }[]>`
    insert into market.coins (slug, symbol, name, type, source) values ('metrics-test-coin', 'MTC', 'Metrics Test', 'coin', 'metrics-test') returning id`;
  await sql`insert into market.coin_bars_1m (time, coin_id, open, high, low, close) values (date_trunc('minute', now()) - interval '5 minutes', ${coin!.id}, 1, 1, 1, 1)`;
  await sql`insert into app.worker_heartbeats (worker_id, process, beat_at) values ('metrics-worker', 'test:3', now() - interval '12 seconds'),
    ('dead-worker', 'test:4', now() - interval '2 minutes')`;
  try {
    const [endpoint] = (await sql`
      insert into app.webhook_endpoints (owner, url, events, secret) values ('metrics', 'https://hooks.example/m', '{alarm.triggered}', 'x') returning id`) as unknown as [{ id: string }];
    const [event] = (await sql`insert into app.webhook_events (owner, event, data) values ('metrics', 'alarm.triggered', '{}') returning id`) as unknown as [{ id: string }];
    await sql`insert into app.webhook_deliveries (endpoint_id, event_id, status) values (${endpoint.id}, ${event.id}, 'failed')`;
    const { samples: all } = await scrape(handles.api);
    t.is(total(all, 'mdapi_webhook_deliveries_24h', { status: 'failed' }), 1);
    await sql`delete from app.webhook_endpoints where id = ${endpoint.id}`;
    t.is(total(all, 'mdapi_job_queue_jobs', { queue: 'metrics-test', state: 'ready' }), 1);
    t.is(total(all, 'mdapi_job_queue_jobs', { queue: 'metrics-test', state: 'scheduled' }), 1);
    t.is(total(all, 'mdapi_job_queue_lock_age_seconds', { queue: 'metrics-test' }), 0, 'the queue is free');
    const age = total(all, 'mdapi_newest_bar_age_seconds', { source: 'metrics-test' });
    t.true(age >= 300 && age < 420, `bar age ${age}`);
    t.is(total(all, 'mdapi_workers', { state: 'fresh' }), 1);
    t.is(total(all, 'mdapi_workers', { state: 'stale' }), 1);
    // The embedded database (PGlite behind the multiplexer) has no pg_stat_activity rows; a server has.
    if (!handles.db.embeddedPort) t.true(find(all, 'mdapi_db_connections', { application: 'market-data-api' }).length > 0);
  } finally {
    await sql`delete from graphile_worker._private_jobs where job_queue_id = (select id from graphile_worker._private_job_queues where queue_name = 'metrics-test')`;
    await sql`delete from market.coin_bars_1m where coin_id = ${coin!.id}`;
    await sql`delete from market.coins where id = ${coin!.id}`;
    await sql`delete from app.worker_heartbeats`;
  }
  const { samples: later } = await scrape(handles.api);
  t.is(find(later, 'mdapi_newest_bar_age_seconds', { source: 'metrics-test' }).length, 0, 'gone when the data is');
});

test('/metrics is refused from a non-loopback address, and with a wrong token', async (t) => {
  await withApi({ env: { TRUST_PROXY: 'true' } }, async (api) => {
    const remote = await scrape(api, { 'x-forwarded-for': '203.0.113.7' });
    t.is(remote.status, 403);
    t.is(remote.body.error.code, 'forbidden');
    t.is((await scrape(api, { 'x-forwarded-for': '127.0.0.1' })).status, 200);
  });
  const token = 'metrics-token-0123456789abcdef';
  await withApi({ env: { TRUST_PROXY: 'true', METRICS_TOKEN: token } }, async (api) => {
    const missing = await scrape(api, { 'x-forwarded-for': '203.0.113.7' });
    t.is(missing.status, 401);
    t.is(missing.body.error.code, 'unauthorized');
    t.is(missing.headers.get('www-authenticate'), 'Bearer');
    const wrong = await scrape(api, { 'x-forwarded-for': '203.0.113.7', authorization: `Bearer ${token}x` });
    t.is(wrong.status, 401);
    t.is((await scrape(api, { authorization: 'Bearer wrong-token-from-loopback' })).status, 401, 'a wrong token is wrong from anywhere');
    const right = await scrape(api, { 'x-forwarded-for': '203.0.113.7', authorization: `Bearer ${token}` });
    t.is(right.status, 200);
    t.true(right.samples.some((s) => s.name === 'mdapi_http_requests_total'));
  });
  // Without TRUST_PROXY a forwarded address is a header like any other: the peer (loopback) counts.
  t.is((await scrape(handles.api, { 'x-forwarded-for': '203.0.113.7' })).status, 200);
});

test('the metrics access rule', (t) => {
  t.is(metricsAccess('127.0.0.1', undefined, undefined), 'ok');
  t.is(metricsAccess('::1', undefined, undefined), 'ok');
  t.is(metricsAccess('::ffff:127.0.0.1', undefined, undefined), 'ok');
  t.is(metricsAccess('10.0.0.1', undefined, undefined), 'forbidden');
  t.is(metricsAccess('::ffff:10.0.0.1', 'Bearer anything', undefined), 'forbidden', 'no token configured: a token proves nothing');
  t.is(metricsAccess('10.0.0.1', undefined, 'a-token-of-16-chars'), 'unauthorized');
  t.is(metricsAccess('10.0.0.1', 'Bearer a-token-of-16-chars', 'a-token-of-16-chars'), 'ok');
  t.is(metricsAccess('127.0.0.1', 'Bearer nope', 'a-token-of-16-chars'), 'unauthorized');
});

test('several apps in one process keep their own metrics', async (t) => {
  const a = new Metrics(handles.db.config());
  const b = new Metrics(handles.db.config());
  a.httpRequests.inc({ method: 'GET', route: '/x', status: '200' });
  t.regex(await a.registry.metrics(), /mdapi_http_requests_total\{method="GET",route="\/x",status="200"\} 1/);
  t.notRegex(await b.registry.metrics(), /route="\/x"/);
});

test.serial('one JSON log line per request, with the route, status, duration and key id, never the key, the query or a body secret', async (t) => {
  const log = captureLog();
  await withApi({ env: { LOG_REQUESTS: 'true' }, logger: log.logger }, async (api) => {
    const key = await api.key();
    const [{ id: keyId }] = (await handles.db.sql`select id from app.api_keys where prefix = ${key.slice(0, 12)}`) as unknown as [{ id: string }];
    const ok = await api.get('/api/v1/fixtures/items/42?kind=a&token=query-secret-value', key);
    t.is(ok.status, 200);
    const echoed = await api.request('POST', '/api/v1/fixtures/echo', {
      key,
      headers: { 'content-type': 'application/json', cookie: 'session=cookie-secret-value' },
      body: JSON.stringify({ name: 'x', secret: 'body-secret-value', password: 'body-password-value' }),
    });
    t.is(echoed.status, 201);
    t.is((await api.get('/api/v1/fixtures/crash', key)).status, 500);
    t.is((await api.get('/api/v1/ping', 'mdk_not-a-real-key-but-still-secret-value')).status, 401);

    const lines = log.lines();
    const requests = lines.filter((line) => line.msg === 'request');
    t.is(requests.length, 4, log.text());
    const line = requests.find((l) => l.route === '/api/v1/fixtures/items/{id}')!;
    t.like(line, { level: 'info', method: 'GET', status: 200, keyId: Number(keyId), admission: 'ok', requestId: ok.headers.get('x-request-id') });
    t.is(typeof line.durationMs, 'number');
    t.truthy(line.time);
    t.like(requests.find((l) => l.route === '/api/v1/fixtures/echo'), { method: 'POST', status: 201 });
    const refused = requests.find((l) => l.route === '/api/v1/ping')!;
    t.like(refused, { status: 401, admission: 'unauthorized' });
    t.is(refused.keyId, undefined, 'no key id for an unknown key');
    const failure = lines.find((l) => l.msg === 'request failed')!;
    t.like(failure, { level: 'error', route: '/api/v1/fixtures/crash' });
    t.truthy((failure.err as { message?: string }).message, 'the error is logged for the operator');

    const text = log.text();
    for (const secret of [key, key.slice(4), 'mdk_not-a-real-key-but-still-secret-value', 'query-secret-value', 'kind=a', 'body-secret-value', 'body-password-value', 'cookie-secret-value', '/items/42']) {
      t.false(text.includes(secret), `"${secret}" is not in the log`);
    }
  });
});

test('LOG_REQUESTS=false keeps request lines out; the redact configuration masks secrets whoever logs them', async (t) => {
  const quiet = captureLog();
  await withApi({ env: { LOG_REQUESTS: 'false' }, logger: quiet.logger }, async (api) => {
    await api.get('/healthz');
  });
  t.is(quiet.lines().filter((line) => line.msg === 'request').length, 0);

  const log = captureLog();
  log.logger.info(
    {
      headers: { authorization: 'Bearer mdk_header-LEAK', cookie: 'c=cookie-LEAK' },
      req: { headers: { authorization: 'Bearer nested-LEAK' } },
      endpoint: { url: 'https://hooks.example/x', secret: 'whsec-LEAK' },
      key: 'mdk_plain-key-LEAK',
      password: 'plain-password-LEAK',
      DATABASE_URL: 'postgres://mdapi:db-password-LEAK@db.internal:5432/market',
      config: { SMTP_URL: 'smtp://alerts:smtp-password-LEAK@mail.example.com:587' },
    },
    'careless',
  );
  const [line] = log.lines();
  t.false(log.text().includes('LEAK'), log.text());
  t.is((line!.DATABASE_URL as string), 'postgres://mdapi:redacted@db.internal:5432/market', 'host and database stay visible');
  t.is((line!.config as { SMTP_URL: string }).SMTP_URL, 'smtp://alerts:redacted@mail.example.com:587');
  t.is((line!.endpoint as { url: string }).url, 'https://hooks.example/x');
});

test.serial('one log line and the metrics of every job run, success and final failure', async (t) => {
  const log = captureLog();
  const metrics = new Metrics(handles.db.config());
  const worker = await startWorker(handles.db.config({ WORKER: 'inline' }), schedule, { logger: log.logger, metrics });
  try {
    const [{ id: okId }] = (await handles.db.sql`select (graphile_worker.add_job('prune_counters', '{}'::json)).id`) as unknown as [{ id: string }];
    const [{ id: badId }] = (await handles.db.sql`
      select (graphile_worker.add_job('deliver_webhook', '{"note":"no delivery id"}'::json, max_attempts => 1)).id`) as unknown as [{ id: string }];
    const runs = () => log.lines().filter((line) => line.msg === 'job run');
    await poll(runs, (lines) => lines.filter((l) => [String(okId), String(badId)].includes(String((l.job as { id: string }).id))).length >= 2, { timeoutMs: 10_000, everyMs: 100 });
    const ok = runs().find((l) => String((l.job as { id: string }).id) === String(okId));
    const bad = runs().find((l) => String((l.job as { id: string }).id) === String(badId));
    t.like(ok, { level: 'info', outcome: 'success', job: { task: 'prune_counters' } }, log.text());
    t.is(typeof ok!.durationMs, 'number');
    t.like(bad, { level: 'error', outcome: 'failed', job: { task: 'deliver_webhook', attempt: 1, maxAttempts: 1 } });
    t.regex(String((bad!.err as { message?: string }).message), /delivery_id/);
    t.false(log.text().includes('no delivery id'), 'job payloads stay out of the log');
    const text = await metrics.registry.metrics();
    t.regex(text, /mdapi_job_runs_total\{task="prune_counters",outcome="success"\} [1-9]/);
    t.regex(text, /mdapi_job_runs_total\{task="deliver_webhook",outcome="failed"\} 1/);
    t.regex(text, /mdapi_job_duration_seconds_count\{task="prune_counters"\} [1-9]/);
  } finally {
    await worker.stop();
  }
});
