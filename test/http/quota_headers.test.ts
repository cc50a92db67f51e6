// The quota headers as the reference service's official client reads them (remaining a number,
// reset Unix epoch seconds), the IETF RateLimit fields beside them, and their presence on every
// response to a request with a valid key, including those answered before admission.
import { request as httpRequest } from 'node:http';
import test from 'ava';
import { useApi, type TestResponse } from '../helpers/http.ts';
import { fixtureRoutes } from './fixtures.ts';

const handles = useApi(test, { routes: fixtureRoutes, env: { MAX_BODY_BYTES: '2048' } });

/** What the official client makes of a response: its quota object. */
function clientQuota(headers: Headers) {
  const number = (name: string) => (headers.get(name) === null ? null : Number(headers.get(name)));
  return {
    limit: number('x-quota-limit'),
    used: number('x-quota-used'),
    remaining: number('x-quota-remaining'),
    reset: new Date(Number(headers.get('x-quota-reset')) * 1000),
  };
}

/** A structured-field list of items with parameters, as RateLimit-Policy and RateLimit are. */
function parseList(value: string | null): Record<string, Record<string, number>> {
  const items: Record<string, Record<string, number>> = {};
  for (const member of (value ?? '').split(',').map((part) => part.trim()).filter(Boolean)) {
    const [name, ...params] = member.split(';');
    items[JSON.parse(name!)] = Object.fromEntries(params.map((param) => param.split('=')).map(([k, v]) => [k!, Number(v)]));
  }
  return items;
}

test.serial('the official client reads a number remaining and a future reset from the headers', async (t) => {
  const key = await handles.api.key({ plan: 'free' });
  const first = clientQuota((await handles.api.get('/api/v1/ping', key)).headers);
  const second = clientQuota((await handles.api.get('/api/v1/ping', key)).headers);
  t.deepEqual([first.limit, first.used, first.remaining], [10000, 1, 9999]);
  t.is(second.remaining, first.remaining! - 1);
  t.false(Number.isNaN(first.reset.getTime()), 'reset parses as epoch seconds');
  t.true(first.reset.getTime() > Date.now(), 'and lies in the future');
  t.true(first.reset.getTime() - Date.now() <= 31 * 86400_000, 'within a month');
  t.is(first.reset.getUTCDate(), 1, 'the first of a month');
  t.is(first.reset.getUTCHours() + first.reset.getUTCMinutes() + first.reset.getUTCSeconds(), 0, 'at midnight UTC');
});

test.serial('RateLimit-Policy and RateLimit state the minute and month policies beside X-RateLimit-*', async (t) => {
  const key = await handles.api.key({ plan: 'starter' });
  const response = await handles.api.get('/api/v1/ping', key);
  const policy = parseList(response.headers.get('ratelimit-policy'));
  const current = parseList(response.headers.get('ratelimit'));
  t.deepEqual(policy, { minute: { q: 120, w: 60 }, month: { q: 100000 } });
  t.is(current.minute!.r, Number(response.headers.get('x-ratelimit-remaining')));
  t.is(current.minute!.t, Number(response.headers.get('x-ratelimit-reset')));
  t.is(current.month!.r, Number(response.headers.get('x-quota-remaining')));
  const secondsToReset = Number(response.headers.get('x-quota-reset')) - Date.now() / 1000;
  t.true(Math.abs(current.month!.t! - secondsToReset) <= 2, `${current.month!.t} ≈ ${secondsToReset}`);
});

/** A request with headers of about `bytes` bytes, over a raw connection (fetch would refuse none of it, but keep it exact). */
function withPadding(key: string, bytes: number) {
  const { port } = handles.api.server.address() as { port: number };
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }>((resolve, reject) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, path: '/api/v1/ping', headers: { authorization: `Bearer ${key}`, 'x-padding': 'x'.repeat(bytes) } },
      (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(body) }));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

test.serial('error responses answered before admission carry the quota headers and cost nothing', async (t) => {
  const key = await handles.api.key({ plan: 'free' });
  const json = { 'content-type': 'application/json' };
  const baseline = clientQuota((await handles.api.get('/api/v1/ping', key)).headers);
  const cases: Record<string, [number, Promise<TestResponse>]> = {
    'unknown route': [404, handles.api.get('/api/v1/no/such/route', key)],
    'invalid JSON': [400, handles.api.request('POST', '/api/v1/fixtures/echo', { key, headers: json, body: '{"name": ' })],
    'oversized body': [413, handles.api.request('POST', '/api/v1/fixtures/echo', { key, headers: json, body: JSON.stringify({ name: 'x'.repeat(5000) }) })],
    'invalid parameter': [422, handles.api.get('/api/v1/fixtures/items/abc', key)],
    'plan gate': [403, handles.api.get('/api/v1/fixtures/pro', key)],
  };
  for (const [name, [status, pending]] of Object.entries(cases)) {
    const response = await pending;
    t.is(response.status, status, name);
    t.is(typeof response.body.error.code, 'string', `${name}: the error envelope`);
    const quota = clientQuota(response.headers);
    t.deepEqual([quota.limit, quota.used, quota.remaining], [10000, baseline.used, baseline.remaining], `${name}: quota headers, nothing spent`);
    t.is(quota.reset.getTime(), baseline.reset.getTime(), name);
    t.deepEqual(parseList(response.headers.get('ratelimit-policy')).month, { q: 10000 }, name);
  }

  const tooLarge = await withPadding(key, 20_000);
  t.is(tooLarge.status, 431);
  t.is(tooLarge.body.error.code, 'headers_too_large');
  t.is(tooLarge.headers['x-quota-remaining'], String(baseline.remaining));
  t.is(tooLarge.headers['x-quota-reset'], String(baseline.reset.getTime() / 1000));
  // Beyond what the server parses at all, the request is never read: still the envelope, no key to look up.
  const unread = await withPadding(key, 70_000);
  t.is(unread.status, 431);
  t.is(unread.body.error.code, 'headers_too_large');
  t.is(unread.headers['x-quota-limit'], undefined);

  t.is(clientQuota((await handles.api.get('/api/v1/ping', key)).headers).used, baseline.used! + 1, 'none of them was counted');
});

test.serial('an unknown route with a wrong key or none stays a 404 without quota headers', async (t) => {
  for (const key of [null, 'mdk_not_a_real_key_at_all']) {
    const response = await handles.api.get('/api/v1/no/such/route', key);
    t.is(response.status, 404);
    t.is(response.body.error.code, 'not_found');
    t.is(response.headers.get('x-quota-limit'), null);
    t.is(response.headers.get('ratelimit'), null);
  }
});

test('the OpenAPI document declares the quota and rate-limit headers on success and error responses', async (t) => {
  const document = (await handles.api.get('/api/v1/openapi.json', await handles.api.key())).body;
  const ping = document.paths['/api/v1/ping'].get;
  for (const status of ['200', '404', '429']) {
    const names = Object.keys(ping.responses[status].headers ?? {});
    for (const name of ['X-Quota-Limit', 'X-Quota-Used', 'X-Quota-Remaining', 'X-Quota-Reset', 'RateLimit-Policy', 'RateLimit']) {
      t.true(names.includes(name), `${status} ${name}`);
    }
  }
  t.regex(document.components.headers['X-Quota-Reset'].description, /epoch seconds/);
  t.is(document.components.headers['X-Quota-Remaining'].schema.type, 'integer');
});
