// The MCP tool server over HTTP with the SDK's own client: the 19 tools and their schemas, each
// tool with a valid and a bad argument, its text blocks and its outputSchema (the OpenAPI document's),
// the auth matrix, quota accounting, the plan gate, Origin refusal, stateless GET/DELETE and the
// server card (also a registry server.json).
import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import { TOOLS } from '../../src/mcp/tools.ts';
import { createKey, createWidgetKey } from '../../src/keys.ts';
import { loadVenueFixture } from '../api/exchange_fixtures.ts';
import { awayFromMinuteBoundary, useApi } from '../helpers/http.ts';
import { generateSeries, insertCoin, refreshAggregates } from '../../dev/indicators.ts';
import { sleep } from '../../dev/wait.ts';

const TECH = { id: 4301, slug: 'mcp-coin' };
const keys = { free: '', pro: '', dataApi: '', widget: '' };

const handles = useApi(test, {
  setup: async ({ db, api }) => {
    await loadVenueFixture(db);
    await insertCoin(db.sql, TECH, generateSeries(400, 7));
    await refreshAggregates(db.sql);
    await db.sql`select market.refresh_sentiment()`;
    // the altseason index needs 90 days of the top 100: one computed day stands for it here
    await db.sql`insert into market.altseason_days (day, index, outperformers, coins, look_back_days) values (current_date, 40, 4, 10, 90)`;
    keys.free = await api.key({ plan: 'mcp-free', scope: 'mcp' });
    keys.pro = await api.key({ plan: 'mcp-pro', scope: 'mcp' });
    keys.dataApi = await api.key({ plan: 'pro' });
    keys.widget = (await createWidgetKey(db.sql, { owner: 'site-owner', plan: 'widget-free', name: 'site', origins: ['https://site.example'] })).key;
  },
});

