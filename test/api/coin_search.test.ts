// The coin search at 20 000 coins: GET /api/v1/coins?search= shows an exact symbol, slug or name
// first, then prefixes, then other substrings, each by rank; the console's suggestions
// (market.coin_search) are the list's first rows, read through the indexes of migration 000157; the
// MCP search_coins tool (over the list) names the exact symbol first.
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { useApi } from '../helpers/http.ts';
import { manyCoins } from '../helpers/many-coins.ts';

const COINS = 20_000;

const handles = useApi(test, {
  setup: async ({ db }) => {
    await manyCoins(db.sql, COINS);
    // ranked after the 20 000 on purpose (an exact match must still come first), the wrapped coin best
    await db.sql`
      with named (slug, symbol, name, rank) as (values
        ('wrapped-bitcoin', 'WBTC', 'Wrapped Bitcoin', ${COINS + 1}), ('bitcoin-cash', 'BCH', 'Bitcoin Cash', ${COINS + 2}),
        ('bitcoin', 'BTC', 'Bitcoin', ${COINS + 10}), ('btc-token', 'BTC', 'BTC Token', null::int)),
      made as (
        insert into market.coins (slug, symbol, name, type, source)
        select slug, symbol, name, 'coin', 'test-many' from named returning id, slug)
      insert into market.coin_state (coin_id, price, marketcap, rank)
      select m.id, 1, case when n.rank is null then null else 1e6 / n.rank end, n.rank from made m join named n using (slug)`;
  },
});

interface Row { slug: string; symbol: string; name: string; rank: number | null }

const list = async (query: string) => {
  const response = await handles.api.get(`/api/v1/coins?${query}`, await key());
  return { status: response.status, total: response.body.meta?.total as number, rows: (response.body.data ?? []) as Row[] };
};
let apiKey = '';
const key = async () => (apiKey ||= await handles.api.key({ plan: 'pro' }));

/** market.coin_search_tier, in TypeScript: how the test expects a coin to match. */
function tier(search: string, { slug, symbol, name }: Row) {
  const q = search.toLowerCase();
  const fields = [name.toLowerCase(), symbol.toLowerCase(), slug];
  if (!fields.some((f) => f.includes(q))) return null;
  if (fields.includes(q)) return 0;
  return fields.some((f) => f.startsWith(q)) ? 1 : 2;
}

test('an exact symbol, slug or name comes first, then prefixes, then substrings, each by rank', async (t) => {
  t.deepEqual((await list('search=bitcoin')).rows.map((row) => row.slug), ['bitcoin', 'bitcoin-cash', 'wrapped-bitcoin']);
  // two coins share the symbol BTC: the ranked one first, then the unranked; WBTC only contains it
  t.deepEqual((await list('search=BTC')).rows.map((row) => row.slug), ['bitcoin', 'btc-token', 'wrapped-bitcoin']);
  // a slug matches too, exactly here (its name "Ethbit Bit" does not contain it)
  t.is((await list('search=ethbit-bit-1')).rows[0]?.slug, 'ethbit-bit-1');
  // an explicit sort wins over closeness
  t.deepEqual((await list('search=bitcoin&sort=rank')).rows.map((row) => row.slug), ['wrapped-bitcoin', 'bitcoin-cash', 'bitcoin']);
});

test('at 20 000 coins every page keeps the order: tier never falls back, rank rises within a tier', async (t) => {
  for (const search of ['bit', 'sol', 'so', 'ai']) {
    const pages = [];
    for (let page = 1; page <= 3; page++) pages.push(...(await list(`search=${search}&per_page=250&page=${page}`)).rows);
    const { total } = await list(`search=${search}&per_page=1`);
    t.true(total > 750, `${search}: ${total} matches`);
    const keys = pages.map((row) => [tier(search, row), row.rank ?? Infinity] as const);
    t.false(keys.some(([found]) => found === null), `${search}: every row matches`);
    const outOfOrder = keys.findIndex(([tierOf, rank], i) => i > 0 && (tierOf! < keys[i - 1]![0]! || (tierOf === keys[i - 1]![0] && rank < keys[i - 1]![1])));
    t.is(outOfOrder, -1, `${search}: row ${outOfOrder} out of order`);
  }
});

test('the console\'s suggestions are the list\'s first 10, through the indexes when prefixes fill them', async (t) => {
  const { sql } = handles.db;
  for (const search of ['btc', 'bitcoin', 'bit', 'Sol', 'ethbit-bit-1', 'hbit', 'zzz', '%', '_b', 'a\\']) {
    const suggested = await sql<{ slug: string }[]>`select c.slug from market.coin_search(${search}, 10) o join market.coins c using (id) order by o.n`;
    const first = await sql<{ slug: string }[]>`select c.slug from market.coin_list_order(p_search => ${search}) o join market.coins c using (id) where o.n <= 10 order by o.n`;
    t.deepEqual(suggested.map((row) => row.slug), first.map((row) => row.slug), search);
  }
  // the prefix matches as market.coin_search asks for them: read through the three indexes, not by reading every coin
  const plan = (await sql.unsafe(`explain select from market.coins c where lower(c.name) like 'sol%' or lower(c.symbol) like 'sol%' or c.slug like 'sol%'`))
    .map((row) => row['QUERY PLAN'] as string).join('\n');
  t.regex(plan, /coins_name_search/);
  t.regex(plan, /coins_symbol_search/);
  t.notRegex(plan, /Seq Scan/);
  await t.throwsAsync(sql`select * from market.coin_search(null, 10)`, { message: /search and a limit/ });
});

test('timings at 20 000 coins (logged): the list\'s search and the suggestions', async (t) => {
  const { sql } = handles.db;
  const best = async (statement: string) => {
    let ms = Infinity;
    for (let i = 0; i < 3; i++) {
      const plan = (await sql.unsafe(`explain (analyze) ${statement}`)).map((row) => row['QUERY PLAN'] as string).join('\n');
      ms = Math.min(ms, Number(/Execution Time: ([\d.]+)/.exec(plan)![1]));
    }
    return ms;
  };
  for (const search of ['bit', 'btc', 'zzz']) {
    t.log(`${search}: /coins?search page of 100 ${(await best(`select * from api.coin_list_page(p_search => '${search}', p_per_page => 100)`)).toFixed(1)} ms, `
      + `suggestions ${(await best(`select * from market.coin_search('${search}', 10)`)).toFixed(1)} ms`);
  }
  t.pass();
});

test('the MCP search_coins tool names the exact symbol first', async (t) => {
  const mcpKey = await handles.api.key({ plan: 'mcp-pro', scope: 'mcp' });
  const client = new Client({ name: 'coin-search-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${handles.api.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${mcpKey}` } } }));
  try {
    const result = await client.callTool({ name: 'search_coins', arguments: { query: 'BTC', per_page: 10 } }) as unknown as { structuredContent: { data: Row[] }; content: { text: string }[] };
    t.is(result.structuredContent.data[0]!.slug, 'bitcoin');
    t.regex(result.content[0]!.text, /Bitcoin \(BTC, bitcoin\)/);
  } finally {
    await client.close();
  }
});
