// The live index price (market.refresh_live_prices) from venue prices written as the stream holder
// writes them: the minute index's rules (outlier, thin market, non-USD quotes), at most once a
// second per coin, a NOTIFY per change, and a malformed batch that writes nothing.
import test from 'ava';
import { Decimal } from 'decimal.js';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { loadIndexMarket, type IndexMarket } from '../helpers/index-market.ts';
import { sleep } from '../../dev/wait.ts';

let db: TestDatabase;
const MINUTE = 60_000;
const T0 = Math.floor(Date.now() / MINUTE) * MINUTE - 10 * MINUTE;
let eurPerUsd: Decimal;

const markets: IndexMarket[] = [
  ['binance', 'BTC/USD', 'btc', 'USD'],
  ['coinbase', 'BTC/USD', 'btc', 'USD'],
  ['kraken', 'BTC/USD', 'btc', 'USD'],
  ['okx', 'BTC/USD', 'btc', 'USD'],
  ['bybit', 'BTC/USD', 'btc', 'USD'],
  ['kraken', 'ETH/EUR', 'eth', 'EUR'],
  ['binance', 'ETH/USDT', 'eth', 'USDT'],
  ['coinbase', 'USDT/USD', 'usdt', 'USD'],
  ['kraken', 'USDT/USD', 'usdt', 'USD'],
];

const live = (venue: string, rows: [symbol: string, price: string][], at = new Date()) =>
  db.sql`select market.record_live_venue_prices(${venue}, ${JSON.stringify(rows.map(([symbol, price]) => ({ symbol, price, at })))}::text::jsonb) as written`;
const refresh = async (minInterval = '0 seconds') =>
  Number((await db.sql`select market.refresh_live_prices(p_min_interval => ${minInterval}::interval) as n`)[0]!.n);
const price = async (slug: string) =>
  (await db.sql`select l.price::text, l.venues, l.version::text from market.live_prices l join market.coins c on c.id = l.coin_id where c.slug = ${slug}`)[0];

test.before(async () => {
  db = await testDatabase();
  eurPerUsd = await loadIndexMarket(db.sql, markets);
});
test.after.always(() => db?.close());

test.serial('the live price equals the minute index built from the same prices: the outlier left out alike', async (t) => {
  const prices: [string, string][] = [['binance', '100000'], ['coinbase', '100030'], ['kraken', '99990'], ['okx', '150000']];
  for (const [venue, value] of prices) await live(venue, [['BTC/USD', value]]);
  t.is(await refresh(), 1);
  // the same prices as closed candles of one minute without volume (both take the plain mean)
  for (const [venue, value] of prices) {
    await db.sql`select * from market.ingest_venue_candles(${venue}, ${JSON.stringify([['BTC/USD', T0, value, value, value, value, '0']])}::text::jsonb)`;
  }
  const [built] = await db.sql`select * from market.build_index_bars(${new Date(T0)}, ${new Date(T0 + MINUTE)})`;
  t.is(built!.excluded, 1);
  const [bar] = await db.sql`select b.close::text from market.coin_bars_1m b join market.coins c on c.id = b.coin_id where c.slug = 'btc' and b.time = ${new Date(T0)}`;
  const btc = (await price('btc'))!;
  t.is(btc.price, bar!.close);
  t.is(btc.price, new Decimal(100000).plus(100030).plus(99990).div(3).toSignificantDigits(10).toString());
  t.is(btc.venues, 3);
});

test.serial('a thin market is left out while a deep one exists; the price is weighted by 24h volume', async (t) => {
  await db.sql`select market.ingest_venue_tickers('bybit', ${JSON.stringify([{ symbol: 'BTC/USD', last: '100500', quoteVolume: '5000', baseVolume: '0.05' }])}::text::jsonb)`;
  await db.sql`select market.ingest_venue_tickers('binance', ${JSON.stringify([{ symbol: 'BTC/USD', last: '100000', quoteVolume: '3000000', baseVolume: '30' }])}::text::jsonb)`;
  await db.sql`select market.ingest_venue_tickers('coinbase', ${JSON.stringify([{ symbol: 'BTC/USD', last: '100030', quoteVolume: '1000000', baseVolume: '10' }])}::text::jsonb)`;
  await live('bybit', [['BTC/USD', '100500']]);
  await live('okx', [['BTC/USD', '100010']]);
  await live('kraken', [['BTC/USD', '100020']]);
  t.is(await refresh(), 1);
  const btc = (await price('btc'))!;
  // bybit (5 000 USD a day) is out; kraken and okx have no ticker volume: weight 0 beside those with volume
  const expected = new Decimal(100000).times(3000000).plus(new Decimal(100030).times(1000000)).div(4000000).toSignificantDigits(10);
  t.is(btc.price, expected.toString());
  t.is(btc.venues, 4);
});

