// Coins from the venues (issue 45): a venue's base code that maps to no coin becomes one, named by
// the catalogue's override, CoinPaprika's coin list (served small from loopback) or the venue; the
// collision cases (a shared ticker, a catalogue override, a late second asset, a renamed coin); a
// coin list that is down, cut short or garbage changes nothing; a market list that lost more than
// half of a venue's markets is refused whole.
import test from 'ava';
import { createServer, type Server } from 'node:http';
import { ensureCoinCatalogue } from '../../src/sources/catalogue/index.ts';
import { CoinPaprikaError, refreshCoinList } from '../../src/sources/coinpaprika.ts';
import { BadVenueAnswer } from '../../src/sources/exchanges/answers.ts';
import { loadVenueMarkets, type LiveVenue } from '../../src/sources/exchanges/index.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';

interface Entry { id: string; symbol: string; name: string; rank?: number; is_active?: boolean; type?: string }
/** what the loopback CoinPaprika answers at /v1/coins next */
let reply: { status: number; body: string } = { status: 200, body: '[]' };
let server: Server;
let base: string;
let db: TestDatabase;
let api: TestApi;

const LIST: Entry[] = [
  { id: 'btc-bitcoin', symbol: 'BTC', name: 'Bitcoin', rank: 1, is_active: true, type: 'coin' },
  { id: 'xyz-some-name', symbol: 'XYZ', name: 'Some Name', rank: 120, is_active: true, type: 'coin' },
  { id: 'lnk-bitcoin', symbol: 'LNK', name: 'Bitcoin Link', rank: 900, is_active: true, type: 'token' },
  { id: 'wbx-wrapped-box', symbol: 'WBX', name: 'Wrapped Box', rank: 700, is_active: true, type: 'token' },
  { id: 'shr-beta-share', symbol: 'SHR', name: 'Beta Share', rank: 0, is_active: true, type: 'token' },
  { id: 'shr-alpha-share', symbol: 'SHR', name: 'Alpha Share', rank: 300, is_active: true, type: 'token' },
  { id: 'shr-gamma', symbol: 'SHR', name: 'Gamma', rank: 20, is_active: false, type: 'token' },
  { id: 'ovr-overridden', symbol: 'OVR', name: 'Overridden', rank: 50, is_active: true, type: 'coin' },
  { id: 'rnmd-renamed-token', symbol: 'RNMD', name: 'Old Name', rank: 400, is_active: true, type: 'token' },
  { id: 'btx-bitcoin-x', symbol: 'BTX', name: 'Bitcoin X', rank: 800, is_active: true, type: 'token' },
];

const serve = (list: unknown, status = 200) => void (reply = { status, body: typeof list === 'string' ? list : JSON.stringify(list) });
/** the coin list is due again (it is fetched at most once a day) */
const due = () => db.sql`update market.data_sources set settings = settings - 'coin_list_loaded_at' where name = 'coinpaprika'`;
const spot = (pairs: string[]) =>
  JSON.stringify(pairs.map((pair) => {
    const [base, quote] = pair.split('/');
    return { symbol: pair, id: pair.replace('/', ''), base, quote, type: 'spot', active: true };
  }));
const ingest = (venue: string, pairs: string[]) => db.sql`select * from market.ingest_venue_markets(${venue}, ${spot(pairs)}::text::jsonb)`;
/** the coin a venue's market is mapped to, by slug (null: none) */
const coinOf = async (venue: string, symbol: string) =>
  ((await db.sql`select c.slug from market.venue_markets m join market.exchanges e on e.id = m.exchange_id
    left join market.coins c on c.id = m.base_coin_id where e.slug = ${venue} and m.symbol = ${symbol}`)[0]?.slug ?? null) as string | null;
const coin = async (slug: string) => (await db.sql`select * from market.coins where slug = ${slug}`)[0];
const paprikaIds = async (slug: string) =>
  (await db.sql`select s.external_id from market.coin_source_ids s join market.coins c on c.id = s.coin_id
    where c.slug = ${slug} and s.source = 'coinpaprika' order by 1`).map((row) => row.external_id as string);
