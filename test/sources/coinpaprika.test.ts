// The CoinPaprika metadata source on a recorded /v1/tickers response (dev/venues/recorded/coinpaprika,
// CoinPaprika's documented format) served from a loopback HTTP server: supplies applied to the
// catalogue's coins, unknown ids ignored, nonsense skipped; a 500, malformed, truncated or
// too slow response fails the run, is recorded in market.source_health and changes nothing. The
// coin list (/v1/coins, daily) is served small here; test/sources/discovery.test.ts covers it.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { refreshCoinMetadata } from '../../jobs/refresh_coin_metadata.ts';
import { coinpaprikaSupplies, CoinPaprikaError } from '../../src/sources/coinpaprika.ts';
import { runSource } from '../../src/sources/source.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

const recorded = readFileSync(new URL('../../dev/venues/recorded/coinpaprika/tickers.json', import.meta.url), 'utf8');

/** What the loopback server answers next: a status and a body, or silence. */
let reply: { status: number; body: string } | 'hang' = { status: 200, body: recorded };
/** CoinPaprika's documented /v1/coins format, two entries */
const coinList = JSON.stringify([
  { id: 'btc-bitcoin', name: 'Bitcoin', symbol: 'BTC', rank: 1, is_new: false, is_active: true, type: 'coin' },
  { id: 'eth-ethereum', name: 'Ethereum', symbol: 'ETH', rank: 2, is_new: false, is_active: true, type: 'coin' },
]);
const requests: string[] = [];
let server: Server;
let base: string;
let db: TestDatabase;

