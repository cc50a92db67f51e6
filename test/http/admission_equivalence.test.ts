// One admission decision, written twice: app.admit (sql/functions/010_admission.sql), asked once per
// request when ADMISSION_FLUSH_MS=0, and AdmissionBatcher's in-process copy
// (src/http/admission-batch.ts), which decides a cached key's requests without a round trip (the
// default, and the reason it exists: the admission figures of bench/). Everything around the two is
// shared (routes, the refusal envelope, the headers), so the same requests sent through an app on
// each path over one database must get the same answers. For every plan of app.plans, both key
// scopes: calls within the plan and beyond it, per_page at and over the plan's cap, bad input, an
// unrouted call, the per-minute limit reached, the monthly quota exhausted, the key revoked; and
// missing, unknown and wrong-scope keys up to the failed-attempt limits. Each step's status, error
// code and details and every quota and rate-limit header are compared; the last test proves the
// comparison notices a batched path that decides differently.
import test from 'ava';
import { createKey, hashKey, keyDigest, revokeKey } from '../../src/keys.ts';
import { perPageOverCap } from '../../src/http/errors.ts';
import { PLANS_BY_SCOPE } from '../../src/plans.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { awayFromMinuteBoundary, testApi, type TestApi, type TestResponse } from '../helpers/http.ts';
import { fixtureRoutes } from './fixtures.ts';
import { poll } from '../../dev/wait.ts';

const ENV = { TRUST_PROXY: 'true', AUTH_FAILURES_PER_KEY: '3', AUTH_FAILURES_PER_CLIENT: '8' };

/** Every header admission writes, compared on every step. */
const LIMIT_HEADERS = [
  'x-quota-limit', 'x-quota-used', 'x-quota-remaining', 'x-quota-reset', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset',
  'ratelimit-policy', 'ratelimit', 'retry-after', 'www-authenticate',
];
/**
 * Seconds left of the minute or the month (X-RateLimit-Reset, Retry-After, RateLimit's t=): the two
 * requests of a step are answered at different instants, so these may differ by the whole seconds
 * between them, plus one for a second's turn.
 */
const SECONDS_LEFT = /^(x-ratelimit-reset|retry-after)$/;

interface Plan {
  name: string;
  scope: 'data-api' | 'mcp' | 'widget';
  monthly_quota: number;
  requests_per_minute: number;
  per_page_cap: number;
}

type Call = { get: string } | { tool: string; arguments: Record<string, unknown> } | { mcp: 'tools/list' };
/** A request by the key of a role (null: none; `unknown:…`: a key that does not exist), or the role's key revoked. */
type Step = { who: string | null; call: Call } | { revoke: string };

/** One admission path: an app, its client address (failed attempts count by address) and its keys by role. */
interface Path {
  name: string;
  api: TestApi;
  /** a new one for each sequence: failed attempts of one do not count in the next */
  address: string;
  keys: Map<string, { id: number; key: string }>;
  /** requests the in-process decision answered (the batched path must be the one that ran) */
  decided: number;
}

interface Observed {
  status: number;
  code: string | null;
  details: unknown;
  headers: Record<string, string | null>;
}

let db: TestDatabase;
let exact: Path;
let batched: Path;
let plans: Plan[];
let sequences = 0;

test.before(async () => {
  db = await testDatabase();
  exact = await path('app.admit', { ADMISSION_FLUSH_MS: '0' });
  // no timer flush: the in-process counts are the batched path's own until a step revokes a key
  batched = await path('in-process', { ADMISSION_FLUSH_MS: '60000' });
  plans = [...await db.sql<Plan[]>`
    select name, scope, monthly_quota::int, requests_per_minute, per_page_cap from app.plans order by scope, rank`];
});
test.after.always(async () => {
  await exact?.api.close();
  await batched?.api.close();
  await db?.close();
});

async function path(name: string, env: Record<string, string>, decide?: (original: Decide) => Decide): Promise<Path> {
  const api = await testApi(db, { routes: fixtureRoutes, env: { ...ENV, ...env } });
  const result: Path = { name, api, address: '', keys: new Map(), decided: 0 };
  const batcher = api.app.admission as unknown as { listening: boolean; decide: Decide } | null;
  if (batcher) {
    // until its LISTEN is in place the batcher leaves every request to app.admit: wait, so that its own decision is what runs
    await poll(() => batcher.listening, Boolean, { timeoutMs: 5000, everyMs: 10 });
    const original = batcher.decide.bind(batcher);
    const deciding = decide ? decide(original) : original;
    batcher.decide = (entry, route, now) => {
      result.decided++;
      return deciding(entry, route, now);
    };
  }
  return result;
}
type Decide = (entry: { rateLimit: number }, route: unknown, now: number) => unknown;