test.serial('non-USD quotes: EUR through the FX rate, USDT at its median live price on USD markets', async (t) => {
  await live('coinbase', [['USDT/USD', '1.002']]);
  await live('kraken', [['USDT/USD', '0.998'], ['ETH/EUR', eurPerUsd.times(3000).toFixed(8)]]);
  await live('binance', [['ETH/USDT', '3001']]);
  await refresh();
  const eth = (await price('eth'))!;
  // EUR → 3000 USD; USDT at the median of 1.002 and 0.998 = 1.000 → 3001 USD; the plain mean
  const eur = new Decimal(eurPerUsd.times(3000).toFixed(8)).div(eurPerUsd);
  t.is(eth.price, eur.plus(3001).div(2).toSignificantDigits(10).toString());
  t.is(eth.venues, 2);
});

test.serial('at most once a second per coin; an unchanged price takes no version; a NOTIFY names the newest version', async (t) => {
  const heard: string[] = [];
  const { unlisten } = await db.sql.listen('live_prices', (payload) => heard.push(payload));
  const before = (await price('btc'))!;
  await live('binance', [['BTC/USD', '100005']]);
  t.is(await refresh('1 second'), 0, 'the last change is younger than a second');
  await sleep(1100);
  t.is(await refresh('1 second'), 1);
  const after = (await price('btc'))!;
  t.true(BigInt(after.version) > BigInt(before.version));
  t.is(await refresh('0 seconds'), 0, 'nothing changed');
  await sleep(200);
  t.deepEqual(heard, [after.version]);
  await unlisten();
});

test.serial('a stale venue is left out by age; a malformed batch writes nothing', async (t) => {
  // okx's stream stalled a minute ago: its last price ages out
  await db.sql`update market.live_venue_prices p set at = now() - interval '1 minute' from market.exchanges e where e.id = p.exchange_id and e.slug = 'okx'`;
  const error = await t.throwsAsync(live('kraken', [['BTC/USD', '100021'], ['BTC/USD', 'garbage']]));
  t.regex(error!.message, /invalid input syntax/);
  const [kraken] = await db.sql`select p.price::text from market.live_venue_prices p join market.exchanges e on e.id = p.exchange_id
    join market.coins c on c.id = p.coin_id where e.slug = 'kraken' and c.slug = 'btc'`;
  t.is(kraken!.price, '100020');
  await live('binance', [['BTC/USD', '100007']]);
  await refresh();
  t.is((await price('btc'))!.venues, 3);
  const [snapshot] = await db.sql`select count(*)::int as n from market.live_prices_since(0, '{USD,EUR}')`;
  t.is(snapshot!.n, 6);
});

test.serial('one market per coin and venue, its most traded: ETH/BTC beside ETH/USDT on binance does not feed ETH', async (t) => {
  await db.sql`insert into market.venue_markets (exchange_id, symbol, exchange_symbol, base, quote, base_coin_id, quote_coin_id)
    select e.id, 'ETH/BTC', 'ETHBTC', 'ETH', 'BTC', (select id from market.coins where slug = 'eth'), (select id from market.coins where slug = 'btc')
    from market.exchanges e where e.slug = 'binance'`;
  const tickers = (venue: string, rows: [symbol: string, last: string, quoteVolume: string][]) =>
    db.sql`select market.ingest_venue_tickers(${venue}, ${JSON.stringify(rows.map(([symbol, last, quoteVolume]) => ({ symbol, last, quoteVolume, baseVolume: '1' })))}::text::jsonb)`;
  // the quote coins' current prices give their markets' tickers a USD volume
  await db.sql`insert into market.coin_state (coin_id, price, last_updated)
    select c.id, v.price, now() from (values ('btc', 100000::numeric), ('usdt', 1::numeric)) v (slug, price) join market.coins c on c.slug = v.slug
    on conflict (coin_id) do update set price = excluded.price`;
  // ETH/USDT is binance's most traded ETH market; ETH/BTC trades less there
  await tickers('binance', [['ETH/USDT', '3001', '50000000'], ['ETH/BTC', '0.0309', '10']]);
  await tickers('kraken', [['ETH/EUR', eurPerUsd.times(3000).toFixed(8), eurPerUsd.times(20000000).toFixed(2)]]);
  const volumes = Object.fromEntries((await db.sql<{ symbol: string; volume: string }[]>`
    select t.exchange_symbol as symbol, t.volume_usd::text as volume from market.tickers t join market.coins c on c.id = t.base_coin_id where c.slug = 'eth'`)
    .map((row) => [row.symbol, new Decimal(row.volume)]));
  t.true(volumes['ETHUSDT']!.gt(volumes['ETHBTC']!));
  const [chosen] = await db.sql`select i.symbol from market.index_markets() i join market.exchanges e on e.id = i.exchange_id
    join market.coins c on c.id = i.coin_id where e.slug = 'binance' and c.slug = 'eth'`;
  t.is(chosen!.symbol, 'ETH/USDT', 'the market the minute index reads candles of');
  await live('coinbase', [['USDT/USD', '1.002'], ['BTC/USD', '100000']]);
  await live('kraken', [['USDT/USD', '0.998'], ['ETH/EUR', eurPerUsd.times(3000).toFixed(8)], ['BTC/USD', '100000']]);
  // ETH/BTC 3 % above the others: counted, it would move ETH and make three markets (the outlier rule's minimum)
  await live('binance', [['ETH/USDT', '3001'], ['ETH/BTC', '0.0309'], ['BTC/USD', '100000']]);
  await refresh();
  const eth = (await price('eth'))!;
  // the documented method: kraken ETH/EUR (3000 USD) and binance ETH/USDT (3001 USD at USDT's median 1.000), weighted by 24h USD volume
  const eur = new Decimal(eurPerUsd.times(3000).toFixed(8)).div(eurPerUsd);
  const expected = eur.times(volumes['ETHEUR']!).plus(new Decimal(3001).times(volumes['ETHUSDT']!)).div(volumes['ETHEUR']!.plus(volumes['ETHUSDT']!));
  t.is(eth.price, expected.toSignificantDigits(10).toString());
  t.is(eth.venues, 2);
});

