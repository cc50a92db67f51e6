// One error path: validation, unknown routes, mapped database errors, unexpected failures,
// oversized headers and bodies all leave as {error: {code, message, details}}.
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import test from 'ava';
import { testApi, useApi } from '../helpers/http.ts';
import { fixtureRoutes } from './fixtures.ts';
import { toApiError } from '../../src/http/errors.ts';

let key: string;
const handles = useApi(test, {
  routes: fixtureRoutes,
  env: { MAX_BODY_BYTES: '2048' },
  setup: async ({ api }) => {
    key = await api.key();
  },
});

const isEnvelope = (body: any) =>
  typeof body?.error?.code === 'string' && typeof body.error.message === 'string' && typeof body.error.details === 'object';

test('invalid parameters answer 422 validation naming every field, and cost nothing', async (t) => {
  // a key of its own: the file's shared key is counted by the tests running beside this one
  const own = await handles.api.key();
  const response = await handles.api.get('/api/v1/fixtures/items/abc?page=0&kind=c&limit=2001&per_page=x', own);
  t.is(response.status, 422);
  t.true(isEnvelope(response.body));
  t.is(response.body.error.code, 'validation');
  t.deepEqual(Object.keys(response.body.error.details.errors).sort(), ['id', 'kind', 'limit', 'page', 'per_page']);
  for (const messages of Object.values(response.body.error.details.errors)) t.true(Array.isArray(messages) && (messages as string[]).length > 0);
  t.is(response.headers.get('x-quota-used'), '0');
});

test('a repeated query parameter is refused rather than guessed', async (t) => {
  const response = await handles.api.get('/api/v1/fixtures/items/1?kind=a&kind=b', key);
  t.is(response.status, 422);
  t.deepEqual(response.body.error.details.errors.kind, ['Must be given once.']);
});

test('authentication comes before validation', async (t) => {
  const response = await handles.api.get('/api/v1/fixtures/items/abc?page=0');
  t.is(response.status, 401);
});

test('per_page above the plan cap is a 422, never clamped', async (t) => {
  const response = await handles.api.get('/api/v1/fixtures/items/1?per_page=101', key);
  t.is(response.status, 422);
  t.is(response.body.error.message, 'The request parameters are invalid.');
  t.deepEqual(response.body.error.details.errors.per_page, ['The per page must not be greater than 100.']);
  t.is((await handles.api.get('/api/v1/fixtures/items/1?per_page=100', key)).status, 200);
  const starter = await handles.api.key({ plan: 'starter' });
  t.is((await handles.api.get('/api/v1/fixtures/items/1?per_page=101', starter)).status, 200);
  const over = await handles.api.get('/api/v1/fixtures/items/1?per_page=251', starter);
  t.is(over.status, 422);
  t.deepEqual(over.body.error.details.errors.per_page, ['The per page must not be greater than 250.']);
  t.is(over.headers.get('x-quota-used'), '1', 'a refused per_page costs nothing');
});

