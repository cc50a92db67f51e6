// What bench/scale.ts checks on the service at size, beside its timings (issue 45's Done-when): that
// every coin with a USD-convertible market has a price, minute bars and indicators, and that the
// operations which grow with the coins and markets answer what the service's OpenAPI document says
// and carry the reference contract's fields and types (the contract test's check and reviewed differences).
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { apiRoutes } from '../src/api/index.ts';
import type { Sql } from '../src/db/client.ts';
import { DIFFERENCES, NULLS } from '../dev/contract-differences.ts';
import { departures, referenceOperation } from '../dev/reference-contract.ts';

export interface Coverage { convertible: number; priced: number; minutes: number; indicators: number; missing: string[] }

/** Coins with an active spot market against USD, EUR, a USD stablecoin, bitcoin or ethereum: how many have each thing a coin should have. */
export async function coverage(sql: Sql): Promise<Coverage> {
  const coins = await sql<{ slug: string; priced: boolean; minutes: boolean }[]>`
    select c.slug, s.price is not null as priced,
      exists (select from market.coin_bars_1m b where b.coin_id = c.id and b.time > now() - interval '10 minutes') as minutes
    from market.coins c
    left join market.coin_state s on s.coin_id = c.id
    where exists (
      select from market.venue_markets m left join market.coins q on q.id = m.quote_coin_id
      where m.base_coin_id = c.id and m.active and m.instrument = 'spot'
        and (m.quote in ('USD', 'EUR') or q.peg = 'USD' or q.slug in ('bitcoin', 'ethereum')))
    order by c.slug`;
  let indicators = 0;
  const missing: string[] = [];
  for (const coin of coins) {
    const answered = await sql`select 1 from api.coin_indicators(${coin.slug}) limit 1`.then((rows) => rows.length > 0, () => false);
    if (answered) indicators++;
    if ((!coin.priced || !coin.minutes || !answered) && missing.length < 10) missing.push(coin.slug);
  }
  return {
    convertible: coins.length,
    priced: coins.filter((coin) => coin.priced).length,
    minutes: coins.filter((coin) => coin.minutes).length,
    indicators,
    missing,
  };
}

export interface SizeCheck { path: string; status: number; items: number; ms: number; problem?: string; reference: string[] }

/** Issue 45 item 3's operations at size: pages, sorts and filters of /coins, 100 prices, tickers, a big venue's markets and assets, global counts, heatmap, movers, search. */
export async function checkAtSize(api: string, key: string, sql: Sql): Promise<SizeCheck[]> {
  const document = await (await fetch(`${api}/api/v1/openapi.json`)).json();
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
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
  const checks: SizeCheck[] = [];
  for (const [template, path] of requests) {
    const started = performance.now();
    const response = await fetch(`${api}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
    const ms = performance.now() - started;
    const body = await response.json().catch(() => null);
    const schema = document.paths[`/api/v1${template}`]?.get?.responses?.['200']?.content?.['application/json']?.schema;
    const validate = schema ? ajv.compile(schema) : null;
    const problem = response.status !== 200 ? JSON.stringify(body).slice(0, 120)
      : !validate ? 'no schema'
      : validate(body) ? undefined : ajv.errorsText(validate.errors?.slice(0, 3));
    const data = (body as { data?: unknown } | null)?.data;
    checks.push({ path, status: response.status, items: Array.isArray(data) ? data.length : data ? 1 : 0, ms, ...(problem ? { problem } : {}), reference: referenceDepartures(template, body) });
  }
  return checks;
}

/** What a body departs from the reference's documented response beyond the contract test's reviewed differences and nulls. */
function referenceDepartures(template: string, body: unknown): string[] {
  const route = apiRoutes.find((candidate) => candidate.method === 'get' && candidate.path === template);
  const operation = route && referenceOperation(route);
  const schema = Object.entries(operation?.responses ?? {}).find(([status]) => status.startsWith('2'))?.[1].content?.['application/json']?.schema;
  if (!route || !schema) return [];
  const found = new Set<string>();
  const nulls = new Set<string>();
  departures(schema, body, 'body', found, nulls);
  return [
    ...[...found].map((departure) => `${route.operationId} ${departure}`).filter((key) => !(key in DIFFERENCES)),
    ...[...nulls].map((path) => `${route.operationId} ${path}`).filter((key) => !(key in NULLS)).map((key) => `${key}: null`),
  ];
}