test.serial('a venue whose stream broke off: out at once, its price age growing; back only once its stream has been clean for the readmission period', async (t) => {
  const refreshWith = async (readmit: string) =>
    Number((await db.sql`select market.refresh_live_prices(p_min_interval => '0 seconds', p_readmit_after => ${readmit}::interval) as n`)[0]!.n);
  const all = async () => {
    for (const venue of ['binance', 'coinbase', 'kraken']) await live(venue, [['BTC/USD', '100000']]);
  };
  const age = async () => {
    const [row] = await db.sql`select value from app.metrics_snapshot('1 minute') where metric = 'mdapi_live_price_age_seconds' and labels ->> 'venue' = 'coinbase'`;
    return row?.value as number | undefined;
  };
  await all();
  await refreshWith('10 seconds');
  const before = (await price('btc'))!.venues;
  // the stream broke off: coinbase is out at once, its prices kept and ageing
  await db.sql`select market.forget_live_venue_prices('coinbase')`;
  await live('binance', [['BTC/USD', '100001']]);
  await refreshWith('10 seconds');
  t.is((await price('btc'))!.venues, before - 1);
  const first = await age();
  t.not(first, undefined, 'the cut venue still has an age');
  await sleep(1_100);
  t.true((await age())! >= first! + 1, 'its age keeps growing');
  // resynchronised from REST and streaming again: not yet back
  await all();
  await refreshWith('10 seconds');
  t.is((await price('btc'))!.venues, before - 1, 'not readmitted at its REST price');
  const [stream] = await db.sql`select clean_since is not null as clean from market.live_venue_streams s join market.exchanges e on e.id = s.exchange_id where e.slug = 'coinbase'`;
  t.true(stream!.clean);
  // a break within the clean period starts it again
  await db.sql`select market.forget_live_venue_prices('coinbase')`;
  await all();
  await sleep(1_100);
  await live('binance', [['BTC/USD', '100002']]);
  await refreshWith('1 second');
  t.is((await price('btc'))!.venues, before, 'clean for a second: back with a one-second period');
});

test.serial('each change is kept for resumption, for the replay window only', async (t) => {
  const [kept] = await db.sql`select count(*)::int as n from market.live_price_changes`;
  t.true(kept!.n > 0);
  const [newest] = await db.sql`select max(version)::text as v from market.live_prices`;
  const [change] = await db.sql`select max(version)::text as v from market.live_price_changes`;
  t.is(change!.v, newest!.v);
  await live('binance', [['BTC/USD', '100100']]);
  await db.sql`select market.refresh_live_prices(p_min_interval => '0 seconds', p_replay => '0 seconds')`;
  const [left] = await db.sql`select count(*)::int as n from market.live_price_changes where version <= ${newest!.v}::bigint`;
  t.is(left!.n, 0, 'older than the window: trimmed');
  // a client at the trimmed newest version missed only what is kept; one before it missed a trimmed change
  const [covers] = await db.sql`select market.live_replay_covers(${newest!.v}::bigint) as at_newest, market.live_replay_covers(${newest!.v}::bigint - 1) as before`;
  t.like(covers, { at_newest: true, before: false });
});
