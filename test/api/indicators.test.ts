// Indicators group over HTTP: plan gating by endpoint and by period (403 without spending quota),
// 422 for periods outside the list and bad windows, row shapes and JSON types (decimal strings for
// the price-scale families, numbers for oscillators), the window cut, warm-up nulls, the snapshot.
import test from 'ava';
import { apiRoutes } from '../../src/api/index.ts';
import { useApi } from '../helpers/http.ts';
import { generateSeries, insertCoin, refreshAggregates } from '../../dev/indicators.ts';

const COIN = { id: 4201, slug: 'http-coin' };
const YOUNG = { id: 4202, slug: 'http-young-coin' };
const EMPTY = { id: 4203, slug: 'http-empty-coin' };
const DAYS = 400;
const keys: Record<'free' | 'starter' | 'pro', string> = { free: '', starter: '', pro: '' };

const handles = useApi(test, {
  setup: async ({ db, api }) => {
    await insertCoin(db.sql, COIN, generateSeries(DAYS, 11));
    await insertCoin(db.sql, YOUNG, generateSeries(40, 12, '2024-05-01'));
    await insertCoin(db.sql, EMPTY, []);
    await refreshAggregates(db.sql);
    for (const plan of ['free', 'starter', 'pro'] as const) keys[plan] = await api.key({ plan });
  },
});

const get = (path: string, plan: keyof typeof keys = 'pro') => handles.api.get(`/api/v1/coins/${path}`, keys[plan]);

const ENDPOINTS = [
  'rsi', 'stoch-rsi', 'sma', 'cci', 'mfi', 'williams-r', 'price-volatility', 'volume-volatility', 'macd', 'obv', 'cmf', 'adx', 'vwap',
];

test('every indicator route is registered and documented in openapi.json', async (t) => {
  const response = await handles.api.get('/api/v1/openapi.json', keys.free);
  for (const name of ENDPOINTS) t.truthy(response.body.paths[`/api/v1/coins/{slug}/indicators/${name}`]?.get, name);
  t.truthy(response.body.paths['/api/v1/coins/{slug}/indicators'].get);
  t.true(apiRoutes.some((route) => route.operationId === 'indicatorSnapshot'));
});

test('endpoint plans: Starter and Pro endpoints refuse lower plans with plan_required naming the plan', async (t) => {
  const cases: [string, keyof typeof keys, string | null][] = [
    ['rsi', 'free', 'starter'],
    ['rsi', 'starter', null],
    ['sma', 'free', 'starter'],
    ['cci', 'starter', null],
    ['volume-volatility', 'starter', null],
    ['stoch-rsi', 'starter', 'pro'],
    ['mfi', 'starter', 'pro'],
    ['williams-r', 'starter', 'pro'],
    ['price-volatility', 'starter', 'pro'],
    ['macd', 'starter', 'pro'],
    ['obv', 'starter', 'pro'],
    ['cmf', 'starter', 'pro'],
    ['adx', 'starter', 'pro'],
    ['vwap', 'starter', 'pro'],
    ['vwap', 'pro', null],
  ];
  for (const [name, plan, required] of cases) {
    const response = await get(`${COIN.slug}/indicators/${name}?limit=1`, plan);
    if (required === null) t.is(response.status, 200, `${name} with ${plan}`);
    else {
      t.is(response.status, 403, `${name} with ${plan}`);
      t.is(response.body.error.code, 'plan_required');
      t.is(response.body.error.details.required_plan, required, `${name} with ${plan}`);
    }
  }
  const snapshot = await get(`${COIN.slug}/indicators`, 'starter');
  t.deepEqual([snapshot.status, snapshot.body.error.details.required_plan], [403, 'pro']);
});