async function connect(headers: Record<string, string>) {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${handles.api.base}/mcp`), { requestInit: { headers } }));
  return client;
}
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);

const EXPECTED = [
  'search_coins', 'get_coin', 'get_prices', 'get_price_history', 'get_historical_price', 'get_top_movers', 'get_trending_coins',
  'get_global_market', 'get_global_history', 'get_fear_greed', 'get_altseason_index', 'convert_currency', 'list_exchanges',
  'get_exchange', 'get_exchange_trust_score', 'get_coin_markets', 'get_coin_technicals', 'get_liquidations_summary', 'calculate_dca',
];

// One valid and one bad call per tool (the bad one fails the endpoint's validation or names an unknown slug).
const CALLS: Record<string, { ok: Record<string, unknown>; bad: Record<string, unknown>; badCode: string }> = {
  search_coins: { ok: { query: 'alp' }, bad: { query: 'a', per_page: 0 }, badCode: 'validation' },
  get_coin: { ok: { slug: 'alpha' }, bad: { slug: 'no-such-coin' }, badCode: 'not_found' },
  get_prices: { ok: { slugs: ['alpha', 'beta'], convert: 'usd' }, bad: {}, badCode: 'validation' },
  get_price_history: { ok: { slug: TECH.slug, start: '2023-03-01', end: '2023-03-10' }, bad: { slug: TECH.slug, start: 'yesterday' }, badCode: 'validation' },
  get_historical_price: { ok: { slug: TECH.slug, date: '2023-06-01' }, bad: { slug: TECH.slug, date: '2999-01-01' }, badCode: 'validation' },
  get_top_movers: { ok: { direction: 'gainers', interval: '24h' }, bad: { direction: 'sideways' }, badCode: 'validation' },
  get_trending_coins: { ok: { limit: 5 }, bad: { limit: 21 }, badCode: 'validation' },
  get_global_market: { ok: {}, bad: { extra: 1 }, badCode: 'validation' },
  get_global_history: { ok: { metric: 'marketcap', period: '7d' }, bad: { metric: 'price' }, badCode: 'validation' },
  get_fear_greed: { ok: {}, bad: { coin: 'Not A Slug' }, badCode: 'validation' },
  get_altseason_index: { ok: { days: 3 }, bad: { days: 366 }, badCode: 'validation' },
  convert_currency: { ok: { from: 'alpha', to: ['usd', 'beta'], amount: '2.5' }, bad: { from: 'alpha', to: ['no-such-asset'] }, badCode: 'not_found' },
  list_exchanges: { ok: { type: 'cex' }, bad: { per_page: 251 }, badCode: 'validation' },
  get_exchange: { ok: { slug: 'big-cex' }, bad: { slug: 'no-such-exchange' }, badCode: 'not_found' },
  get_exchange_trust_score: { ok: { slug: 'big-cex' }, bad: { slug: 'no-such-exchange' }, badCode: 'not_found' },
  get_coin_markets: { ok: { slug: 'alpha' }, bad: { slug: 'alpha', per_page: 'many' }, badCode: 'validation' },
  get_coin_technicals: { ok: { slug: TECH.slug }, bad: { slug: 'no-such-coin' }, badCode: 'not_found' },
  get_liquidations_summary: { ok: {}, bad: { day: 'today' }, badCode: 'validation' },
  calculate_dca: { ok: { slug: 'alpha', amount: '100', interval: 'daily', start: daysAgo(5), series: true }, bad: { slug: 'alpha', amount: '0', interval: 'daily', start: daysAgo(10) }, badCode: 'validation' },
};

const usage = async (key: string) => {
  // the app writes its admission counts every ADMISSION_FLUSH_MS (200 ms by default)
  await sleep(600);
  const [row] = await handles.db.sql<{ used: number }[]>`
    select coalesce(sum(u.used), 0)::int as used from app.usage_monthly u join app.api_keys k on k.id = u.key_id where k.prefix = ${key.slice(0, 12)}`;
  return row!.used;
};

test('the 19 tools are listed with schemas and read-only annotations', async (t) => {
  const client = await connect(bearer(keys.pro));
  const { tools } = await client.listTools();
  t.deepEqual(tools.map((tool) => tool.name).sort(), [...EXPECTED].sort());
  for (const tool of tools) {
    t.truthy(tool.title, tool.name);
    t.true((tool.description ?? '').length > 20, tool.name);
    t.is(tool.inputSchema.type, 'object', tool.name);
    t.is(tool.outputSchema?.type, 'object', tool.name);
    t.deepEqual([tool.annotations?.readOnlyHint, tool.annotations?.openWorldHint], [true, false], tool.name);
  }
  const prices = tools.find((tool) => tool.name === 'get_prices')!;
  t.is((prices.inputSchema.properties as any).slugs.maxItems, 100);
  await client.close();
});

const textOf = (result: Record<string, unknown>) => (result.content as { type: string; text: string }[]).map((block) => { if (block.type !== 'text') throw new Error(block.type); return block.text; });

for (const name of EXPECTED) {
  test(`${name}: a valid call answers structuredContent, a bad one is a tool error`, async (t) => {
    const client = await connect(bearer(keys.pro));
    // listed first: the SDK client then checks structuredContent against the outputSchema itself
    await client.listTools();
    const result = await client.callTool({ name, arguments: CALLS[name]!.ok });
    t.falsy(result.isError, JSON.stringify(result.content));
    t.is(typeof result.structuredContent, 'object');

    const bad = await client.callTool({ name, arguments: CALLS[name]!.bad });
    t.true(bad.isError);
    const envelope = JSON.parse((bad.content as { text: string }[])[0]!.text);
    t.is(envelope.error.code, CALLS[name]!.badCode);
    t.is(typeof envelope.error.message, 'string');
    await client.close();
  });
}

/** Every object schema under `data`, with its path: each must close its properties. */
function objectSchemas(node: unknown, path: string, out: [string, Record<string, unknown>][] = []) {
  if (Array.isArray(node)) node.forEach((item, index) => objectSchemas(item, `${path}[${index}]`, out));
  else if (node && typeof node === 'object') {
    const schema = node as Record<string, unknown>;
    if (schema.type === 'object' || 'properties' in schema) out.push([path, schema]);
    for (const [key, value] of Object.entries(schema)) if (typeof value === 'object') objectSchemas(value, `${path}.${key}`, out);
  }
  return out;
}

/** The first object found in a tool's `data` (a row of a list, the record itself, a nested one). */
function firstRecord(value: unknown): Record<string, unknown> | null {
  if (Array.isArray(value)) return value.map(firstRecord).find(Boolean) ?? null;
  return value && typeof value === 'object' ? (value as Record<string, unknown>) : null;
}

test('every listed tool: its text holds its structuredContent as JSON, which its outputSchema (the OpenAPI response schema, data objects closed) validates', async (t) => {
  const client = await connect(bearer(keys.pro));
  const { tools } = await client.listTools();
  const document = (await handles.api.get('/api/v1/openapi.json')).body;
  const operations = new Map<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>();
  for (const item of Object.values(document.paths) as Record<string, any>[]) for (const operation of Object.values(item)) operations.set(operation.operationId, operation);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  t.is(tools.length, 19);
  for (const listed of tools) {
    const call = CALLS[listed.name];
    if (!call) {
      t.fail(`${listed.name}: no call in CALLS`);
      continue;
    }
    const tool = TOOLS.find((candidate) => candidate.name === listed.name)!;
    // the published schema is the operation's, as the OpenAPI document has it
    t.deepEqual(listed.outputSchema, operations.get(tool.operationId)!.responses['200']!.content!['application/json']!.schema, `${listed.name}: outputSchema`);
    const open = objectSchemas((listed.outputSchema!.properties as Record<string, unknown>).data, 'data').filter(([, schema]) => schema.additionalProperties !== false);
    t.deepEqual(open.map(([path]) => path), [], `${listed.name}: data objects without additionalProperties: false`);

    const result = await client.callTool({ name: listed.name, arguments: call.ok });
    t.falsy(result.isError, `${listed.name}: ${JSON.stringify(result.content)}`);
    const [summary, json, ...more] = textOf(result);
    t.is(more.length, 0, listed.name);
    t.false(summary!.includes('\n'), `${listed.name}: a one-line summary`);
    t.deepEqual(JSON.parse(json!), result.structuredContent, `${listed.name}: the JSON text block`);

    const validate = ajv.compile(listed.outputSchema!);
    t.true(validate(result.structuredContent), `${listed.name}: ${ajv.errorsText(validate.errors)}`);
    // a field the schema does not declare, anywhere in the data, fails the validation
    const body = structuredClone(result.structuredContent) as { data: unknown };
    const record = firstRecord(body.data);
    t.truthy(record, `${listed.name}: the call answers a record to check`);
    if (record) {
      record.undeclared_field = 1;
      t.false(validate(body), `${listed.name}: an undeclared field in data passes`);
    }
  }
  await client.close();
});

test('get_top_movers over 7d quotes each coin\'s 7-day change, over 24h its 24-hour one', async (t) => {
  const client = await connect(bearer(keys.pro));
  for (const interval of ['7d', '24h'] as const) {
    for (const direction of ['gainers', 'losers']) {
      const result = await client.callTool({ name: 'get_top_movers', arguments: { direction, interval } });
      const rows = (result.structuredContent as { data: { symbol: string; change_24h: number | null; change_7d: number | null }[] }).data;
      const [summary] = textOf(result);
      const change = interval === '7d' ? 'change_7d' : 'change_24h';
      t.true(rows.length > 0, `${direction} ${interval}: some coins moved`);
      t.true(rows.some((row) => row.change_24h !== row.change_7d), `${direction} ${interval}: the two changes differ, so the text shows which`);
      t.true(summary!.includes(`over ${interval}`), summary);
      for (const row of rows.slice(0, 10)) t.true(summary!.includes(`${row.symbol} ${row[change]}%`), `${direction} ${interval}: ${summary}`);
    }
  }
  await client.close();
});

test('decimal strings stay strings', async (t) => {
  const client = await connect(bearer(keys.free));
  const result = await client.callTool({ name: 'convert_currency', arguments: { from: 'alpha', to: ['usd'], amount: '2.5' } });
  const converted = (result.structuredContent as any).data;
  t.is(converted.amount, 2.5, 'the echoed amount is a number, as the reference types it');
  t.is(typeof converted.results[0].value, 'string');
  const prices = await client.callTool({ name: 'get_prices', arguments: { slugs: ['alpha'] } });
  t.is(typeof (prices.structuredContent as any).data[0].price, 'string');
  await client.close();
});

test('auth: Bearer and X-API-Key pass, X-API-Key wins over Bearer, an unknown key and no key get 401 unauthorized', async (t) => {
  const passing: Record<string, string>[] = [bearer(keys.free), { 'x-api-key': keys.free }, { 'x-api-key': keys.free, authorization: 'Bearer mdk_wrong' }];
  for (const headers of passing) {
    const client = await connect(headers);
    t.is((await client.listTools()).tools.length, 19);
    await client.close();
  }
  await refused(t, { 'x-api-key': 'mdk_wrong', authorization: `Bearer ${keys.free}` }, 'unauthorized', /invalid or revoked/);
  await refused(t, {}, 'unauthorized', /Send an API key/);
  await t.throwsAsync(connect(bearer('mdk_wrong')));
});

const refused = async (t: import('ava').ExecutionContext, headers: Record<string, string>, code: string, message: RegExp) => {
  const response = await handles.api.request('POST', '/mcp', {
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.is(response.status, 401, JSON.stringify(headers));
  t.is(response.body.error.code, code, JSON.stringify(headers));
  t.regex(response.body.error.message, message);
  t.is(response.headers.get('www-authenticate'), 'Bearer');
};

test('a key of the wrong kind on /mcp (Data API, widget) gets 401 unauthenticated asking for an MCP key; the Data API answers a wrong key as before', async (t) => {
  for (const key of [keys.dataApi, keys.widget]) {
    await refused(t, bearer(key), 'unauthenticated', /MCP key/);
    await refused(t, { 'x-api-key': key }, 'unauthenticated', /MCP key/);
  }
  await t.throwsAsync(connect(bearer(keys.dataApi)));
  // an MCP or widget key on the Data API: the Data API's own 401, unchanged
  for (const key of [keys.free, keys.widget, 'mdk_wrong']) {
    const response = await handles.api.get('/api/v1/coins', key);
    t.is(response.status, 401);
    t.deepEqual(response.body.error, { code: 'unauthorized', message: 'The API key is invalid or revoked.', details: {} });
  }
  t.is((await handles.api.get('/api/v1/coins', keys.dataApi)).status, 200);
});

test('a plan belongs to one scope: an MCP key cannot carry a Data API plan, nor the reverse', async (t) => {
  await t.throwsAsync(createKey(handles.db.sql, { plan: 'pro', owner: 'x', scope: 'mcp' }), { message: /api_keys_plan_scope_fkey/ });
  await t.throwsAsync(createKey(handles.db.sql, { plan: 'mcp-pro', owner: 'x', scope: 'data-api' }), { message: /api_keys_plan_scope_fkey/ });
});

test('quota: one request per tool call, none for initialize and tools/list or a bad argument', async (t) => {
  await awayFromMinuteBoundary(15);
  const key = await handles.api.key({ plan: 'mcp-free', scope: 'mcp', owner: 'quota' });
  const client = await connect(bearer(key));
  await client.listTools();
  await client.listTools();
  t.is(await usage(key), 0);
  await client.callTool({ name: 'get_global_market', arguments: {} });
  t.is(await usage(key), 1);
  await client.callTool({ name: 'get_trending_coins', arguments: { limit: 3 } });
  t.is(await usage(key), 2);
  await client.callTool({ name: 'get_trending_coins', arguments: { limit: 99 } });
  t.is(await usage(key), 2);
  await client.close();
});

test('a paid-plan tool is refused on the free MCP plan, naming the plan, at no cost', async (t) => {
  const key = await handles.api.key({ plan: 'mcp-free', scope: 'mcp', owner: 'gate' });
  const client = await connect(bearer(key));
  const result = await client.callTool({ name: 'get_coin_technicals', arguments: { slug: TECH.slug } });
  t.true(result.isError);
  const envelope = JSON.parse((result.content as { text: string }[])[0]!.text);
  t.is(envelope.error.code, 'plan_required');
  t.regex(envelope.error.message, /mcp-pro/);
  t.is(await usage(key), 0);
  await client.close();
});

test('Origin: loopback passes, a foreign Origin is refused with 403', async (t) => {
  const client = await connect({ ...bearer(keys.free), origin: 'http://localhost:5173' });
  t.is((await client.listTools()).tools.length, 19);
  await client.close();
  const response = await handles.api.request('POST', '/mcp', {
    headers: { ...bearer(keys.free), origin: 'https://evil.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.is(response.status, 403);
  t.is(response.body.error.code, 'forbidden_origin');
  await t.throwsAsync(connect({ ...bearer(keys.free), origin: 'https://evil.example' }));
});

test('stateless: GET and DELETE /mcp answer 405 with Allow: POST; an unsupported MCP-Protocol-Version is refused', async (t) => {
  for (const method of ['GET', 'DELETE']) {
    const response = await handles.api.request(method, '/mcp', { key: keys.free });
    t.is(response.status, 405);
    t.is(response.headers.get('allow'), 'POST');
    t.is(response.body.error.code, 'method_not_allowed');
  }
  const response = await handles.api.request('POST', '/mcp', {
    headers: { ...bearer(keys.free), 'mcp-protocol-version': '1999-01-01', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.is(response.status, 400);
});

test('the server card at both well-known paths, also a registry server.json', async (t) => {
  const card = z.object({
    $schema: z.literal('https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json'),
    // the registry's rules for these fields (server.schema.json)
    name: z.string().regex(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/).min(3).max(200),
    title: z.string(), description: z.string().min(1).max(100), version: z.string().regex(/^\d+\.\d+\.\d+/),
    websiteUrl: z.url(),
    remotes: z.array(z.object({ type: z.literal('streamable-http'), url: z.url(), headers: z.array(z.object({ name: z.string(), description: z.string(), isRequired: z.boolean(), isSecret: z.boolean() })) })).length(1),
    transport: z.object({ type: z.literal('streamable-http'), url: z.string() }),
    authentication: z.object({ schemes: z.array(z.object({ header: z.string() })) }),
    capabilities: z.object({ tools: z.object({ listChanged: z.boolean() }) }),
    tools: z.array(z.object({ name: z.string() })),
  });
  for (const path of ['/.well-known/mcp/server-card.json', '/.well-known/mcp.json']) {
    const response = await handles.api.get(path);
    t.is(response.status, 200);
    const parsed = card.parse(response.body);
    t.is(parsed.transport.url, `${handles.api.base}/mcp`);
    t.deepEqual(parsed.remotes[0], { type: 'streamable-http', url: `${handles.api.base}/mcp`, headers: [{ name: 'Authorization', description: parsed.remotes[0]!.headers[0]!.description, isRequired: true, isSecret: true }] });
    t.is(parsed.name, `${new URL(handles.api.base).hostname}/market-data-api`, 'an address is its own namespace');
    t.is(parsed.websiteUrl, `${handles.api.base}/docs#the-mcp-tool-server-mcp`);
    t.is((await handles.api.get(new URL(parsed.websiteUrl).pathname)).status, 200);
    t.deepEqual(parsed.authentication.schemes.map((scheme) => scheme.header), ['Authorization', 'X-API-Key']);
    t.deepEqual(parsed.tools.map((tool) => tool.name).sort(), [...EXPECTED].sort());
  }
});

test('the cards and initialize agree on tools.listChanged (false: the tools never change)', async (t) => {
  const client = await connect(bearer(keys.free));
  const initialized = client.getServerCapabilities()?.tools?.listChanged;
  await client.close();
  t.is(initialized, false);
  for (const path of ['/.well-known/mcp/server-card.json', '/.well-known/mcp.json']) {
    t.is((await handles.api.get(path)).body.capabilities.tools.listChanged, initialized, path);
  }
});

test('the registry name is the public host reversed; an address stays as it is', async (t) => {
  const { registryName } = await import('../../src/mcp/server.ts');
  t.is(registryName('https://api.example.com'), 'com.example.api/market-data-api');
  t.is(registryName('http://127.0.0.1:3000'), '127.0.0.1/market-data-api');
  t.is(registryName('http://[::1]:3000'), '--1/market-data-api');
});
