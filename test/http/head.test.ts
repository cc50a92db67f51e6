// An API answer's headers are kept in a list and written with the body in one writeHead
// (src/http/head.ts): every header the response would have had is there, once (or, for Link, once
// per line), on answers written that way, on answers Koa writes (errors, compressed bodies) and on
// HEAD; the list itself replaces a name set twice, whatever its case.
import { request as httpRequest } from 'node:http';
import { gunzipSync } from 'node:zlib';
import test from 'ava';
import Koa, { type Context } from 'koa';
import { z } from 'zod';
import { appendHeader, flushHead, getHeader, openHead, setHeaders } from '../../src/http/head.ts';
import { defineRoute, type RouteSpec } from '../../src/http/routes.ts';
import { useApi } from '../helpers/http.ts';

const big = Array.from({ length: 200 }, (_, index) => ({ index, text: `row ${index} of a body well over the compression threshold` }));
const routes = [
  defineRoute({
    method: 'get', path: '/head/small', operationId: 'headSmall', tag: 'Meta', summary: 'small', plan: 'free',
    query: z.object({ n: z.string().regex(/^\d+$/).optional() }), handler: async () => ({ data: { ok: true } }),
  }),
  defineRoute({ method: 'get', path: '/head/big', operationId: 'headBig', tag: 'Meta', summary: 'big', plan: 'free', query: z.object({}), handler: async () => ({ data: big }) }),
  defineRoute({
    method: 'get', path: '/head/state', operationId: 'headState', tag: 'Meta', summary: 'per key', plan: 'free', query: z.object({}), noStore: true,
    deprecated: { sunset: '2027-06-01', changelog: 'unreleased-changed', since: '2026-11-23' }, handler: async () => ({ data: { ok: true } }),
  }),
] as RouteSpec[];
const handles = useApi(test, { routes });

/** A GET through node:http: the header lines as sent (fetch would merge repeated names) and the raw body. */
function raw(path: string, headers: Record<string, string>, method = 'GET') {
  return new Promise<{ status: number; lines: [string, string][]; body: Buffer }>((resolve, reject) => {
    const request = httpRequest(`${handles.api.base}${path}`, { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const lines: [string, string][] = [];
        for (let i = 0; i < response.rawHeaders.length; i += 2) lines.push([response.rawHeaders[i]!.toLowerCase(), response.rawHeaders[i + 1]!]);
        resolve({ status: response.statusCode!, lines, body: Buffer.concat(chunks) });
      });
    });
    request.on('error', reject);
    request.end();
  });
}
const names = (lines: [string, string][]) => lines.map(([name]) => name);
const value = (lines: [string, string][], name: string) => lines.filter(([listed]) => listed === name).map(([, v]) => v);
const repeated = (lines: [string, string][]) => names(lines).filter((name, index, all) => all.indexOf(name) !== index);

const EVERY_API_ANSWER = ['x-request-id', 'content-security-policy', 'strict-transport-security', 'x-content-type-options', 'x-frame-options', 'vary'];
const QUOTA = ['x-quota-limit', 'x-quota-used', 'x-quota-remaining', 'x-quota-reset', 'ratelimit-policy', 'ratelimit'];