test.before(async () => {
  db = await testDatabase();
  server = createServer((request, response) => {
    requests.push(request.url ?? '');
    if (request.url === '/v1/coins') return void response.writeHead(200, { 'content-type': 'application/json' }).end(coinList);
    if (reply === 'hang') return;
    response.writeHead(reply.status, { 'content-type': 'application/json' });
    response.end(reply.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
test.after.always(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await db?.close();
});

const supplies = async () =>
  Object.fromEntries(
    (await db.sql`select slug, circulating_supply::text as c, total_supply::text as t, max_supply::text as m from market.coins`).map((r) => [
      r.slug,
      [r.c, r.t, r.m],
    ]),
  );
const health = async () => (await db.sql`select * from market.source_health where name = 'coinpaprika'`)[0]!;

test.serial('a recorded response: supplies applied exactly, unknown ids ignored, nonsense skipped, zero means unknown', async (t) => {
  reply = { status: 200, body: recorded };
  const result = await runSource(db.query, coinpaprikaSupplies(base));
  t.deepEqual(requests, ['/v1/tickers', '/v1/coins'], 'one request for all coins, and the coin list once a day');
  t.deepEqual(result, { tickers: 8, updated: 4, coinList: { coins: 2, adopted: 0, renamed: 0 } });
  const now = await supplies();
  t.deepEqual(now.bitcoin, ['19952731', '19952731', '21000000']);
  t.deepEqual(now.ethereum, ['120694318.25', '120694318.25', null], 'max_supply 0 is unknown: ether stays uncapped');
  t.deepEqual(now.tether, ['184326117820.11', '187011472150.42', null]);
  t.deepEqual(now.dogecoin, ['151542976384.7052', '151542976384.7052', null], 'all digits kept: no float on the way');
  t.deepEqual(now.xrp, ['60000000000', '99986000000', '100000000000'], 'a negative circulating supply is skipped');
  t.deepEqual(now.cardano, ['36000000000', '45000000000', '45000000000'], 'more in circulation than exist is skipped');
  t.deepEqual(now.bnb, ['139000000', '139000000', '200000000'], 'zeros leave the catalogue figures');
  t.is((await db.sql`select count(*)::int as n from market.coin_source_ids where external_id = 'zzz-not-in-catalogue'`)[0]!.n, 0);
  t.like(await health(), { status: 'ok', last_error: null, demo: false, kind: 'reference' });

  // the same response again changes nothing, and the coin list is not asked again that day
  t.deepEqual(await runSource(db.query, coinpaprikaSupplies(base)), { tickers: 8, updated: 0 });
  t.deepEqual(requests, ['/v1/tickers', '/v1/coins', '/v1/tickers']);
});

test.serial('a 500, malformed, truncated, non-list or too slow response: a failed run recorded, nothing changed', async (t) => {
  const before = await supplies();
  const changed = recorded.replaceAll('19952731', '19960000');
  const cases: [typeof reply, RegExp][] = [
    [{ status: 500, body: '{"error":"internal error"}' }, /HTTP 500/],
    [{ status: 429, body: changed }, /HTTP 429/],
    [{ status: 200, body: '<html><body>502 Bad Gateway</body></html>' }, /not JSON or truncated/],
    [{ status: 200, body: changed.slice(0, Math.floor(changed.length / 2)) }, /not JSON or truncated/],
    [{ status: 200, body: '{"error":"id not found"}' }, /expected a JSON array/],
    [{ status: 200, body: JSON.stringify([{ name: 'no id', circulating_supply: 1 }]) }, /has no string id/],
    [{ status: 200, body: '[]' }, /empty list/],
  ];
  for (const [response, message] of cases) {
    reply = response;
    const error = await t.throwsAsync(runSource(db.query, coinpaprikaSupplies(base)), { instanceOf: CoinPaprikaError, message });
    const row = await health();
    t.is(row.status, 'failing', String(message));
    t.is(row.last_error, error!.message);
  }
  reply = 'hang';
  await t.throwsAsync(runSource(db.query, coinpaprikaSupplies(base, 300)), { instanceOf: CoinPaprikaError, message: /no complete answer within 300 ms/ });
  t.is((await health()).status, 'failing');
  t.deepEqual(await supplies(), before, 'no supply changed');

  // and back: the next good response is applied
  reply = { status: 200, body: changed };
  t.like(await runSource(db.query, coinpaprikaSupplies(base)), { updated: 1 });
  t.deepEqual((await supplies()).bitcoin, ['19960000', '19960000', '21000000']);
  t.is((await health()).status, 'ok');
});

test.serial('market.apply_coin_supplies: only coins matched through their id at that source', async (t) => {
  const rows = JSON.stringify([
    { id: 'btc-bitcoin', circulating_supply: '19970000', total_supply: '19970000', max_supply: '21000000' },
    { id: 'eth-ethereum', circulating_supply: 'lots' },
    { id: 'ltc-litecoin', circulating_supply: 76000000, max_supply: 84000000, total_supply: 90000000 },
  ]);
  const [other] = await db.query(`select market.apply_coin_supplies('coingecko', $1::text::jsonb) as n`, [rows]);
  t.is(other!.n, 0, 'coinpaprika ids are not coingecko ids');
  const [applied] = await db.query(`select market.apply_coin_supplies('coinpaprika', $1::text::jsonb) as n`, [rows]);
  t.is(applied!.n, 1, 'a non-numeric figure and a total above the cap are skipped');
  const now = await supplies();
  t.deepEqual(now.bitcoin, ['19970000', '19970000', '21000000']);
  t.deepEqual(now.ethereum, ['120694318.25', '120694318.25', null]);
  t.deepEqual(now.litecoin, ['76000000', '84000000', '84000000']);
});

test.serial('the hourly job: nothing with METADATA_SOURCE=none, a recorded run with coinpaprika', async (t) => {
  const before = requests.length;
  const logged: string[] = [];
  const helpers = {
    logger: { info: (line: string) => logged.push(line) },
    withPgClient: <T>(work: (client: { query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }> }) => Promise<T>) =>
      work({ query: async (text, values) => ({ rows: await db.query(text, values) }) }),
  };
  const run = (source: 'none' | 'coinpaprika') =>
    refreshCoinMetadata({ METADATA_SOURCE: source, COINPAPRIKA_URL: base })({}, helpers as never) as Promise<void>;
  await run('none');
  t.is(requests.length, before, 'no request');
  const lastRun = (await health()).last_run_at as Date;
  reply = { status: 200, body: recorded };
  await run('coinpaprika');
  t.is(requests.length, before + 1);
  t.regex(logged[0]!, /coinpaprika: 8 tickers, supplies of \d+ coins changed/);
  t.true(((await health()).last_run_at as Date) > lastRun);
});