test('periods: the longer windows need Starter, a 403 spends no quota', async (t) => {
  const free = await handles.api.key({ plan: 'free' });
  const first = await handles.api.get(`/api/v1/coins/${COIN.slug}/indicators/rsi?period=28`, free);
  t.is(first.status, 403);
  t.is(first.body.error.details.required_plan, 'starter');
  t.is(first.body.error.message, 'The 28-day rsi window requires the Starter plan or higher.');
  const second = await handles.api.get(`/api/v1/coins/${COIN.slug}/indicators/rsi?period=21`, free);
  t.is(second.status, 403);
  // stoch-rsi itself needs Pro: the refusal names what unlocks it, the endpoint's plan, not the window's
  const stoch = await handles.api.get(`/api/v1/coins/${COIN.slug}/indicators/stoch-rsi?period=28`, free);
  t.deepEqual([stoch.body.error.message, stoch.body.error.details], ['This endpoint requires the Pro plan or higher.', { required_plan: 'pro' }]);
  t.is(second.headers.get('x-quota-used'), first.headers.get('x-quota-used'), 'no quota spent');
  t.is((await get(`${COIN.slug}/indicators/rsi?period=28&limit=1`, 'starter')).status, 200);
  t.is((await get(`${COIN.slug}/indicators/volume-volatility?period=30&limit=1`, 'starter')).status, 200);
});

test('422: a period outside the list, limit out of 1-1000, a malformed date, start after end', async (t) => {
  const cases: [string, string][] = [
    ['rsi?period=10', 'period'],
    ['rsi?period=abc', 'period'],
    ['sma?period=20', 'period'],
    ['price-volatility?period=28', 'period'],
    ['mfi?limit=0', 'limit'],
    ['mfi?limit=1001', 'limit'],
    ['cci?start=2023-13-01', 'start'],
    ['cci?end=yesterday', 'end'],
    ['obv?start=2023-06-01&end=2023-05-01', 'end'],
  ];
  for (const [path, field] of cases) {
    const response = await get(`${COIN.slug}/indicators/${path}`);
    t.is(response.status, 422, path);
    t.is(response.body.error.code, 'validation');
    t.deepEqual(Object.keys(response.body.error.details.errors), [field], `${path}: ${JSON.stringify(response.body.error.details)}`);
  }
  // even a key whose plan the period would not allow learns about the bad value first
  const response = await get(`${COIN.slug}/indicators/rsi?period=10`, 'free');
  t.is(response.status, 422);
});

test('an unknown coin is 404 not_found', async (t) => {
  for (const path of ['no-such-coin/indicators/rsi', 'no-such-coin/indicators/macd', 'no-such-coin/indicators']) {
    const response = await get(path);
    t.is(response.status, 404, path);
    t.is(response.body.error.code, 'not_found');
  }
});

test('rows and meta: names from the reference contract, decimal strings for price-scale families, numbers otherwise', async (t) => {
  const shapes: [string, string[], 'string' | 'number', number | null][] = [
    ['rsi', ['value'], 'number', 14],
    ['stoch-rsi', ['k', 'd'], 'number', 14],
    ['sma', ['value'], 'string', 50],
    ['cci', ['value'], 'number', 20],
    ['mfi', ['value'], 'number', 14],
    ['williams-r', ['value'], 'number', 14],
    ['price-volatility', ['value'], 'number', 7],
    ['volume-volatility', ['value'], 'number', 7],
    ['macd', ['macd', 'signal', 'histogram'], 'string', null],
    ['obv', ['value'], 'string', null],
    ['cmf', ['value'], 'number', null],
    ['adx', ['adx', 'plus_di', 'minus_di'], 'number', null],
    ['vwap', ['value'], 'string', null],
  ];
  for (const [name, columns, type, period] of shapes) {
    const response = await get(`${COIN.slug}/indicators/${name}?limit=5`);
    t.is(response.status, 200, name);
    t.deepEqual(response.body.meta, { coin: COIN.slug, indicator: name, period, count: 5 }, name);
    for (const row of response.body.data) {
      t.deepEqual(Object.keys(row), ['date', ...columns], name);
      t.regex(row.date, /^\d{4}-\d{2}-\d{2}$/);
      for (const column of columns) t.is(typeof row[column], type, `${name}.${column}`);
    }
  }
});

