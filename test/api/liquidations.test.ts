// Liquidations group over HTTP against a small feed: rows at known ages (minutes to days), the
// daily rollup refreshed over them, and the figures each endpoint must return, computed here.
import test from 'ava';
import { Decimal } from 'decimal.js';
import { useApi } from '../helpers/http.ts';
import { iso, isoDate, loadCoinFixture } from './fixtures.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const NOTE = /^Source coverage: OKX swap markets\./;

interface Row { ageMs: number; symbol: string; coinId: number | null; position: 'long' | 'short'; price: string; quantity: string }
const ROWS: Row[] = [
  { ageMs: 10 * MINUTE, symbol: 'ALP-USDT-SWAP', coinId: 101, position: 'long', price: '110.5', quantity: '2' },
  { ageMs: 1 * HOUR, symbol: 'XYZ-USDT-SWAP', coinId: null, position: 'long', price: '7', quantity: '1000' },
  { ageMs: 2 * HOUR, symbol: 'ALP-USDT-SWAP', coinId: 101, position: 'short', price: '111', quantity: '100' },
  { ageMs: 5 * HOUR, symbol: 'BET-USDT-SWAP', coinId: 102, position: 'short', price: '30.125', quantity: '40' },
  { ageMs: 30 * HOUR, symbol: 'BET-USDT-SWAP', coinId: 102, position: 'long', price: '30.25', quantity: '1000' },
  { ageMs: 47 * HOUR, symbol: 'BET-USDT-SWAP', coinId: 102, position: 'short', price: '29', quantity: '20' },
  // beyond the feed's 48 hours (not yet pruned here): only the daily rollup shows them
  { ageMs: 5 * 24 * HOUR, symbol: 'ALP-USDT-SWAP', coinId: 101, position: 'long', price: '90', quantity: '50' },
  { ageMs: 5 * 24 * HOUR + MINUTE, symbol: 'ALP-USDT-SWAP', coinId: 101, position: 'short', price: '91', quantity: '10' },
];
let now = 0;
const at = (r: Row) => now - r.ageMs;
const usd = (r: Row) => new Decimal(r.price).mul(r.quantity).toDecimalPlaces(2).toNumber();
const sum = (rows: Row[]) => rows.reduce((total, r) => total.plus(usd(r)), new Decimal(0)).toDecimalPlaces(2).toNumber();

const handles = useApi(test, {
  setup: async ({ db }) => {
    await loadCoinFixture(db);
    const { sql } = db;
    await sql`insert into market.exchanges (id, slug, name, source) values (20, 'okx', 'OKX', 'api-test')`;
    const [row] = await sql`select extract(epoch from now()) * 1000 as now`;
    now = Math.floor(Number(row!.now));
    for (const r of ROWS) {
      await sql`
        insert into market.liquidations (time, exchange, symbol, coin_id, instrument, position, "order", price, quantity, value_usd, source)
        values (${iso(at(r)).replace('+00:00', 'Z')}::timestamptz, 'okx', ${r.symbol}, ${r.coinId}, 'swap', ${r.position},
          ${r.position === 'long' ? 'sell' : 'buy'}, ${r.price}::numeric, ${r.quantity}::numeric, ${r.price}::numeric * ${r.quantity}::numeric, 'simulated-liquidations')`;
    }
    await sql`call refresh_continuous_aggregate('market.liquidations_1d', null, null)`;
  },
});
let key: Promise<string> | undefined;
const get = async (path: string) => handles.api.get(path, await (key ??= handles.api.key({ plan: 'free' })));
const inFeed = ROWS.filter((r) => r.ageMs < 48 * HOUR).sort((a, b) => a.ageMs - b.ageMs);

test('/liquidations: the last 48 hours newest first, typed, paginated, with retention and note', async (t) => {
  const response = await get('/api/v1/liquidations?per_page=2&page=2');
  t.is(response.status, 200);
  const expected = inFeed.slice(2, 4).map((r) => ({
    symbol: r.symbol, exchange: { id: 20, slug: 'okx', name: 'OKX' }, instrument: 'swap', position: r.position,
    order: r.position === 'long' ? 'sell' : 'buy', price: r.price, value_usd: usd(r), quantity: Number(r.quantity),
    liquidated_at: iso(Math.floor(at(r) / 1000) * 1000),
  }));
  t.deepEqual(response.body.data, expected);
  t.like(response.body.meta, { current_page: 2, per_page: 2, total: inFeed.length, last_page: Math.ceil(inFeed.length / 2), retention: '~48 hours (raw feed is pruned)' });
  t.regex(response.body.meta.note, NOTE);
  t.is(typeof response.body.data[0].price, 'string');
  t.truthy(response.body.links.next);
});

test('/liquidations filters: symbol prefix (case-insensitive), position, order, min_usd, exchange', async (t) => {
  const symbols = async (query: string) => (await get(`/api/v1/liquidations?${query}`)).body.data.map((r: { liquidated_at: string; symbol: string }) => r.symbol);
  t.deepEqual(await symbols('symbol=alp'), inFeed.filter((r) => r.symbol.startsWith('ALP')).map((r) => r.symbol));
  t.is((await symbols('position=short')).length, inFeed.filter((r) => r.position === 'short').length);
  t.is((await symbols('order=sell')).length, inFeed.filter((r) => r.position === 'long').length);
  t.deepEqual(await symbols('min_usd=10000'), inFeed.filter((r) => usd(r) >= 10000).map((r) => r.symbol));
  t.deepEqual(await symbols('exchange=binance'), []);
  t.deepEqual(await symbols('instrument=future'), []);
});

