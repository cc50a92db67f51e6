// Plans, quota and rate limit: the plan gate costs nothing, the headers are on every keyed
// response, and the limits answer 429 with Retry-After.
import test from 'ava';
import { awayFromMinuteBoundary, useApi } from '../helpers/http.ts';
import { fixtureRoutes } from './fixtures.ts';
import { poll, sleep } from '../../dev/wait.ts';

const handles = useApi(test, { routes: fixtureRoutes });

const used = (response: { headers: Headers }) => Number(response.headers.get('x-quota-used'));

test.serial('plans come from a table with the figures of the design', async (t) => {
  const plans = await handles.db.sql`select name, monthly_quota::int, requests_per_minute, per_page_cap from app.plans where scope = 'data-api' order by rank`;
  t.deepEqual([...plans].map((plan) => ({ ...plan })), [
    { name: 'free', monthly_quota: 10000, requests_per_minute: 30, per_page_cap: 100 },
    { name: 'starter', monthly_quota: 100000, requests_per_minute: 120, per_page_cap: 250 },
    { name: 'pro', monthly_quota: 1000000, requests_per_minute: 600, per_page_cap: 250 },
  ]);
});

test.serial('every keyed success carries the quota and rate-limit headers', async (t) => {
  const key = await handles.api.key({ plan: 'starter' });
  const first = await handles.api.get('/api/v1/ping', key);
  const second = await handles.api.get('/api/v1/ping', key);
  t.is(first.headers.get('x-quota-limit'), '100000');
  t.is(used(first), 1);
  t.is(used(second), 2);
  t.is(first.headers.get('x-quota-remaining'), String(100000 - 1));
  // Unix epoch seconds of the next first of the month, UTC
  const now = new Date();
  t.is(first.headers.get('x-quota-reset'), String(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000));
  t.is(first.headers.get('x-ratelimit-limit'), '120');
  // the second request spends one more of the minute's allowance, unless a new minute began between them
  const [remaining1, remaining2] = [first, second].map((response) => Number(response.headers.get('x-ratelimit-remaining')));
  t.true(remaining2! < remaining1! || remaining2 === 120 - 1, `${remaining1} then ${remaining2}`);
  const resetSeconds = Number(first.headers.get('x-ratelimit-reset'));
  t.true(resetSeconds >= 1 && resetSeconds <= 60);
});

test.serial('a route above the key’s plan answers 403 plan_required and consumes no quota', async (t) => {
  const key = await handles.api.key({ plan: 'starter' });
  const before = used(await handles.api.get('/api/v1/ping', key));
  const refused = await handles.api.get('/api/v1/fixtures/pro', key);
  t.is(refused.status, 403);
  t.deepEqual(refused.body.error.details, { required_plan: 'pro' });
  t.is(refused.body.error.code, 'plan_required');
  t.is(refused.body.error.message, 'This endpoint requires the Pro plan or higher.');
  t.is(used(refused), before, 'quota headers present and unchanged');
  t.is(used(await handles.api.get('/api/v1/ping', key)), before + 1);
  const pro = await handles.api.key({ plan: 'pro' });
  t.is((await handles.api.get('/api/v1/fixtures/pro', pro)).status, 200);
});

test.serial('a plan that depends on a parameter is checked against the parameter', async (t) => {
  const key = await handles.api.key({ plan: 'free' });
  t.is((await handles.api.get('/api/v1/fixtures/window?period=14', key)).status, 200);
  const refused = await handles.api.get('/api/v1/fixtures/window?period=28', key);
  t.is(refused.status, 403);
  t.is(refused.body.error.details.required_plan, 'starter');
});