test('default limit 365: the most recent 365 days, oldest first; the window cut never changes a value', async (t) => {
  const full = await handles.db.sql`select date::text as date, value from api.rsi(${COIN.slug}, 21)`;
  const byDate = new Map(full.map((row) => [row.date, row.value]));
  const response = await get(`${COIN.slug}/indicators/rsi?period=21`);
  t.is(response.body.data.length, 365);
  t.is(response.body.data.at(-1).date, full.at(-1)!.date);
  t.deepEqual(response.body.data.map((row: { date: string }) => row.date), full.slice(-365).map((row) => row.date));
  for (const path of ['start=2023-03-01&end=2023-03-31', 'start=2023-03-01&end=2023-03-31&limit=7', 'end=2023-02-10', 'start=2024-01-01']) {
    const cut = await get(`${COIN.slug}/indicators/rsi?period=21&${path}`);
    t.true(cut.body.data.length > 0, path);
    for (const row of cut.body.data) t.is(row.value, byDate.get(row.date), `${path} ${row.date}`);
  }
  const week = await get(`${COIN.slug}/indicators/rsi?period=21&start=2023-03-01&end=2023-03-31&limit=7`);
  t.deepEqual([week.body.data[0].date, week.body.data.at(-1).date], ['2023-03-25', '2023-03-31']);
  // MACD as decimal strings, the same strings in any window
  const macd = await handles.db.sql`select date::text as date, macd from api.macd(${COIN.slug})`;
  const cutMacd = await get(`${COIN.slug}/indicators/macd?start=2023-06-01&limit=3`);
  const macdByDate = new Map(macd.map((row) => [row.date, row.macd]));
  for (const row of cutMacd.body.data) t.is(row.macd, macdByDate.get(row.date));
});

test('a young coin returns its warm-up rows as null', async (t) => {
  const rsi = await get(`${YOUNG.slug}/indicators/rsi`);
  t.is(rsi.body.data.length, 40);
  t.deepEqual(rsi.body.data.slice(0, 14).map((row: { value: unknown }) => row.value), Array(14).fill(null));
  t.is(typeof rsi.body.data[14].value, 'number');
  const macd = await get(`${YOUNG.slug}/indicators/macd`);
  t.deepEqual(macd.body.data[32], { date: macd.body.data[32].date, macd: null, signal: null, histogram: null });
  t.is(typeof macd.body.data[33].histogram, 'string');
  const sma = await get(`${YOUNG.slug}/indicators/sma?period=200`);
  t.true(sma.body.data.every((row: { value: unknown }) => row.value === null));
  const empty = await get(`${EMPTY.slug}/indicators/obv`);
  t.deepEqual([empty.status, empty.body.data, empty.body.meta.count], [200, [], 0]);
});

test('the snapshot: a reading per indicator with state, score and data; 404 for a coin without history', async (t) => {
  const response = await get(`${COIN.slug}/indicators`);
  t.is(response.status, 200);
  t.is(response.body.meta.coin, COIN.slug);
  t.regex(response.body.meta.date, /^\d{4}-\d{2}-\d{2}$/);
  t.is(response.body.data.length, 13);
  for (const reading of response.body.data) {
    t.deepEqual(Object.keys(reading).sort(), ['data', 'indicator', 'score', 'state']);
    t.true(['bullish', 'bearish', 'neutral', 'overbought', 'oversold'].includes(reading.state), reading.indicator);
    t.true([-1, 0, 1].includes(reading.score));
  }
  const macd = response.body.data.find((reading: { indicator: string }) => reading.indicator === 'macd');
  t.is(typeof macd.data.histogram, 'string');
  const rsi = response.body.data.find((reading: { indicator: string }) => reading.indicator === 'rsi');
  t.is(typeof rsi.data.value, 'number');
  const empty = await get(`${EMPTY.slug}/indicators`);
  t.is(empty.status, 404);
  t.is(empty.body.error.message, 'No indicator data for this coin yet.');
});