/** A bogus key per path and name: the failed attempts of one path's key do not count against the other's. */
const unknownKey = (path: Path, name: string) => `mdk_${`${path.address}-${name}`.replace(/\W/g, 'x').padEnd(43, 'u')}`;

async function send(path: Path, who: string | null, call: Call): Promise<Observed> {
  const key = who === null ? null : who.startsWith('unknown:') ? unknownKey(path, who) : path.keys.get(who)!.key;
  const headers: Record<string, string> = { 'x-forwarded-for': path.address, ...(key ? { authorization: `Bearer ${key}` } : {}) };
  const response: TestResponse = 'get' in call
    ? await path.api.get(call.get, null, headers)
    : await path.api.request('POST', '/mcp', {
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...('tool' in call ? { method: 'tools/call', params: { name: call.tool, arguments: call.arguments } } : { method: call.mcp }) }),
    });
  // a refused tool call is a tool result carrying the error envelope
  const result = response.body?.result;
  const error = result?.isError ? JSON.parse(result.content[0].text).error : response.body?.error;
  return {
    status: response.status,
    code: error?.code ?? null,
    details: error?.details ?? null,
    headers: Object.fromEntries(LIMIT_HEADERS.map((name) => [name, response.headers.get(name)])),
  };
}

/** What differs between two answers to the same step, `apart` seconds apart at most ([] for none). */
function differences(a: Observed, b: Observed, apart: number): string[] {
  const found: string[] = [];
  if (a.status !== b.status) found.push(`status ${a.status} ≠ ${b.status}`);
  if (a.code !== b.code) found.push(`code ${a.code} ≠ ${b.code}`);
  if (JSON.stringify(a.details) !== JSON.stringify(b.details)) found.push(`details ${JSON.stringify(a.details)} ≠ ${JSON.stringify(b.details)}`);
  for (const name of LIMIT_HEADERS) {
    const [x, y] = [a.headers[name] ?? null, b.headers[name] ?? null];
    if (x !== y && !(x !== null && y !== null && secondsApart(name, x, y, apart))) found.push(`${name}: ${x} ≠ ${y}`);
  }
  return found;
}

/** Two values of a header that are the same but for seconds left differing by `apart` at most. */
function secondsApart(name: string, x: string, y: string, apart: number) {
  if (SECONDS_LEFT.test(name)) return Math.abs(Number(x) - Number(y)) <= apart;
  // RateLimit carries them as t=…
  const [sx, sy] = [x, y].map((value) => (value.match(/(?<=t=)\d+/g) ?? []).map(Number)) as [number[], number[]];
  const rest = (value: string) => value.replace(/(?<=t=)\d+/g, '…');
  return rest(x) === rest(y) && sx.length === sy.length && sx.every((s, i) => Math.abs(s - sy[i]!) <= apart);
}

/** Creates a role's key on both paths, with the same counts already used this minute or month. */
async function keyFor(paths: Path[], role: string, plan: Plan, used: { minute?: number; month?: number } = {}) {
  for (const path of paths) {
    const created = await createKey(db.sql, { plan: plan.name as never, owner: `${path.name} ${role}`, scope: plan.scope as never });
    path.keys.set(role, created);
    if (used.minute !== undefined) {
      await db.sql`insert into app.rate_windows (key_id, window_start, requests) values (${created.id}, date_trunc('minute', now()), ${used.minute})`;
    }
    if (used.month !== undefined) {
      await db.sql`insert into app.usage_monthly (key_id, month, used) values (${created.id}, date_trunc('month', now() at time zone 'utc')::date, ${used.month})`;
    }
  }
}

/**
 * Runs the steps on both paths, each step on one then the other; the differences, one line per
 * differing step, and the first path's answers.
 */