test('the pagination envelope has links and meta', async (t) => {
  const response = await handles.api.get('/api/v1/fixtures/items/1?page=2&per_page=10&kind=a', key);
  t.is(response.status, 200);
  t.deepEqual(response.body.data.map((item: { n: number }) => item.n), [11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
  t.deepEqual(response.body.meta, { current_page: 2, from: 11, last_page: 3, per_page: 10, to: 20, total: 25 });
  // absolute, as the reference's links are
  const base = handles.api.base;
  t.is(response.body.links.next, `${base}/api/v1/fixtures/items/1?page=3&per_page=10&kind=a`);
  t.is(response.body.links.prev, `${base}/api/v1/fixtures/items/1?page=1&per_page=10&kind=a`);
  t.is(response.body.links.first, `${base}/api/v1/fixtures/items/1?page=1&per_page=10&kind=a`);
  t.is(response.body.links.last, `${base}/api/v1/fixtures/items/1?page=3&per_page=10&kind=a`);
  const last = await handles.api.get('/api/v1/fixtures/items/1?page=3&per_page=10', key);
  t.is(last.body.links.next, null);
  t.is(last.body.meta.to, 25);
});

const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'data.example.com' };

test('pagination links ignore X-Forwarded-Proto/Host without TRUST_PROXY', async (t) => {
  const response = await handles.api.get('/api/v1/fixtures/items/1?per_page=10', key, forwarded);
  t.is(response.body.links.next, `${handles.api.base}/api/v1/fixtures/items/1?per_page=10&page=2`);
});

test('pagination links take X-Forwarded-Proto/Host with TRUST_PROXY, and PUBLIC_URL over both', async (t) => {
  const proxied = await testApi(handles.db, { routes: fixtureRoutes, env: { TRUST_PROXY: 'true' } });
  const configured = await testApi(handles.db, { routes: fixtureRoutes, env: { TRUST_PROXY: 'true', PUBLIC_URL: 'https://api.example.org/market/' } });
  try {
    const behind = await proxied.get('/api/v1/fixtures/items/1?per_page=10&page=2', key, forwarded);
    t.deepEqual(behind.body.links, {
      first: 'https://data.example.com/api/v1/fixtures/items/1?per_page=10&page=1',
      last: 'https://data.example.com/api/v1/fixtures/items/1?per_page=10&page=3',
      prev: 'https://data.example.com/api/v1/fixtures/items/1?per_page=10&page=1',
      next: 'https://data.example.com/api/v1/fixtures/items/1?per_page=10&page=3',
    });
    const direct = await proxied.get('/api/v1/fixtures/items/1?per_page=10', key);
    t.is(direct.body.links.next, `${proxied.base}/api/v1/fixtures/items/1?per_page=10&page=2`, 'no forwarded headers: the request itself');
    const fixed = await configured.get('/api/v1/fixtures/items/1?per_page=10&page=3', key, forwarded);
    t.is(fixed.body.links.first, 'https://api.example.org/market/api/v1/fixtures/items/1?per_page=10&page=1');
    t.is(fixed.body.links.prev, 'https://api.example.org/market/api/v1/fixtures/items/1?per_page=10&page=2');
    t.is(fixed.body.links.next, null);
  } finally {
    await proxied.close();
    await configured.close();
  }
});

test('every success envelope has meta, {} when the handler gives none; a handler’s own meta is kept', async (t) => {
  const created = await handles.api.request('POST', '/api/v1/fixtures/echo', { key, headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' });
  t.is(created.status, 201);
  t.deepEqual(created.body, { data: { name: 'x' }, meta: {} });
  const window = await handles.api.get('/api/v1/fixtures/window', key);
  t.deepEqual(window.body, { data: { period: 14 }, meta: {} });
  const usage = await handles.api.get('/api/v1/usage', key);
  t.truthy(usage.body.meta.note);
});

test('an unknown route is a 404 envelope', async (t) => {
  const response = await handles.api.get('/api/v1/no/such/thing', key);
  t.is(response.status, 404);
  t.is(response.body.error.code, 'not_found');
});

test('a SQL function’s own error code maps to its HTTP status', async (t) => {
  const response = await handles.api.get('/api/v1/fixtures/missing', key);
  t.is(response.status, 404);
  t.is(response.body.error.code, 'not_found');
});

test('an unexpected failure is a 500 without stack trace or SQL', async (t) => {
  const response = await handles.api.get('/api/v1/fixtures/crash', key);
  t.is(response.status, 500);
  t.is(response.body.error.code, 'server_error');
  const text = JSON.stringify(response.body);
  t.false(text.includes('no_such_table_anywhere'));
  t.false(/at .*\.ts:\d+/.test(text));
});

test('bodies are validated, and oversized or malformed bodies get a clear 4xx', async (t) => {
  const json = { 'content-type': 'application/json' };
  const created = await handles.api.request('POST', '/api/v1/fixtures/echo', { key, headers: json, body: JSON.stringify({ name: 'ok' }) });
  t.is(created.status, 201);
  t.deepEqual(created.body.data, { name: 'ok' });
  const invalid = await handles.api.request('POST', '/api/v1/fixtures/echo', { key, headers: json, body: JSON.stringify({ name: '' }) });
  t.is(invalid.status, 422);
  t.deepEqual(Object.keys(invalid.body.error.details.errors), ['name']);
  const large = await handles.api.request('POST', '/api/v1/fixtures/echo', { key, headers: json, body: JSON.stringify({ name: 'x'.repeat(5000) }) });
  t.is(large.status, 413);
  t.is(large.body.error.code, 'payload_too_large');
  const broken = await handles.api.request('POST', '/api/v1/fixtures/echo', { key, headers: json, body: '{"name": ' });
  t.is(broken.status, 400);
  t.true(isEnvelope(broken.body));
});

test('oversized headers get a 431 envelope', async (t) => {
  const { port } = handles.api.server.address() as { port: number };
  const response = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: '/api/v1/ping', headers: { 'x-padding': 'x'.repeat(20_000) } }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    request.on('error', reject);
    request.end();
  });
  t.is(response.status, 431);
  t.is(JSON.parse(response.body).error.code, 'headers_too_large');
  t.regex(String(response.headers['x-request-id']), /^[0-9a-f-]{36}$/, 'a request id, like every response');
});

test('a request that cannot be parsed gets a 400 envelope with a request id', async (t) => {
  const { port } = handles.api.server.address() as { port: number };
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end('NOT A REQUEST\r\n\r\n'));
    let text = '';
    socket.on('data', (chunk) => (text += chunk));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
  const [head, body] = raw.split('\r\n\r\n');
  t.regex(head!, /^HTTP\/1\.1 400 /);
  t.regex(head!, /\r\nX-Request-Id: [0-9a-f-]{36}\r\n/);
  t.is(JSON.parse(body!).error.code, 'bad_request');
});

