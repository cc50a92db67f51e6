// The MCP tool server over HTTP with the SDK's own client: the 19 tools and their schemas, each
// tool with a valid and a bad argument, the auth matrix, quota accounting, the plan gate, Origin
// refusal, stateless GET/DELETE and the server card.
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import { TOOLS } from '../../src/mcp/tools.ts';
import { createKey } from '../../src/keys.ts';
import { loadVenueFixture } from '../api/exchange_fixtures.ts';
import { awayFromMinuteBoundary, useApi } from '../helpers/http.ts';
import { generateSeries, insertCoin, refreshAggregates } from '../../dev/indicators.ts';

const TECH = { id: 4301, slug: 'mcp-coin' };
const keys = { free: '', pro: '', dataApi: '' };

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
  await new Promise((resolve) => setTimeout(resolve, 600));
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

for (const name of EXPECTED) {
  test(`${name}: a valid call answers structuredContent of its outputSchema, a bad one is a tool error`, async (t) => {
    const client = await connect(bearer(keys.pro));
    const tool = TOOLS.find((candidate) => candidate.name === name)!;
    const result = await client.callTool({ name, arguments: CALLS[name]!.ok });
    t.falsy(result.isError, JSON.stringify(result.content));
    // The client validated it too; here explicitly, against the declared schema.
    const check = tool.output.safeParse(result.structuredContent);
    t.true(check.success, check.success ? '' : JSON.stringify(check.error.issues));
    t.is((result.content as { type: string }[])[0]!.type, 'text');

    const bad = await client.callTool({ name, arguments: CALLS[name]!.bad });
    t.true(bad.isError);
    const envelope = JSON.parse((bad.content as { text: string }[])[0]!.text);
    t.is(envelope.error.code, CALLS[name]!.badCode);
    t.is(typeof envelope.error.message, 'string');
    await client.close();
  });
}

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

test('auth: Bearer and X-API-Key pass, X-API-Key wins over Bearer, Data API keys and no key get 401', async (t) => {
  const passing: Record<string, string>[] = [bearer(keys.free), { 'x-api-key': keys.free }, { 'x-api-key': keys.free, authorization: 'Bearer mdk_wrong' }];
  for (const headers of passing) {
    const client = await connect(headers);
    t.is((await client.listTools()).tools.length, 19);
    await client.close();
  }
  const refused = async (headers: Record<string, string>) => {
    const response = await handles.api.request('POST', '/mcp', {
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    t.is(response.status, 401);
    t.is(response.body.error.code, 'unauthorized');
  };
  await refused({ 'x-api-key': 'mdk_wrong', authorization: `Bearer ${keys.free}` });
  await refused(bearer(keys.dataApi));
  await refused({});
  await t.throwsAsync(connect(bearer(keys.dataApi)));
  // and an MCP key is refused on the Data API
  t.is((await handles.api.get('/api/v1/coins', keys.free)).status, 401);
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

test('the server card at both well-known paths', async (t) => {
  const card = z.object({
    name: z.string(), title: z.string(), description: z.string(), version: z.string().regex(/^\d+\.\d+\.\d+/),
    transport: z.object({ type: z.literal('streamable-http'), url: z.string() }),
    authentication: z.object({ schemes: z.array(z.object({ header: z.string() })) }),
  });
  for (const path of ['/.well-known/mcp/server-card.json', '/.well-known/mcp.json']) {
    const response = await handles.api.get(path);
    t.is(response.status, 200);
    const parsed = card.parse(response.body);
    t.is(parsed.transport.url, `${handles.api.base}/mcp`);
    t.deepEqual(parsed.authentication.schemes.map((scheme) => scheme.header), ['Authorization', 'X-API-Key']);
  }
});