test('/liquidations/hourly: every hour of the window, oldest first, sums of the raw rows', async (t) => {
  const response = await get('/api/v1/liquidations/hourly?hours=6');
  t.is(response.status, 200);
  t.deepEqual(response.body.meta.hours, 6);
  t.regex(response.body.meta.note, NOTE);
  const data = response.body.data as { hour: string; liquidations: number; total_usd: number; long_usd: number; short_usd: number }[];
  t.is(data.length, 6);
  const currentHour = Math.floor(Date.now() / HOUR) * HOUR;
  t.is(data.at(-1)!.hour, iso(currentHour));
  for (const row of data) {
    const start = Date.parse(row.hour);
    const rows = ROWS.filter((r) => at(r) >= start && at(r) < start + HOUR);
    t.deepEqual(row, {
      hour: row.hour, liquidations: rows.length, total_usd: sum(rows),
      long_usd: sum(rows.filter((r) => r.position === 'long')), short_usd: sum(rows.filter((r) => r.position === 'short')),
    });
  }
  t.is(data.reduce((n, r) => n + r.liquidations, 0), ROWS.filter((r) => at(r) >= Date.parse(data[0]!.hour)).length);
});

const days = () => {
  const byDay = new Map<string, Row[]>();
  for (const r of ROWS) byDay.set(isoDate(at(r)), [...(byDay.get(isoDate(at(r))) ?? []), r]);
  return [...byDay.entries()].sort(([a], [b]) => a.localeCompare(b));
};

test('/liquidations/daily and /netflow: days from the rollup, including days the feed no longer shows', async (t) => {
  const daily = await get('/api/v1/liquidations/daily?days=7');
  t.is(daily.status, 200);
  const expected = days().map(([date, rows]) => {
    const longs = rows.filter((r) => r.position === 'long');
    const shorts = rows.filter((r) => r.position === 'short');
    return { date, total_usd: sum(rows), long_usd: sum(longs), short_usd: sum(shorts), longs: longs.length, shorts: shorts.length };
  });
  t.deepEqual(daily.body.data, expected);
  t.deepEqual(daily.body.meta.days, 7);
  t.regex(daily.body.meta.note, NOTE);
  const netflow = await get('/api/v1/liquidations/netflow?days=7');
  t.deepEqual(netflow.body.data, expected.map((d) => ({
    date: d.date, long: d.long_usd, short: d.short_usd, total: d.total_usd,
    net: new Decimal(d.long_usd).minus(d.short_usd).toNumber(), longs: d.longs, shorts: d.shorts,
  })));
  t.regex(netflow.body.meta.note, NOTE);
  // days=1 is today only
  t.deepEqual((await get('/api/v1/liquidations/daily?days=1')).body.data, expected.filter((d) => d.date === isoDate(Date.now())));
});

test("/liquidations/summary: today's figures with long/short dominance", async (t) => {
  const response = await get('/api/v1/liquidations/summary');
  t.is(response.status, 200);
  t.regex(response.body.meta.note, /partial/);
  const today = ROWS.filter((r) => isoDate(at(r)) === isoDate(Date.now()));
  // before the day's first liquidation: today's date with zeros, not null
  if (today.length === 0) {
    return t.deepEqual(response.body.data, {
      date: isoDate(Date.now()), total_usd: 0, long_usd: 0, short_usd: 0, longs: 0, shorts: 0, dominance: { long: null, short: null },
    });
  }
  const long = sum(today.filter((r) => r.position === 'long'));
  const short = sum(today.filter((r) => r.position === 'short'));
  t.deepEqual(response.body.data, {
    date: isoDate(Date.now()), total_usd: sum(today), long_usd: long, short_usd: short,
    longs: today.filter((r) => r.position === 'long').length, shorts: today.filter((r) => r.position === 'short').length,
    dominance: {
      long: new Decimal(long).mul(100).div(sum(today)).toDecimalPlaces(2).toNumber(),
      short: new Decimal(short).mul(100).div(sum(today)).toDecimalPlaces(2).toNumber(),
    },
  });
});

test('/liquidations/coins: known coins by liquidated USD over the window, with the split', async (t) => {
  const response = await get('/api/v1/liquidations/coins?hours=24&limit=5');
  t.is(response.status, 200);
  t.like(response.body.meta, { hours: 24 });
  t.regex(response.body.meta.note, NOTE);
  const recent = ROWS.filter((r) => r.ageMs < 24 * HOUR && r.coinId !== null);
  const coins = [...new Set(recent.map((r) => r.coinId))].map((id) => {
    const rows = recent.filter((r) => r.coinId === id);
    return { id, long: sum(rows.filter((r) => r.position === 'long')), short: sum(rows.filter((r) => r.position === 'short')), total: sum(rows) };
  }).sort((a, b) => b.total - a.total);
  t.deepEqual(response.body.data.map((c: { slug: string; long: number; short: number; total: number }) => [c.slug, c.long, c.short, c.total]),
    coins.map((c) => [c.id === 101 ? 'alpha' : 'beta', c.long, c.short, c.total]));
  t.deepEqual(Object.keys(response.body.data[0]), ['symbol', 'name', 'slug', 'logo', 'long', 'short', 'total']);
  t.is((await get('/api/v1/liquidations/coins?limit=1')).body.data.length, 1);
});

test('422 for parameters out of range', async (t) => {
  for (const path of [
    '/liquidations/hourly?hours=49', '/liquidations/hourly?hours=0', '/liquidations/daily?days=366', '/liquidations/netflow?days=91',
    '/liquidations/coins?limit=21', '/liquidations?position=sideways', '/liquidations?min_usd=-5', '/liquidations?symbol=BTC%25',
    '/liquidations?per_page=0', '/liquidations?exchange=OKX!',
  ]) {
    const response = await get(`/api/v1${path}`);
    t.is(response.status, 422, path);
    t.is(response.body.error.code, 'validation', path);
  }
});