test.serial('several plans required at once: the highest by app.plans.rank must be met, whichever admission path', async (t) => {
  const { testApi } = await import('../helpers/http.ts');
  const exact = await testApi(handles.db, { routes: fixtureRoutes, env: { ADMISSION_FLUSH_MS: '0' } });
  try {
    for (const api of [handles.api, exact]) {
      const starter = await api.key({ plan: 'starter' });
      const pro = await api.key({ plan: 'pro' });
      t.is((await api.get('/api/v1/fixtures/both?period=14', starter)).status, 200);
      const refused = await api.get('/api/v1/fixtures/both?period=28', starter);
      t.is(refused.status, 403);
      t.deepEqual(refused.body.error.details, { required_plan: 'pro' });
      t.is((await api.get('/api/v1/fixtures/both?period=28', pro)).status, 200);
    }
    // the ranks are the table's: with starter ranked above pro, the pro key is the one refused
    await handles.db.sql`update app.plans set rank = 50 where name = 'starter'`;
    for (const api of [handles.api, exact]) {
      const pro = await api.key({ plan: 'pro' });
      // the batched path hears of the plan change by NOTIFY
      const refused = await poll(() => api.get('/api/v1/fixtures/both?period=28', pro), (answer) => answer.status !== 200, { timeoutMs: 1000, everyMs: 50 });
      t.is(refused.status, 403);
      t.deepEqual(refused.body.error.details, { required_plan: 'starter' });
    }
  } finally {
    await handles.db.sql`update app.plans set rank = 2 where name = 'starter'`;
    await exact.close();
  }
});

test.serial('the monthly quota runs out with 429 quota_exceeded and Retry-After', async (t) => {
  await handles.db.sql`insert into app.plans (name, rank, monthly_quota, requests_per_minute, per_page_cap) values ('tiny', 10, 3, 100, 10)`;
  const key = await handles.api.key({ plan: 'tiny' as never });
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await handles.api.get('/api/v1/ping', key)).status);
  t.deepEqual(statuses, [200, 200, 200, 429, 429]);
  const over = await handles.api.get('/api/v1/ping', key);
  t.is(over.body.error.code, 'quota_exceeded');
  t.is(used(over), 3);
  t.true(Number(over.headers.get('retry-after')) > 0);
  // the process writes its counts every ADMISSION_FLUSH_MS (200 ms by default)
  await sleep(600);
  const [row] = await handles.db.sql`select used::int from app.usage_monthly u join app.api_keys k on k.id = u.key_id where k.plan = 'tiny'`;
  t.is(row!.used, 3, 'refused requests are not counted');
});

test.serial('the per-minute rate limit answers 429 rate_limited with Retry-After', async (t) => {
  await handles.db.sql`insert into app.plans (name, rank, monthly_quota, requests_per_minute, per_page_cap) values ('slow', 11, 1000, 2, 10)`;
  const key = await handles.api.key({ plan: 'slow' as never });
  await awayFromMinuteBoundary();
  const responses = [];
  for (let i = 0; i < 3; i++) responses.push(await handles.api.get('/api/v1/ping', key));
  t.deepEqual(responses.map((response) => response.status), [200, 200, 429]);
  t.is(responses[1]!.headers.get('x-ratelimit-remaining'), '0');
  const limited = responses[2]!;
  t.is(limited.body.error.code, 'rate_limited');
  const retry = Number(limited.headers.get('retry-after'));
  t.true(retry >= 1 && retry <= 60);
  t.is(used(limited), 2, 'a rate-limited request costs no quota');
});

test.serial('concurrent requests are all counted (several processes share the database counters)', async (t) => {
  const key = await handles.api.key({ plan: 'pro' });
  await Promise.all(Array.from({ length: 20 }, () => handles.api.get('/api/v1/ping', key)));
  t.is(used(await handles.api.get('/api/v1/ping', key)), 21);
});

test.serial('usage reports the same figures as the headers', async (t) => {
  const key = await handles.api.key({ plan: 'starter', owner: 'usage-owner' });
  await handles.api.get('/api/v1/ping', key);
  const response = await handles.api.get('/api/v1/usage', key);
  t.is(response.status, 200);
  const data = response.body.data;
  t.is(data.plan, 'starter');
  t.is(data.limit, 100000);
  t.is(data.used, used(response));
  t.is(data.remaining, 100000 - data.used);
  t.is(data.burst_per_minute, 120);
  t.deepEqual(data.endpoints, [
    { endpoint: 'GET /api/v1/ping', requests: 1 },
    { endpoint: 'GET /api/v1/usage', requests: 1 },
  ]);
  t.is(data.tokens.length, 1);
  t.is(data.tokens[0].requests, 2);
  t.is(data.tokens[0].name, key.slice(0, 12));
  t.regex(data.period_start, /^\d{4}-\d{2}-01$/);
});
