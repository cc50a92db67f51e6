// Coins group time series over HTTP: candle history, marketcap history and the sparkline, for a
// coin with three hours of 1-minute bars and one bar a day on older days (up to 200 days back),
// rolled up by the continuous aggregates. Expected buckets are rolled up here from the same bars.
import test from 'ava';
import { Decimal } from 'decimal.js';
import postgres from 'postgres';
import { useApi } from '../helpers/http.ts';
import { DAY, HOUR, MINUTE, iso, isoDate } from './fixtures.ts';

interface Bar {
  time: number;
  /** prices in cents */
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

const SUPPLY = 1000;
const OLD_DAYS = [2, 3, 4, 5, 6, 7, 8, 9, 10, 100, 200];
const money = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
const marketcap = (cents: number) => (cents * SUPPLY) / 100;
const startOfDay = (ms: number) => Math.floor(ms / DAY) * DAY;

let now = 0;
let bars: Bar[] = [];
/** the bar on each old day, by days ago */
const oldBar = new Map<number, Bar>();

const handles = useApi(test, {
  setup: async ({ db }) => {
    const { sql } = db;
    const [row] = await sql`select extract(epoch from date_trunc('minute', now())) * 1000 as now`;
    now = Number(row!.now);
    for (let i = 0; i < 180; i++) {
      const open = 10000 + 7 * i;
      bars.push({ time: now - (180 - i) * MINUTE, open, high: open + 50, low: open - 25, close: open + 10, volume: i + 1 });
    }
    for (const k of OLD_DAYS) {
      const open = 5000 + 100 * k;
      const bar = { time: startOfDay(now - k * DAY) + 12 * HOUR + 13 * MINUTE, open, high: open + 300, low: open - 200, close: open + 100, volume: 1000 + k };
      oldBar.set(k, bar);
      bars.push(bar);
    }
    bars = bars.sort((a, b) => a.time - b.time);
    await sql`insert into market.data_sources (name, kind, description) values ('api-test', 'import', 'API test fixture')`;
    await sql`
      insert into market.coins (id, slug, symbol, name, type, status, circulating_supply, source)
      values (201, 'hist', 'HST', 'Hist', 'coin', 'active', ${SUPPLY}, 'api-test'),
             (202, 'empty', 'EMP', 'Empty', 'coin', 'preparing', null, 'api-test')`;
    await sql`
      insert into market.coin_bars_1m (time, coin_id, open, high, low, close, volume, marketcap)
      select to_timestamp(b.time / 1000.0), 201, b.open, b.high, b.low, b.close, b.volume, b.marketcap
      from json_to_recordset(${JSON.stringify(
        bars.map((b) => ({
          time: b.time, open: money(b.open), high: money(b.high), low: money(b.low), close: money(b.close), volume: b.volume,
          marketcap: String(marketcap(b.close)),
        })),
      )}::text::json) as b(time bigint, open numeric, high numeric, low numeric, close numeric, volume numeric, marketcap numeric)`;
    for (const aggregate of ['market.coin_bars_30m', 'market.coin_bars_1h', 'market.coin_bars_1d']) {
      await sql`call refresh_continuous_aggregate(${aggregate}::regclass, null, null)`;
    }
    await sql`select market.refresh_coin_state()`;
  },
});

let key: Promise<string> | undefined;
const get = async (path: string) => handles.api.get(path, await (key ??= handles.api.key({ plan: 'pro' })));

const INTERVALS = {
  minutely: { width: MINUTE, retention: '8 days', cutoff: () => Date.now() - 8 * DAY },
  'half-hourly': { width: 30 * MINUTE, retention: '3 months', cutoff: () => monthsAgo(3) },
  hourly: { width: HOUR, retention: '6 months', cutoff: () => monthsAgo(6) },
  daily: { width: DAY, retention: 'full history', cutoff: () => -Infinity },
} as const;
type Interval = keyof typeof INTERVALS;

function monthsAgo(months: number) {
  const date = new Date();
  date.setUTCMonth(date.getUTCMonth() - months);
  return date.getTime();
}

interface Bucket extends Bar {
  marketcap: number;
}

/** The bars rolled up to the interval: open first, high max, low min, close last, volume sum, marketcap last. */
function buckets(width: number, from = -Infinity): Bucket[] {
  const grouped = new Map<number, Bar[]>();
  for (const bar of bars) {
    const start = Math.floor(bar.time / width) * width;
    grouped.set(start, [...(grouped.get(start) ?? []), bar]);
  }
  return [...grouped.entries()]
    .filter(([start]) => start >= from)
    .sort(([a], [b]) => a - b)
    .map(([time, group]) => ({
      time,
      open: group[0]!.open,
      high: Math.max(...group.map((b) => b.high)),
      low: Math.min(...group.map((b) => b.low)),
      close: group.at(-1)!.close,
      volume: group.reduce((sum, b) => sum + b.volume, 0),
      marketcap: marketcap(group.at(-1)!.close),
    }));
}

/** The history rows of an interval: retention, then the [start, end] window, then the most recent `limit`. */
function history(interval: Interval, options: { start?: number; end?: number; limit?: number } = {}) {
  const { width, cutoff } = INTERVALS[interval];
  const kept = buckets(width, cutoff());
  const rows = kept.map((b) => ({
    time: iso(b.time),
    price: money(b.close),
    open: money(b.open),
    high: money(b.high),
    low: money(b.low),
    close: money(b.close),
    volume: b.volume,
    // the 24 hours that end with the bucket's end
    volume_24h: kept.filter((o) => o.time <= b.time && o.time >= b.time + width - DAY).reduce((sum, o) => sum + o.volume, 0),
    marketcap: b.marketcap,
    at: b.time,
  }));
  const window = rows.filter((r) => r.at >= (options.start ?? -Infinity) && r.at <= (options.end ?? Infinity));
  return window.slice(-(options.limit ?? 1000)).map(({ at, ...row }) => row);
}

test('each interval reads its own level: OHLC, volume, 24h volume and marketcap per bar, oldest first', async (t) => {
  for (const interval of Object.keys(INTERVALS) as Interval[]) {
    const response = await get(`/api/v1/coins/hist/history?interval=${interval}`);
    t.is(response.status, 200, interval);
    const rows = history(interval);
    t.deepEqual(response.body.data, rows, interval);
    t.deepEqual(response.body.meta, { coin: 'hist', interval, count: rows.length, retention: INTERVALS[interval].retention }, interval);
  }
  const daily = await get('/api/v1/coins/hist/history');
  t.is(daily.body.meta.interval, 'daily', 'the default interval');
  t.is(typeof daily.body.data[0].price, 'string', 'prices are decimal strings');
  t.is(typeof daily.body.data[0].marketcap, 'number');
});

test('retention per interval: older bars are never served, whatever start asks for', async (t) => {
  const times = async (interval: Interval, query = '') =>
    (await get(`/api/v1/coins/hist/history?interval=${interval}${query}`)).body.data.map((row: { time: string }) => Date.parse(row.time));
  const day = (k: number) => startOfDay(oldBar.get(k)!.time);
  // 200 days ago: only the daily level keeps it; 100 days ago: hourly and daily; 9 days ago: all but minutely
  t.true((await times('daily')).includes(day(200)));
  t.false((await times('hourly')).some((time: number) => time <= day(200)));
  t.true((await times('hourly')).includes(oldBar.get(100)!.time - 13 * MINUTE));
  t.false((await times('half-hourly')).some((time: number) => time <= day(100)));
  t.true((await times('half-hourly')).includes(oldBar.get(9)!.time - 13 * MINUTE));
  const start = iso(now - 30 * DAY);
  t.false((await times('minutely', `&start=${start}`)).some((time: number) => time < Date.now() - 8 * DAY));
  t.deepEqual(await times('minutely', `&start=${start}`), await times('minutely'));
});

test('limit returns the most recent rows of the window, oldest first', async (t) => {
  const hourly = await get('/api/v1/coins/hist/history?interval=hourly&limit=2');
  t.deepEqual(hourly.body.data, history('hourly', { limit: 2 }));
  t.is(hourly.body.meta.count, 2);
  t.true(Date.parse(hourly.body.data[0].time) < Date.parse(hourly.body.data[1].time));
  t.deepEqual((await get('/api/v1/coins/hist/history?interval=minutely&limit=5')).body.data, history('minutely', { limit: 5 }));
  // the most recent 3 of a window that ends 4 days ago
  const end = isoDate(oldBar.get(4)!.time);
  t.deepEqual(
    (await get(`/api/v1/coins/hist/history?interval=daily&end=${end}&limit=3`)).body.data,
    history('daily', { end: startOfDay(oldBar.get(4)!.time) + DAY - 1, limit: 3 }),
  );
});

test('start and end: dates or date-times; a date-only end means through that day', async (t) => {
  const [d5, d3] = [oldBar.get(5)!, oldBar.get(3)!];
  const daily = await get(`/api/v1/coins/hist/history?start=${isoDate(d5.time)}&end=${isoDate(d3.time)}`);
  t.deepEqual(daily.body.data.map((row: { time: string }) => row.time), [5, 4, 3].map((k) => iso(startOfDay(oldBar.get(k)!.time))));
  // the bar of that day, at 12:13, is within a date-only end (the last microsecond of the day) and after a midnight date-time end
  const minutely = (query: string) => get(`/api/v1/coins/hist/history?interval=minutely&${query}`);
  t.deepEqual((await minutely(`start=${isoDate(d3.time)}&end=${isoDate(d3.time)}`)).body.data, history('minutely', { start: startOfDay(d3.time), end: startOfDay(d3.time) + DAY - 1 }));
  t.is((await minutely(`start=${isoDate(d3.time)}&end=${isoDate(d3.time)}`)).body.data.length, 1);
  t.deepEqual((await minutely(`start=${isoDate(d3.time)}&end=${isoDate(d3.time)}T00:00:00Z`)).body.data, []);
  // offsets: 14:13+02:00 is the bar's 12:13Z; an unencoded + arrives as a space and still counts
  const at = (offsetTime: string) => minutely(`start=${isoDate(d3.time)}T${offsetTime}&end=${isoDate(d3.time)}`);
  t.is((await at('14:13:00%2B02:00')).body.data.length, 1);
  t.is((await at('14:13:00+02:00')).body.data.length, 1);
  t.is((await at('14:14:00%2B02:00')).body.data.length, 0);
  t.is((await at('12:13')).body.data.length, 1, 'no offset: UTC');
  t.is((await at('12:13:00.000001Z')).body.data.length, 0);
  for (const bad of ['start=2026-02-30', 'end=yesterday', 'start=2026-01-01T25:00', 'interval=weekly', 'limit=0', 'limit=2001', 'limit=1.5']) {
    const response = await get(`/api/v1/coins/hist/history?${bad}`);
    t.is(response.status, 422, bad);
    t.is(response.body.error.code, 'validation');
  }
});

test('marketcap-history is the history projected to {time, marketcap}', async (t) => {
  for (const query of ['', '?interval=hourly&limit=3', `?interval=minutely&start=${iso(now - 10 * MINUTE)}`]) {
    const response = await get(`/api/v1/coins/hist/marketcap-history${query}`);
    const full = (await get(`/api/v1/coins/hist/history${query}`)).body;
    t.deepEqual(response.body.data, full.data.map(({ time, marketcap }: { time: string; marketcap: number }) => ({ time, marketcap })), query);
    t.deepEqual(response.body.meta, full.meta);
  }
  t.is((await get('/api/v1/coins/hist/marketcap-history?limit=3000')).status, 422);
  t.is((await get('/api/v1/coins/nope/marketcap-history')).status, 404);
});

test('a coin without bars has an empty history', async (t) => {
  const response = await get('/api/v1/coins/empty/history?interval=hourly');
  t.is(response.status, 200);
  t.deepEqual(response.body.data, []);
  t.is(response.body.meta.count, 0);
  const sparkline = await get('/api/v1/coins/empty/sparkline');
  t.deepEqual(sparkline.body.data, { points: [], low: null, high: null, change: null });
});

test('sparkline: a light series of closes per step with the true extremes and the percent change', async (t) => {
  const expectSparkline = (level: number, step: number, span: number) => {
    const from = Date.now() - span;
    const source = buckets(level).filter((b) => b.time >= from);
    const points = new Map<number, Bucket>();
    for (const b of source) points.set(Math.floor(b.time / step) * step, b);
    return {
      points: [...points.entries()].map(([time, b]) => ({ time: iso(time), price: money(b.close) })),
      low: money(Math.min(...source.map((b) => b.low))),
      high: money(Math.max(...source.map((b) => b.high))),
      change: new Decimal(source.at(-1)!.close).div(source[0]!.open).minus(1).mul(100).toDecimalPlaces(4).toNumber(),
    };
  };
  const cases: [string, number, number, number][] = [
    ['24h', MINUTE, 5 * MINUTE, DAY],
    ['7d', 30 * MINUTE, 30 * MINUTE, 7 * DAY],
    ['30d', HOUR, 2 * HOUR, 30 * DAY],
    ['365d', DAY, DAY, 365 * DAY],
  ];
  for (const [period, level, step, span] of cases) {
    const response = await get(`/api/v1/coins/hist/sparkline?period=${period}`);
    t.is(response.status, 200, period);
    t.deepEqual(response.body.data, expectSparkline(level, step, span), period);
    t.deepEqual(response.body.meta, { coin: 'hist', period, count: response.body.data.points.length });
    t.true(response.body.data.points.length <= 480);
  }
  t.is((await get('/api/v1/coins/hist/sparkline')).body.meta.period, '7d', 'the default period');
  t.is((await get('/api/v1/coins/hist/sparkline?period=2y')).status, 422);
});

test('an analyst gets the same rows from api.coin_history', async (t) => {
  const [start, end] = [iso(now - 2 * DAY), iso(now)];
  const http = await get(`/api/v1/coins/hist/history?interval=hourly&start=${start}&end=${end}&limit=100`);
  const rows = await handles.db.sql`select * from api.coin_history('hist', 'hourly', ${start}::timestamptz, ${end}::timestamptz, 100)`;
  t.deepEqual([...rows], http.body.data);
  t.true(rows.length > 0);
  const recent = await handles.db.sql`select * from api.coin_history('hist', 'hourly', now() - interval '2 days', now(), 100)`;
  t.deepEqual([...recent], history('hourly', { start: Date.now() - 2 * DAY }));
  const [marketcaps] = await handles.db.sql`select count(*)::int as n from api.coin_marketcap_history('hist', 'daily')`;
  t.is(marketcaps!.n, history('daily').length);
});

test('the analyst role calls the same functions', async (t) => {
  const analyst = postgres(handles.db.urlAs('analyst'), { prepare: false, max: 1, onnotice: () => {} });
  try {
    const [who] = await analyst`select current_user as name`;
    t.is(who!.name, 'analyst');
    const rows = await analyst`select * from api.coin_history('hist', 'minutely', null, null, 5)`;
    t.deepEqual([...rows], history('minutely', { limit: 5 }));
    const [sparkline] = await analyst`select api.coin_sparkline('hist', '24h') as data`;
    t.is(sparkline!.data.points.length, (await get('/api/v1/coins/hist/sparkline?period=24h')).body.data.points.length);
    const [page] = await analyst`select api.coin_list(p_per_page => 1) as page`;
    t.is(page!.page.total, 1);
  } finally {
    await analyst.end();
  }
});