async function compare(paths: [Path, Path], steps: Step[]) {
  sequences++;
  paths.forEach((path, index) => (path.address = `10.${sequences}.0.${index + 1}`));
  const found: string[] = [];
  const answers: Observed[] = [];
  for (const [index, step] of steps.entries()) {
    if ('revoke' in step) {
      for (const path of paths) {
        await revokeKey(db.sql, path.keys.get(step.revoke)!.key.slice(0, 12));
        // the batched path hears of it by NOTIFY, or at the latest at its next flush: made now
        await path.api.app.admission?.flush();
      }
      continue;
    }
    const started = Date.now();
    const [a, b] = [await send(paths[0], step.who, step.call), await send(paths[1], step.who, step.call)];
    answers.push(a);
    const different = differences(a, b, Math.floor((Date.now() - started) / 1000) + 1);
    if (different.length) found.push(`step ${index + 1} (${step.who} ${JSON.stringify(step.call)}): ${different.join('; ')}`);
  }
  return { found, answers };
}
const outcomes = (answers: Observed[]) => answers.map((answer) => `${answer.status} ${answer.code}`);

/** The calls of a plan's scope: within every plan, beyond the lowest, per_page at and over the cap, bad input, unrouted. */
function calls(plan: Plan): { within: Call; beyond: Call[]; pages: Call[]; bad: Call; unrouted: Call } {
  const cap = plan.per_page_cap;
  if (plan.scope === 'mcp') {
    return {
      within: { tool: 'search_coins', arguments: { query: 'alp' } },
      beyond: [{ tool: 'get_coin_technicals', arguments: { slug: 'no-such-coin' } }],
      pages: [{ tool: 'search_coins', arguments: { query: 'alp', per_page: cap } }, { tool: 'search_coins', arguments: { query: 'alp', per_page: cap + 1 } }],
      bad: { tool: 'get_trending_coins', arguments: { limit: 99 } },
      unrouted: { mcp: 'tools/list' },
    };
  }
  return {
    within: { get: '/api/v1/ping' },
    beyond: ['/api/v1/fixtures/window?period=28', '/api/v1/fixtures/pro', '/api/v1/fixtures/both?period=28'].map((get) => ({ get })),
    pages: [{ get: `/api/v1/fixtures/items/1?per_page=${cap}` }, { get: `/api/v1/fixtures/items/1?per_page=${cap + 1}` }],
    bad: { get: '/api/v1/fixtures/items/x' },
    unrouted: { get: '/api/v1/no-such-route' },
  };
}

/**
 * A plan's sequence: a key three requests short of the minute's limit, then one three short of the
 * month's quota, each called within and beyond the plan until refused and after; then the first revoked.
 */
async function planSteps(paths: Path[], plan: Plan): Promise<Step[]> {
  const minute = `${plan.name} minute`;
  const month = `${plan.name} month`;
  await keyFor(paths, minute, plan, { minute: plan.requests_per_minute - 3 });
  await keyFor(paths, month, plan, { month: plan.monthly_quota - 3 });
  const { within, beyond, pages, bad, unrouted } = calls(plan);
  const by = (who: string, ...list: Call[]): Step[] => list.map((call) => ({ who, call }));
  const sequence = (who: string) => by(who, within, ...beyond, ...pages, bad, unrouted, within, within, within, within, ...beyond, bad, unrouted, within);
  return [...sequence(minute), ...sequence(month), { revoke: minute }, ...by(minute, within, unrouted, within, ...beyond)];
}

test.serial('every plan: the same decisions and headers from app.admit and from the in-process decision', async (t) => {
  t.deepEqual(new Set(plans.map((plan) => plan.name)), new Set(Object.values(PLANS_BY_SCOPE).flat()), 'every plan the code names is in app.plans');
  for (const plan of plans) {
    // a plan's sequence stays in one minute window: the one its per-minute count was set in
    await awayFromMinuteBoundary(20);
    const { found, answers } = await compare([exact, batched], await planSteps([exact, batched], plan));
    t.deepEqual(found, [], plan.name);
    // widget keys call no API route: the two paths agree above, and their limits are tested with the widgets (test/widgets)
    if (plan.scope === 'widget') continue;
    // the sequence reached the limits it is there to compare
    const refusals = new Set(outcomes(answers));
    for (const expected of ['rate_limited', 'quota_exceeded', 'unauthorized', 'plan_required', 'validation']) {
      // nothing is beyond the highest plan of a scope
      if (expected === 'plan_required' && plan === plans.findLast((one) => one.scope === plan.scope)) continue;
      t.true([...refusals].some((outcome) => outcome.endsWith(` ${expected}`)), `${plan.name}: ${expected} among ${[...refusals].join(', ')}`);
    }
    // per_page over the plan's cap: by admission where the cap is below what the parameter allows (250), else by the parameter's bound
    const overCap = answers.filter((answer) => answer.code === 'validation' && JSON.stringify(answer.details).includes(perPageOverCap(plan.per_page_cap)));
    t.is(overCap.length, 2, `${plan.name}: per_page over the plan's cap refused`);
  }
  t.true(batched.decided > 0, 'the batched path decided in the process');
});