test('an answer written in one call has every header once, its length and its type', async (t) => {
  const key = await handles.api.key();
  const answer = await raw('/api/v1/head/small', { authorization: `Bearer ${key}` });
  t.is(answer.status, 200);
  for (const name of [...EVERY_API_ANSWER, ...QUOTA, 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) t.true(names(answer.lines).includes(name), name);
  t.deepEqual(repeated(answer.lines), []);
  t.deepEqual(value(answer.lines, 'content-length'), [String(answer.body.length)]);
  t.deepEqual(value(answer.lines, 'content-type'), ['application/json; charset=utf-8']);
  t.deepEqual(value(answer.lines, 'vary'), ['Accept-Encoding']);
  t.deepEqual(JSON.parse(answer.body.toString()), { data: { ok: true }, meta: {} });
});

test('a body big enough is compressed as the client asks, through Koa, with the same headers', async (t) => {
  const key = await handles.api.key();
  const plain = await raw('/api/v1/head/big', { authorization: `Bearer ${key}` });
  const gzipped = await raw('/api/v1/head/big', { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip' });
  t.is(plain.status, 200);
  t.is(gzipped.status, 200);
  t.deepEqual(value(plain.lines, 'content-encoding'), []);
  t.deepEqual(value(gzipped.lines, 'content-encoding'), ['gzip']);
  t.deepEqual(JSON.parse(gunzipSync(gzipped.body).toString()), JSON.parse(plain.body.toString()));
  for (const name of [...EVERY_API_ANSWER, ...QUOTA]) t.true(names(gzipped.lines).includes(name), name);
  t.deepEqual(repeated(gzipped.lines), []);
  t.deepEqual(value(gzipped.lines, 'vary'), ['Accept-Encoding']);
});

test('a route\'s own headers join the list: no-store, Deprecation and Sunset once, a Link line', async (t) => {
  const key = await handles.api.key();
  const answer = await raw('/api/v1/head/state', { authorization: `Bearer ${key}` });
  t.is(answer.status, 200);
  t.deepEqual(value(answer.lines, 'cache-control'), ['no-store']);
  t.is(value(answer.lines, 'deprecation').length, 1);
  t.is(value(answer.lines, 'sunset').length, 1);
  t.regex(value(answer.lines, 'link').join('\n'), /rel="deprecation"/);
  t.deepEqual(repeated(answer.lines), []);
});

test('errors and unknown paths keep the request id, the security headers and the quota headers', async (t) => {
  const key = await handles.api.key();
  for (const [path, status] of [['/api/v1/head/small?n=x', 422], ['/api/v1/head/nowhere', 404]] as const) {
    const answer = await raw(path, { authorization: `Bearer ${key}` });
    t.is(answer.status, status, path);
    for (const name of [...EVERY_API_ANSWER, ...QUOTA]) t.true(names(answer.lines).includes(name), `${path}: ${name}`);
    t.deepEqual(repeated(answer.lines), [], path);
    t.is(JSON.parse(answer.body.toString()).error.code, status === 404 ? 'not_found' : 'validation');
  }
  const refused = await raw('/api/v1/head/small', { authorization: 'Bearer mdk_not-a-key' });
  t.is(refused.status, 401);
  t.deepEqual(value(refused.lines, 'www-authenticate'), ['Bearer']);
  for (const name of EVERY_API_ANSWER) t.true(names(refused.lines).includes(name), name);
});

test('HEAD gets the GET\'s headers and length, without a body', async (t) => {
  const key = await handles.api.key();
  const get = await raw('/api/v1/head/small', { authorization: `Bearer ${key}` });
  const head = await raw('/api/v1/head/small', { authorization: `Bearer ${key}` }, 'HEAD');
  t.is(head.status, 200);
  t.is(head.body.length, 0);
  t.deepEqual(value(head.lines, 'content-length'), value(get.lines, 'content-length'));
  t.deepEqual(repeated(head.lines), []);
});

test('the list: a name set again is replaced whatever its case, appended lines stay, flushing sets them on the response', (t) => {
  const ctx = new Koa().createContext({ headers: {}, socket: {} } as never, { getHeader: () => undefined, setHeader: () => {} } as never) as Context;
  const set: [string, string][] = [];
  (ctx.res as unknown as { appendHeader: (name: string, value: string) => void }).appendHeader = (name, value) => void set.push([name, value]);
  openHead(ctx, ['X-Request-Id', 'one', 'Vary', 'Accept-Encoding']);
  setHeaders(ctx, ['cache-control', 'no-store', 'X-REQUEST-ID', 'two']);
  setHeaders(ctx, ['Cache-Control', 'private']);
  appendHeader(ctx, 'Link', '<a>');
  appendHeader(ctx, 'Link', '<b>');
  t.is(getHeader(ctx, 'x-request-id'), 'two');
  t.is(getHeader(ctx, 'CACHE-CONTROL'), 'private');
  t.is(getHeader(ctx, 'X-Missing'), undefined);
  flushHead(ctx);
  t.deepEqual(set, [['X-Request-Id', 'two'], ['Vary', 'Accept-Encoding'], ['cache-control', 'private'], ['Link', '<a>'], ['Link', '<b>']]);
  // flushed once: the list is closed, later headers go to the response directly
  flushHead(ctx);
  t.is(set.length, 5);
});
