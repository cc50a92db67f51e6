// Slugs are stored lowercase and every lookup is case-insensitive: each operation that takes a coin
// or exchange slug (path or query, found in the OpenAPI document the app serves by x-slug-of, so a
// new route is covered) answers a mixed-case slug as it answers the lowercase one, and a malformed
// slug with a 422 naming the parameter.
import test from 'ava';
import { apiRoutes } from '../../src/api/index.ts';
import type { RouteSpec } from '../../src/http/routes.ts';
import { demoDatabase } from '../helpers/demo.ts';
import { useApi, type TestResponse } from '../helpers/http.ts';
import { contractFixture, requestFor } from '../../dev/contract-run.ts';

const handles = useApi(test, { env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, database: demoDatabase });

interface Parameter { name: string; in: 'path' | 'query'; schema: { 'x-slug-of'?: string } }
const KINDS = ['coin', 'exchange', 'asset'];

/** bitcoin → BiTcOiN: every other letter upper case. */
const mixedCase = (value: string) => [...value].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c)).join('');

/** The operations taking a coin or exchange slug, each with those parameters, from the served document. */
async function slugOperations() {
  const document = (await handles.api.get('/api/v1/openapi.json')).body;
  const found: { route: RouteSpec; parameters: Parameter[] }[] = [];
  // streams never end (test/streams/sse.test.ts)
  for (const route of apiRoutes.filter((candidate) => !candidate.stream)) {
    const parameters = (document.paths[`/api/v1${route.path}`][route.method].parameters as Parameter[])
      .filter((parameter) => KINDS.includes(parameter.schema['x-slug-of'] ?? ''));
    if (parameters.length > 0) found.push({ route, parameters });
  }
  return found;
}

/** The request for `route` with each slug parameter set by `spell` (path ones through the fixture values). */
function slugRequest(route: RouteSpec, parameters: Parameter[], values: Record<string, string>, spell: (slug: string) => string) {
  const spelled = { ...values, coin: spell(values.coin!), exchange: spell(values.exchange!) };
  const request = requestFor(route, spelled);
  const url = new URL(request.url, 'http://x');
  for (const parameter of parameters.filter((p) => p.in === 'query')) {
    const kind = parameter.schema['x-slug-of'] === 'exchange' ? 'exchange' : 'coin';
    // a value the operation needs (historical-price's slug, convert's from and to) or, for a filter, the fixture's
    const given = url.searchParams.get(parameter.name) ?? values[kind]!;
    url.searchParams.set(parameter.name, given.split(',').map((slug) => spell(slug.toLowerCase())).join(','));
  }
  return { ...request, url: `${url.pathname}${url.search}` };
}

const send = (request: { method: string; url: string; body?: string }, key: string) =>
  handles.api.request(request.method, request.url, { key, headers: request.body === undefined ? {} : { 'content-type': 'application/json' }, body: request.body });

/** The answer as a client compares it: links echo the query string as sent, so they compare in lower case. */
const comparable = (response: TestResponse) => {
  const { links, ...rest } = response.body as { links?: Record<string, string | null> };
  return { status: response.status, ...rest, ...(links ? { links: JSON.parse(JSON.stringify(links).toLowerCase()) } : {}) };
};

test.serial('every operation taking a coin or exchange slug answers a mixed-case slug as the lowercase one', async (t) => {
  const { key, values } = await contractFixture(handles.api, await handles.api.key({ plan: 'pro', owner: 'slug-case' }));
  t.regex(values.exchange!, /[a-z]/, 'the demo exchange slug has letters to change the case of');
  const operations = await slugOperations();
  const parameters = operations.flatMap((operation) => operation.parameters);
  // the counts of today as floors: a route whose slug lost its schema (and its x-slug-of) fails here
  t.true(operations.length >= 50, `${operations.length} operations take a coin or exchange slug`);
  t.true(parameters.filter((p) => p.in === 'path').length >= 31, 'the path slugs of /coins, /prices and /exchanges');
  t.true(parameters.filter((p) => p.in === 'query').length >= 24, 'the query slugs');
  for (const { route, parameters } of operations) {
    const label = `${route.method.toUpperCase()} ${route.path} (${parameters.map((p) => p.name).join(', ')})`;
    const mixed = await send(slugRequest(route, parameters, values, mixedCase), key);
    const lower = await send(slugRequest(route, parameters, values, (slug) => slug), key);
    t.true(lower.status >= 200 && lower.status < 300, `${label}: ${lower.status} ${JSON.stringify(lower.body).slice(0, 200)}`);
    t.deepEqual(comparable(mixed), comparable(lower), label);
  }
});

test.serial('a malformed slug in any of them is a 422 naming the parameter', async (t) => {
  const { key, values } = await contractFixture(handles.api, await handles.api.key({ plan: 'pro', owner: 'slug-malformed' }));
  for (const { route, parameters } of await slugOperations()) {
    for (const parameter of parameters) {
      const request = slugRequest(route, [parameter], values, (slug) => (parameter.in === 'path' ? 'bit_coin' : slug));
      const url = new URL(request.url, 'http://x');
      if (parameter.in === 'query') url.searchParams.set(parameter.name, 'bit--coin');
      const response = await send({ ...request, url: `${url.pathname}${url.search}` }, key);
      const label = `${route.method.toUpperCase()} ${route.path} ${parameter.name}`;
      t.is(response.status, 422, label);
      t.regex(response.body.error?.details?.errors?.[parameter.name]?.[0] ?? '', /^Must be .*slug/, label);
    }
  }
});
