// Authentication: the 401 cases, and failed attempts limited per key and per client address
// without one client's bad key locking out another client behind the same address.
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
  t.is((await from(address, `Bearer ${await handles.api.key()}`)).status, 429, 'the address is over its limit');
  t.is((await from('10.3.0.2', `Bearer ${await handles.api.key()}`)).status, 200);
});