test('an idle keep-alive connection stays open past the clients\' own idle limit (fetch\'s 4 s) and serves the next request', async (t) => {
  const { port } = handles.api.server.address() as { port: number };
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  let text = '';
  let closedAt: number | null = null;
  socket.on('data', (chunk) => (text += chunk));
  socket.on('close', () => (closedAt = Date.now()));
  const ping = `GET /api/v1/ping HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n\r\n`;
  const answers = async (n: number) => {
    for (let waited = 0; (text.match(/HTTP\/1\.1 200 /g) ?? []).length < n && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  try {
    socket.write(ping);
    await answers(1);
    t.is((text.match(/HTTP\/1\.1 200 /g) ?? []).length, 1, 'the first request answered');
    // Node's default keep-alive wait was 5 s (and a 1 s margin): past it the server closed, racing a client that sends then
    const idle = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 7_500));
    t.is(closedAt, null, `the server closed the idle connection after ${closedAt === null ? 0 : closedAt - idle} ms`);
    socket.write(ping);
    await answers(2);
    t.is((text.match(/HTTP\/1\.1 200 /g) ?? []).length, 2, 'the second request, on the same connection, answered');
  } finally {
    socket.destroy();
  }
});

test('a body that is valid JSON but not an object says so', async (t) => {
  const json = { 'content-type': 'application/json' };
  for (const body of ['42', 'true', '"x"', '[1]', 'null', '[]']) {
    const response = await handles.api.request('POST', '/api/v1/fixtures/echo', { key, headers: json, body });
    t.is(response.status, 400, body);
    t.true(isEnvelope(response.body), body);
    t.is(response.body.error.code, 'invalid_body', body);
    t.is(response.body.error.message, 'The request body must be a JSON object.', body);
  }
  const broken = await handles.api.request('POST', '/api/v1/fixtures/echo', { key, headers: json, body: '{"name": ' });
  t.is(broken.body.error.code, 'invalid_json', 'JSON that does not parse is still called that');
  const empty = await handles.api.request('POST', '/api/v1/fixtures/echo', { key, headers: json });
  t.is(empty.status, 422, 'no body at all: the schema names the missing fields');
  t.deepEqual(Object.keys(empty.body.error.details.errors), ['name']);
});

test('every response has a request id, and a sane incoming one is echoed', async (t) => {
  const generated = await handles.api.get('/api/v1/ping', key);
  t.regex(generated.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/);
  const echoed = await handles.api.get('/api/v1/ping', key, { 'x-request-id': 'trace-123' });
  t.is(echoed.headers.get('x-request-id'), 'trace-123');
  const replaced = await handles.api.get('/api/v1/ping', key, { 'x-request-id': 'bad id with spaces' });
  t.not(replaced.headers.get('x-request-id'), 'bad id with spaces');
});

test('a SQL function refusing a parameter names it: MD422 with its column is a 422 validation error of that field', async (t) => {
  const { sql } = handles.db;
  const cases: [Promise<unknown>, string][] = [
    [sql`select market.fx_rate('XYZ')`, 'convert'],
    [sql`select api.coin_list(p_sort => array['rank', 'name', 'price', 'marketcap', 'volume', 'change_24h', 'symbol'])`, 'sort'],
    [sql`select api.coin_list(p_page => 0)`, 'page'],
    [sql`select api.convert('bitcoin', array[]::text[])`, 'to'],
    [sql`select api.profit_loss_prices('bitcoin', '2025-02-01', '2025-01-01')`, 'sell_date'],
    [sql`select market.check_calculator_date('start', '2001-01-01')`, 'start'],
  ];
  for (const [call, field] of cases) {
    const error = await t.throwsAsync(call, undefined, field);
    const mapped = toApiError(error);
    t.is(mapped.status, 422, field);
    t.is(mapped.code, 'validation', field);
    t.deepEqual(Object.keys((mapped.details as { errors: object }).errors), [field]);
  }
});

test('JSON answers carry the security headers of an API, pages those of a browser document', async (t) => {
  const k = await handles.api.key({ plan: 'free' });
  for (const response of [await handles.api.get('/api/v1/fixtures/items/1', k), await handles.api.get('/api/v1/no-such-route', k)]) {
    t.is(response.headers.get('content-security-policy'), "default-src 'none';frame-ancestors 'none'");
    t.is(response.headers.get('x-frame-options'), 'DENY');
    t.is(response.headers.get('x-content-type-options'), 'nosniff');
    t.regex(response.headers.get('strict-transport-security')!, /^max-age=\d+/);
    // only a rendered document has a use for these
    for (const name of ['referrer-policy', 'x-dns-prefetch-control', 'cross-origin-opener-policy', 'origin-agent-cluster', 'x-xss-protection']) {
      t.is(response.headers.get(name), null, name);
    }
  }
  const page = await handles.api.get('/status', null);
  t.is(page.status, 200);
  t.regex(page.headers.get('content-security-policy')!, /default-src 'self'/);
  t.is(page.headers.get('referrer-policy'), 'no-referrer');
  t.is(page.headers.get('x-frame-options'), 'SAMEORIGIN');
  t.is(page.headers.get('cross-origin-opener-policy'), 'same-origin');
});
