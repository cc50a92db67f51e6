// What bench/scale.ts checks on the service at size, beside its timings (issue 45's Done-when): that
// every coin with a USD-convertible market has a price, minute bars and indicators; that the
// operations which grow with the coins and markets answer what the service's OpenAPI document says and
// carry the reference contract's fields and types; and that every operation of the contract does so
// at that size, as the contract test runs them on the demo data (dev/contract-run.ts, the same
// requests and checks, the same reviewed differences and nulls).
import { apiRoutes } from '../src/api/index.ts';
import type { Sql } from '../src/db/client.ts';
import { DIFFERENCES, NULLS } from '../dev/contract-differences.ts';
import { answerAll, answerChecker, contractFixture, fetchClient, type AnswerCheck } from '../dev/contract-run.ts';

export interface Coverage { convertible: number; priced: number; minutes: number; indicators: number; missing: string[] }

/** Coins with an active spot market against USD, EUR, a USD stablecoin, bitcoin or ethereum: how many have each thing a coin should have. */
export async function coverage(sql: Sql): Promise<Coverage> {
  // a coin answers /indicators when its snapshot has rows; the snapshot refuses a coin without daily bars (MD404)
  await sql`
    create or replace function pg_temp.answers_indicators(p_slug text) returns boolean language plpgsql as $$
    begin
      return exists (select from api.coin_indicators(p_slug));
    exception when sqlstate 'MD404' then
      return false;
    end $$`;
  const [row] = await sql<Coverage[]>`
    with convertible as (
      select c.slug, s.price is not null as priced,
        exists (select from market.coin_bars_1m b where b.coin_id = c.id and b.time > now() - interval '10 minutes') as minutes,
        pg_temp.answers_indicators(c.slug) as indicators
      from market.coins c
      left join market.coin_state s on s.coin_id = c.id
      where exists (
        select from market.venue_markets m left join market.coins q on q.id = m.quote_coin_id
        where m.base_coin_id = c.id and m.active and m.instrument = 'spot'
          and (m.quote in ('USD', 'EUR') or q.peg = 'USD' or q.slug in ('bitcoin', 'ethereum'))))
    select count(*)::int as convertible, (count(*) filter (where priced))::int as priced,
      (count(*) filter (where minutes))::int as minutes, (count(*) filter (where indicators))::int as indicators,
      coalesce((array_agg(slug order by slug) filter (where not (priced and minutes and indicators)))[1:10], '{}') as missing
    from convertible`;
  return row!;
}

export interface SizeCheck { path: string; status: number; items: number; ms: number; problem?: string; reference: string[] }

const itemsOf = (body: unknown) => {
  const data = (body as { data?: unknown } | null)?.data;
  return Array.isArray(data) ? data.length : data ? 1 : 0;
};

/** What a check finds beyond the contract test's reviewed differences and documented nulls. */
const unreviewed = (check: AnswerCheck) => [
  ...check.departures.filter((key) => !(key in DIFFERENCES)),
  ...check.nulls.filter((key) => !(key in NULLS)).map((key) => `${key}: null`),
];

/** Issue 45 item 3's operations at size: pages, sorts and filters of /coins, 100 prices, tickers, a big venue's markets and assets, global counts, heatmap, movers, search. */
export async function checkAtSize(api: string, key: string, sql: Sql): Promise<SizeCheck[]> {
  const check = answerChecker(await (await fetch(`${api}/api/v1/openapi.json`)).json());
  const [row] = await sql<{ discovered: string; total: number }[]>`
    select (select c.slug from market.coins c join market.coin_state s on s.coin_id = c.id
            where c.discovered_by is not null and s.price is not null order by s.rank limit 1) as discovered,
           (select count(*) from market.coins where status = 'active')::int as total`;
  const { discovered, total } = row!;
  const slugs = (await sql<{ slug: string }[]>`
    select c.slug from market.coins c join market.coin_state s on s.coin_id = c.id where s.price is not null order by s.rank desc limit 100`).map((row) => row.slug);
  const lastPage = Math.max(1, Math.ceil(total / 250));
  const requests: [template: string, path: string][] = [
    ['/coins', '/coins?per_page=250'],
    ['/coins', `/coins?per_page=250&page=${lastPage}`],
    ['/coins', '/coins?per_page=100&sort=-change_24h'],
    ['/coins', '/coins?per_page=100&min_marketcap=1000000&sort=-volume_24h'],
    ['/coins', `/coins?search=${encodeURIComponent(discovered.slice(0, 3))}`],
    ['/coins/{slug}', `/coins/${discovered}`],
    ['/coins/{slug}/history', `/coins/${discovered}/history`],
    ['/coins/{slug}/indicators', `/coins/${discovered}/indicators`],
    ['/coins/gainers', '/coins/gainers'],
    ['/coins/losers', '/coins/losers'],
    ['/prices', `/prices?slugs=${slugs.join(',')}`],
    ['/tickers', '/tickers?per_page=250'],
    ['/pairs', '/pairs?per_page=100&search=USDT'],
    ['/exchanges/{slug}/tickers', '/exchanges/gate/tickers?per_page=250'],
    ['/exchanges/{slug}/assets', '/exchanges/gate/assets?per_page=250'],
    ['/exchanges', '/exchanges'],
    ['/global', '/global'],
    ['/global/heatmap', '/global/heatmap'],
  ];
  const client = fetchClient(api);
  const checks: SizeCheck[] = [];
  for (const [template, path] of requests) {
    const route = apiRoutes.find((candidate) => candidate.method === 'get' && candidate.path === template)!;
    const started = performance.now();
    const response = await client.get(`/api/v1${path}`, key);
    const ms = performance.now() - started;
    const checked = check(route, response);
    checks.push({ path, status: response.status, items: itemsOf(response.body), ms, ...(checked.problem ? { problem: checked.problem } : {}), reference: unreviewed(checked) });
  }
  return checks;
}

/** Every operation of the contract at size, as the contract test runs them: one row per operation. */
export async function contractAtSize(api: string, key: string): Promise<SizeCheck[]> {
  const client = fetchClient(api);
  const check = answerChecker((await client.get('/api/v1/openapi.json')).body);
  const answers = await answerAll(client, await contractFixture(client, key));
  return apiRoutes.filter((route) => answers.has(route.operationId)).map((route) => {
    const answer = answers.get(route.operationId)!;
    const checked = check(route, answer);
    return { path: route.operationId, status: answer.status, items: itemsOf(answer.body), ms: answer.ms, ...(checked.problem ? { problem: checked.problem } : {}), reference: unreviewed(checked) };
  });
}