/** every coin as the API would name it, and the stored list: what a refused list must leave alone */
const everything = async () => ({
  coins: await db.sql`select id, slug, name, symbol, type, status from market.coins order by id`,
  list: await db.sql`select * from market.coin_metadata_list order by external_id`,
  aliases: await db.sql`select slug, coin_id from market.coin_slug_aliases order by slug`,
});

test.before(async () => {
  db = await testDatabase();
  server = createServer((request, response) => {
    response.writeHead(request.url === '/v1/coins' ? reply.status : 404, { 'content-type': 'application/json' });
    response.end(request.url === '/v1/coins' ? reply.body : '{"error":"not served"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  await ensureCoinCatalogue(db.query);
  await db.sql`select market.load_exchange_venues(${JSON.stringify([{ slug: 'gate', name: 'Gate' }, { slug: 'mexc', name: 'MEXC' }])}::text::jsonb)`;
  api = await testApi(db);
});
test.after.always(async () => {
  await api?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await db?.close();
});

test.serial('no coin list yet: (c) a coin named by the venue, for codes quoted in USD, EUR, a USD stablecoin, BTC or ETH only', async (t) => {
  await db.sql`insert into market.venue_symbol_overrides (exchange, symbol, coin_id) values ('gate', 'NUL', null)`;
  const [loaded] = await ingest('gate', ['BTC/USDT', 'ETH/BTC', 'ABC/USDT', 'ABC/TRY', 'EURX/EUR', 'BTCQ/BTC', 'ETHQ/ETH', 'USDQ/USD',
    'DAIQ/DAI', 'TRYONLY/TRY', 'NUL/USDT', 'EUR/USDT', 'A.B/USDT', 'A-B/USDT']);
  t.like(loaded, { markets: 14 });
  t.like(await coin('abc-gate'), { name: 'ABC', symbol: 'ABC', type: 'token', status: 'active', source: 'exchanges', discovered_by: 'venue' });
  for (const [pair, slug] of [['ABC/USDT', 'abc-gate'], ['ABC/TRY', 'abc-gate'], ['EURX/EUR', 'eurx-gate'], ['BTCQ/BTC', 'btcq-gate'],
    ['ETHQ/ETH', 'ethq-gate'], ['USDQ/USD', 'usdq-gate'], ['DAIQ/DAI', 'daiq-gate'], ['BTC/USDT', 'bitcoin']] as const) {
    t.is(await coinOf('gate', pair), slug, pair);
  }
  t.is(await coinOf('gate', 'TRYONLY/TRY'), null, 'quoted in something else only: not discovered');
  t.is(await coinOf('gate', 'NUL/USDT'), null, 'the venue\'s override says no coin');
  t.is(await coinOf('gate', 'EUR/USDT'), null, 'a fiat code is no coin');
  // two codes with one slug: one coin, the other code waits (never two assets merged)
  t.is(await coinOf('gate', 'A-B/USDT'), 'a-b-gate');
  t.is(await coinOf('gate', 'A.B/USDT'), null);
  // another venue's ABC keeps to the coin the code already maps to
  await ingest('mexc', ['BTC/USDT', 'ABC/USDT']);
  t.is(await coinOf('mexc', 'ABC/USDT'), 'abc-gate');
  t.is(await coin('abc-mexc'), undefined);
  // a second load makes nothing new
  const count = async () => (await db.sql`select count(*)::int as n from market.coins`)[0]!.n;
  const before = await count();
  await ingest('gate', ['BTC/USDT', 'ETH/BTC', 'ABC/USDT', 'ABC/TRY', 'EURX/EUR', 'BTCQ/BTC', 'ETHQ/ETH', 'USDQ/USD', 'DAIQ/DAI', 'TRYONLY/TRY', 'NUL/USDT', 'EUR/USDT', 'A.B/USDT', 'A-B/USDT']);
  t.is(await count(), before);
});

test.serial('with the coin list: (b) a coin named after its best-ranked active entry, linked to it so supplies apply', async (t) => {
  serve(LIST);
  await due();
  t.deepEqual(await refreshCoinList(db.query, base), { coins: LIST.length, adopted: 0, renamed: 0 });
  t.is(await refreshCoinList(db.query, base), undefined, 'once a day');
  // a coin holding an entry's id under another symbol is that entry's coin
  await db.sql`with c as (insert into market.coins (slug, symbol, name, type, source) values ('wrapped-box-old', 'WBOX', 'Wrapped Box', 'token', 'catalogue') returning id)
    insert into market.coin_source_ids (coin_id, source, external_id) select id, 'coinpaprika', 'wbx-wrapped-box' from c`;
  await ingest('gate', ['BTC/USDT', 'XYZ/USDT', 'LNK/USDT', 'WBX/USDT', 'ABC/USDT', 'A-B/USDT', 'BTCQ/BTC', 'ETHQ/ETH', 'USDQ/USD', 'DAIQ/DAI', 'EURX/EUR']);
  t.like(await coin('some-name'), { name: 'Some Name', symbol: 'XYZ', type: 'coin', status: 'active', discovered_by: 'metadata' });
  t.deepEqual(await paprikaIds('some-name'), ['xyz-some-name']);
  t.is(await coinOf('gate', 'XYZ/USDT'), 'some-name', 'the id without its leading "xyz-"');
  t.is(await coinOf('gate', 'LNK/USDT'), 'lnk-bitcoin', 'bitcoin is taken: the whole id');
  t.like(await coin('lnk-bitcoin'), { name: 'Bitcoin Link', type: 'token' });
  t.is(await coinOf('gate', 'WBX/USDT'), 'wrapped-box-old');
  t.is(await coin('wrapped-box'), undefined);
  const [applied] = await db.sql`select market.apply_coin_supplies('coinpaprika', ${JSON.stringify([{ id: 'xyz-some-name', circulating_supply: '1234.5', total_supply: '2000' }])}::text::jsonb) as n`;
  t.is(applied!.n, 1);
  t.like(await coin('some-name'), { circulating_supply: '1234.5', total_supply: '2000' });
});

test.serial('a shared ticker: the best-ranked active entry is the coin; the other entries are never merged into it', async (t) => {
  await ingest('gate', ['BTC/USDT', 'XYZ/USDT', 'LNK/USDT', 'WBX/USDT', 'ABC/USDT', 'A-B/USDT', 'BTCQ/BTC', 'ETHQ/ETH', 'USDQ/USD', 'DAIQ/DAI', 'EURX/EUR', 'SHR/USDT']);
  await ingest('mexc', ['BTC/USDT', 'ABC/USDT', 'SHR/USDT']);
  // gamma ranks 20 but is inactive; alpha (300) beats unranked beta
  t.is(await coinOf('gate', 'SHR/USDT'), 'alpha-share');
  t.is(await coinOf('mexc', 'SHR/USDT'), 'alpha-share');
  t.deepEqual(await paprikaIds('alpha-share'), ['shr-alpha-share']);
  t.is(await coin('beta-share'), undefined);
  t.is(await coin('gamma'), undefined);
  const before = (await coin('alpha-share'))!.circulating_supply;
  await db.sql`select market.apply_coin_supplies('coinpaprika', ${JSON.stringify([{ id: 'shr-beta-share', circulating_supply: '999' }])}::text::jsonb)`;
  t.is((await coin('alpha-share'))!.circulating_supply, before, 'the other asset\'s supply is not this coin\'s');
});

test.serial('a catalogue override: the venue\'s venue_symbols entry wins over the coin list, a null one means no coin', async (t) => {
  await db.sql`select market.import_coin_catalogue(${JSON.stringify({
    coins: [{ slug: 'override-coin', symbol: 'OVRC', name: 'Override Coin', type: 'coin' }],
    venue_symbols: [{ exchange: 'gate', symbol: 'OVR', coin: 'override-coin' }, { exchange: 'mexc', symbol: 'OVR', coin: null }],
  })}::text::jsonb)`;
  await ingest('gate', ['BTC/USDT', 'XYZ/USDT', 'LNK/USDT', 'WBX/USDT', 'ABC/USDT', 'A-B/USDT', 'BTCQ/BTC', 'ETHQ/ETH', 'USDQ/USD', 'DAIQ/DAI', 'EURX/EUR', 'SHR/USDT', 'OVR/USDT']);
  await ingest('mexc', ['BTC/USDT', 'ABC/USDT', 'SHR/USDT', 'OVR/USDT']);
  t.is(await coinOf('gate', 'OVR/USDT'), 'override-coin');
  t.is(await coinOf('mexc', 'OVR/USDT'), null);
  t.is(await coin('overridden'), undefined, 'the list\'s OVR made no coin');
  // a venue without an override gets the list's OVR
  await db.sql`select market.load_exchange_venues(${JSON.stringify([{ slug: 'bitget', name: 'Bitget' }])}::text::jsonb)`;
  await ingest('bitget', ['BTC/USDT', 'OVR/USDT']);
  t.is(await coinOf('bitget', 'OVR/USDT'), 'overridden');
  t.is(await coinOf('gate', 'OVR/USDT'), 'override-coin', 'gate\'s override still wins');
});

test.serial('a late second asset: the venue\'s markets move to the catalogue\'s coin; bars already written stay with the first', async (t) => {
  const gate = ['BTC/USDT', 'XYZ/USDT', 'LNK/USDT', 'WBX/USDT', 'ABC/USDT', 'A-B/USDT', 'BTCQ/BTC', 'ETHQ/ETH', 'USDQ/USD', 'DAIQ/DAI', 'EURX/EUR', 'SHR/USDT', 'OVR/USDT', 'LAT/USDT'];
  await ingest('gate', gate);
  await ingest('mexc', ['BTC/USDT', 'ABC/USDT', 'SHR/USDT', 'OVR/USDT', 'LAT/USDT']);
  t.is(await coinOf('gate', 'LAT/USDT'), 'lat-gate');
  t.is(await coinOf('mexc', 'LAT/USDT'), 'lat-gate');
  const minute = Math.floor(Date.now() / 60_000) * 60_000 - 120_000;
  await db.sql`select * from market.ingest_venue_candles('gate', ${JSON.stringify([['LAT/USDT', minute, '1.0', '1.2', '0.9', '1.1', '50']])}::text::jsonb)`;
  const bars = async (slug: string) =>
    (await db.sql`select count(*)::int as n from market.venue_bars_1m b join market.coins c on c.id = b.coin_id where c.slug = ${slug}`)[0]!.n;
  t.is(await bars('lat-gate'), 1);
  // the catalogue learns that gate's LAT is another asset
  await db.sql`select market.import_coin_catalogue(${JSON.stringify({
    coins: [{ slug: 'late-asset', symbol: 'LAT', name: 'Late Asset', type: 'token' }, { slug: 'override-coin', symbol: 'OVRC', name: 'Override Coin', type: 'coin' }],
    venue_symbols: [{ exchange: 'gate', symbol: 'OVR', coin: 'override-coin' }, { exchange: 'mexc', symbol: 'OVR', coin: null }, { exchange: 'gate', symbol: 'LAT', coin: 'late-asset' }],
  })}::text::jsonb)`;
  await ingest('gate', gate);
  await ingest('mexc', ['BTC/USDT', 'ABC/USDT', 'SHR/USDT', 'OVR/USDT', 'LAT/USDT']);
  t.is(await coinOf('gate', 'LAT/USDT'), 'late-asset', 'gate\'s markets move from then on');
  t.is(await coinOf('mexc', 'LAT/USDT'), 'lat-gate', 'mexc\'s LAT is still the first asset');
  await db.sql`select * from market.ingest_venue_candles('gate', ${JSON.stringify([['LAT/USDT', minute + 60_000, '5.0', '5.2', '4.9', '5.1', '50']])}::text::jsonb)`;
  t.is(await bars('lat-gate'), 1, 'the bar already written stays with the first coin');
  t.is(await bars('late-asset'), 1);
  t.like(await coin('lat-gate'), { slug: 'lat-gate', status: 'active' });
});

test.serial('a renamed coin: a discovered coin takes the list\'s new name, keeps its slug, and the new name\'s slug is an alias the API answers', async (t) => {
  serve(LIST);
  await due();
  await refreshCoinList(db.query, base);
  await ingest('mexc', ['BTC/USDT', 'ABC/USDT', 'SHR/USDT', 'OVR/USDT', 'LAT/USDT', 'RNMD/USDT', 'BTX/USDT']);
  t.is(await coinOf('mexc', 'RNMD/USDT'), 'renamed-token');
  t.is(await coinOf('mexc', 'BTX/USDT'), 'bitcoin-x');
  const renamed = LIST.map((entry) =>
    entry.id === 'rnmd-renamed-token' ? { ...entry, name: 'New Name' }
    : entry.id === 'btc-bitcoin' ? { ...entry, name: 'Bitcoin Renamed' }
    // an alias never shadows a real slug
    : entry.id === 'btx-bitcoin-x' ? { ...entry, name: 'Bitcoin' } : entry);
  serve(renamed);
  await due();
  t.deepEqual(await refreshCoinList(db.query, base), { coins: LIST.length, adopted: 0, renamed: 2 });
  t.like(await coin('renamed-token'), { name: 'New Name', slug: 'renamed-token' });
  t.like(await coin('bitcoin'), { name: 'Bitcoin' }, 'a catalogue coin keeps the catalogue\'s name');
  t.like(await coin('bitcoin-x'), { name: 'Bitcoin' });
  t.deepEqual((await db.sql`select a.slug, c.slug as coin from market.coin_slug_aliases a join market.coins c on c.id = a.coin_id order by 1`).map((row) => [row.slug, row.coin]),
    [['new-name', 'renamed-token']]);
  const key = await api.key({ plan: 'pro' });
  const byAlias = await api.get('/api/v1/coins/new-name', key);
  t.is(byAlias.status, 200);
  t.like(byAlias.body.data, { slug: 'renamed-token', name: 'New Name' });
  t.like((await api.get('/api/v1/coins/NEW-NAME', key)).body.data, { slug: 'renamed-token' });
  t.like((await api.get('/api/v1/coins/bitcoin', key)).body.data, { slug: 'bitcoin' });
  t.is((await api.get('/api/v1/coins/old-name', key)).status, 404);
});

test.serial('a coin list that is down, cut short or garbage leaves every coin and the stored list as they were', async (t) => {
  const before = await everything();
  const renamedAll = LIST.map((entry) => ({ ...entry, name: `${entry.name} Again` }));
  const cases: [typeof reply, RegExp][] = [
    [{ status: 503, body: JSON.stringify(renamedAll) }, /HTTP 503/],
    [{ status: 200, body: '<html>502 Bad Gateway</html>' }, /not JSON or truncated/],
    [{ status: 200, body: JSON.stringify(renamedAll).slice(0, 300) }, /not JSON or truncated/],
    [{ status: 200, body: '{"error":"rate limited"}' }, /expected a JSON array of coins/],
    [{ status: 200, body: '[]' }, /empty list of coins/],
    [{ status: 200, body: JSON.stringify([...renamedAll, { id: 'no-name', symbol: 'NON' }]) }, /coin \[10\] has no string name/],
    // a list cut short: fewer than half the entries stored
    [{ status: 200, body: JSON.stringify(renamedAll.slice(0, 4)) }, /cut short: 4 coins where 10 are stored/],
  ];
  for (const [answer, message] of cases) {
    reply = answer;
    await due();
    await t.throwsAsync(refreshCoinList(db.query, base), { instanceOf: CoinPaprikaError, message }, String(message));
  }
  await due();
  t.deepEqual(await everything(), before, 'nothing renamed, dropped or stored');
  // the SQL stands behind the fetch's checks
  await t.throwsAsync(db.sql`select market.load_coin_metadata_list('coinpaprika', ${JSON.stringify([{ id: 1, symbol: 'X', name: 'X' }])}::text::jsonb)`, { message: /entry \[0\] has no string id/ });
  t.deepEqual(await everything(), before);
});

test.serial('a market list that lost more than half of a venue\'s markets is refused whole: BadVenueAnswer, nothing delisted', async (t) => {
  const active = async () =>
    (await db.sql`select count(*)::int as n from market.venue_markets m join market.exchanges e on e.id = m.exchange_id where e.slug = 'mexc' and m.active`)[0]!.n;
  const listed = await active();
  t.is(listed, 7);
  await t.throwsAsync(ingest('mexc', ['BTC/USDT', 'ABC/USDT', 'NEWCOIN/USDT']), { message: /cut short: 3 active markets where 7 are listed/ });
  t.is(await active(), listed);
  t.is(await coin('newcoin-mexc'), undefined, 'no coin made from a refused list');
  // through the exchange source: the venue's answer is bad, and the gate backs it off
  const markets = Object.fromEntries(['BTC/USDT', 'ABC/USDT'].map((pair) => {
    const [base, quote] = pair.split('/');
    return [pair, { symbol: pair, id: pair.replace('/', ''), base, quote, type: 'spot', active: true }];
  }));
  const venue = { id: 'mexc', endpoint: '/api/v3/exchangeInfo', exchange: { loadMarkets: async () => markets }, clock: { now: () => 0 } } as unknown as LiveVenue;
  await t.throwsAsync(loadVenueMarkets(db.query, venue), { instanceOf: BadVenueAnswer, message: /^mexc \/api\/v3\/exchangeInfo: market list of mexc cut short: 2 active markets where 7 are listed/ });
  t.is(await active(), listed);
  // half of them is a normal delisting
  await ingest('mexc', ['BTC/USDT', 'ABC/USDT', 'SHR/USDT', 'OVR/USDT']);
  t.is(await active(), 4);
});

test.serial('a coin the venue named while the list was missing takes the list\'s entry when one comes: linked and named, its slug kept, the entry\'s slug an alias', async (t) => {
  t.like(await coin('abc-gate'), { name: 'ABC', discovered_by: 'venue' });
  t.like(await coin('lat-gate'), { discovered_by: 'venue' });
  serve([...LIST,
    { id: 'abc-alphabet-coin', symbol: 'ABC', name: 'Alphabet Coin', rank: 600, is_active: true, type: 'coin' },
    { id: 'abc-second-abc', symbol: 'ABC', name: 'Second ABC', rank: 0, is_active: true, type: 'token' },
    // LAT: the best-ranked entry is already another coin's: lat-gate is left as it is
    { id: 'lat-taken', symbol: 'LAT', name: 'Taken', rank: 10, is_active: true, type: 'token' }]);
  await db.sql`with c as (insert into market.coins (slug, symbol, name, type, source) values ('taken-elsewhere', 'TKN', 'Taken', 'token', 'catalogue') returning id)
    insert into market.coin_source_ids (coin_id, source, external_id) select id, 'coinpaprika', 'lat-taken' from c`;
  await due();
  t.like(await refreshCoinList(db.query, base), { adopted: 1 });
  t.like(await coin('abc-gate'), { name: 'Alphabet Coin', type: 'coin', discovered_by: 'metadata', slug: 'abc-gate' });
  t.deepEqual(await paprikaIds('abc-gate'), ['abc-alphabet-coin']);
  t.like(await coin('lat-gate'), { name: 'LAT', discovered_by: 'venue' });
  t.deepEqual(await paprikaIds('lat-gate'), []);
  t.like((await api.get('/api/v1/coins/alphabet-coin', await api.key({ plan: 'pro' }))).body.data, { slug: 'abc-gate', name: 'Alphabet Coin' });
  // the markets keep their coin
  t.is(await coinOf('gate', 'ABC/USDT'), 'abc-gate');
  t.is(await coinOf('mexc', 'ABC/USDT'), 'abc-gate');
});
