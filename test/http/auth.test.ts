// Authentication: the 401 cases, and failed attempts limited per key and per client address
// without one client's bad key locking out another client behind the same address, and a valid
// key never refused for other keys' failures.
import test from 'ava';
import { revokeKey } from '../../src/keys.ts';
import { awayFromMinuteBoundary, useApi } from '../helpers/http.ts';

const handles = useApi(test, { env: { TRUST_PROXY: 'true', AUTH_FAILURES_PER_KEY: '3', AUTH_FAILURES_PER_CLIENT: '6' } });

const from = (address: string, authorization?: string) =>
  handles.api.get('/api/v1/ping', null, { 'x-forwarded-for': address, ...(authorization ? { authorization } : {}) });

const bogusKey = (n: number) => `mdk_${String(n).padStart(43, 'x')}`;

test.serial('a valid data-api key is admitted', async (t) => {
  const key = await handles.api.key();
  const response = await from('10.0.0.1', `Bearer ${key}`);
  t.is(response.status, 200);
  t.deepEqual(response.body.data, { status: 'ok', plan: 'free' });
});

test.serial('missing, malformed, unknown, revoked and wrong-scope keys get the 401 envelope', async (t) => {
  const revoked = await handles.api.key();
  await revokeKey(handles.db.sql, revoked.slice(0, 12));
  const mcpKey = await handles.api.key({ scope: 'mcp' });
  const cases: Record<string, string | undefined> = {
    missing: undefined,
    'not bearer': `Basic ${Buffer.from('a:b').toString('base64')}`,
    malformed: 'Bearer',
    unknown: `Bearer ${bogusKey(1)}`,
    revoked: `Bearer ${revoked}`,
    'mcp scope': `Bearer ${mcpKey}`,
  };
  for (const [name, header] of Object.entries(cases)) {
    const response = await from(`10.1.0.${Object.keys(cases).indexOf(name)}`, header);
    t.is(response.status, 401, name);
    t.is(response.body.error.code, 'unauthorized', name);
    t.is(typeof response.body.error.message, 'string', name);
    t.deepEqual(response.body.error.details, {}, name);
    t.is(response.headers.get('x-quota-limit'), null, `${name}: no quota headers without a key`);
  }
});

test.serial('a key that keeps failing is refused with 429 while a good key behind the same address works', async (t) => {
  await awayFromMinuteBoundary();
  const address = '10.2.0.1';
  const bad = `Bearer ${bogusKey(2)}`;
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await from(address, bad)).status);
  t.deepEqual(statuses, [401, 401, 401, 429, 429]);
  const limited = await from(address, bad);
  t.is(limited.body.error.code, 'rate_limited');
  t.truthy(Number(limited.headers.get('retry-after')) > 0);
  const good = await from(address, `Bearer ${await handles.api.key()}`);
  t.is(good.status, 200, 'refused attempts are not counted against the address');
  t.is((await from(address, `Bearer ${bogusKey(3)}`)).status, 401, 'another client’s bad key is still only a 401');
});

test.serial('an address trying many different keys is refused, other addresses are not', async (t) => {
  await awayFromMinuteBoundary();
  const address = '10.3.0.1';
  const statuses = [];
  for (let i = 0; i < 8; i++) statuses.push((await from(address, `Bearer ${bogusKey(100 + i)}`)).status);
  t.deepEqual(statuses, [401, 401, 401, 401, 401, 401, 429, 429]);
  // Was 429: the address limit refused good keys too (issue 11, item 6). It only slows failures down.
  t.is((await from(address, `Bearer ${await handles.api.key()}`)).status, 200, 'a valid key is never refused for other keys’ failures');
  t.is((await from(address, `Bearer ${bogusKey(200)}`)).status, 429, 'the address is still over its limit for failures');
  t.is((await from('10.3.0.2', `Bearer ${bogusKey(201)}`)).status, 401, 'other addresses are not');
});

test.serial('200 bad keys from one address do not lock out a good key from it', async (t) => {
  await awayFromMinuteBoundary(30);
  const address = '10.4.0.1';
  const good = `Bearer ${await handles.api.key()}`;
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await from(address, `Bearer ${bogusKey(1000 + i)}`)).status);
  // Over the limit, attempts are no longer counted: the rest can go ten at a time.
  for (let i = 6; i < 200; i += 10) {
    const batch = Array.from({ length: Math.min(10, 200 - i) }, (_, j) => from(address, `Bearer ${bogusKey(1000 + i + j)}`));
    statuses.push(...(await Promise.all(batch)).map((response) => response.status));
  }
  t.deepEqual(statuses, [...Array(6).fill(401), ...Array(194).fill(429)]);
  const admitted = await from(address, good);
  t.is(admitted.status, 200);
  t.is(admitted.headers.get('x-quota-used'), '1', 'and it is counted as an ordinary request');
  const still = await from(address, `Bearer ${bogusKey(2000)}`);
  t.is(still.status, 429, 'further failures from the address are still slowed down');
  t.is(still.body.error.code, 'rate_limited');
  t.truthy(Number(still.headers.get('retry-after')) > 0);
  const missing = await from(address);
  t.is(missing.status, 429, 'so is a request without a key');
});