test.serial('missing, unknown and wrong-scope keys, up to the failed-attempt limits, and a valid key after them', async (t) => {
  await awayFromMinuteBoundary(20);
  const free = plans.find((plan) => plan.name === 'free')!;
  const mcpFree = plans.find((plan) => plan.name === 'mcp-free')!;
  await keyFor([exact, batched], 'data-api key', free);
  await keyFor([exact, batched], 'mcp key', mcpFree);
  const [data, mcp] = [calls(free), calls(mcpFree)];
  const steps: Step[] = [
    { who: null, call: data.within }, { who: null, call: mcp.within },
    { who: 'mcp key', call: data.within }, { who: 'data-api key', call: mcp.within },
    // over the per-key limit (3): 429 for the key, still 401 for other unknown keys
    ...[1, 2, 3, 4, 5].map((): Step => ({ who: 'unknown:one', call: data.within })),
    { who: 'unknown:two', call: data.unrouted },
    // over the per-address limit (8): every failure from the address is refused, never a valid key
    ...['three', 'four', 'five'].map((name): Step => ({ who: `unknown:${name}`, call: mcp.within })),
    { who: null, call: data.within },
    { who: 'data-api key', call: data.within }, { who: 'mcp key', call: mcp.within },
  ];
  const { found, answers } = await compare([exact, batched], steps);
  t.deepEqual(found, []);
  t.deepEqual(outcomes(answers), [
    // a Data API key on /mcp is told that an MCP key is needed; an MCP key on the Data API is a bad key there
    '401 unauthorized', '401 unauthorized', '401 unauthorized', '401 unauthenticated',
    '401 unauthorized', '401 unauthorized', '401 unauthorized', '429 rate_limited', '429 rate_limited',
    '404 not_found', '429 rate_limited', '429 rate_limited', '429 rate_limited', '429 rate_limited',
    '200 null', '200 null',
  ]);
});

// No route asks a key for a plan of the other scope; should one, both paths let the key through.
test.serial('a plan of the other key scope is not required of a key, on either path; one of its own is', async (t) => {
  await keyFor([exact, batched], 'scopes', plans.find((plan) => plan.name === 'mcp-free')!);
  const outcomes = async (plan: string) => {
    const [row] = await db.sql<{ outcome: string }[]>`
      select outcome from app.admit(${hashKey(exact.keys.get('scopes')!.key)}, 'test', 'mcp', ${plan}, 'scopes', 10, 10, false)`;
    const route = { endpoint: 'scopes', plan: plan as never, consume: false, scope: 'mcp' as const };
    const decided = await batched.api.app.admission!.admit(keyDigest(batched.keys.get('scopes')!.key), route, async () => {
      throw new Error('a valid key is decided in the process');
    });
    return [row!.outcome, decided.outcome];
  };
  t.deepEqual(await outcomes('pro'), ['ok', 'ok']);
  t.deepEqual(await outcomes('mcp-pro'), ['plan_required', 'plan_required']);
});

test.serial('the comparison notices an in-process decision that differs from app.admit', async (t) => {
  // the batched path with a per-minute limit one lower than the plan's: refused one request early
  const lower = await path('lower', { ADMISSION_FLUSH_MS: '60000' }, (decide) => (entry, route, now) => {
    entry.rateLimit -= 1;
    try {
      return decide(entry, route, now);
    } finally {
      entry.rateLimit += 1;
    }
  });
  try {
    await awayFromMinuteBoundary(20);
    const plan = plans.find((one) => one.name === 'starter')!;
    const { found } = await compare([exact, lower], await planSteps([exact, lower], plan));
    t.true(lower.decided > 0);
    t.true(found.some((line) => line.includes('x-ratelimit-remaining')), found.join('\n'));
    t.true(found.some((line) => line.includes('status 200 ≠ 429')), found.join('\n'));
  } finally {
    await lower.api.close();
  }
});
