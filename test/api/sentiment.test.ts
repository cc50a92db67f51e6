// Sentiment group over HTTP on the 200-day fixture market: shapes and types of each reading, the
// scope parameter, the altseason history window, the Pro gate of the tally, 404 and 422.
import test from 'ava';
import { useApi } from '../helpers/http.ts';
import { SENTIMENT_COINS, loadSentimentMarket } from '../sql/sentiment_fixture.ts';

const handles = useApi(test, {
  setup: async ({ db }) => {
    await loadSentimentMarket(db.sql);
    await db.sql`select market.refresh_sentiment()`;
    await db.sql`select market.refresh_indicator_tally()`;
  },
});
const keys = new Map<string, Promise<string>>();
const get = async (path: string, plan = 'free') => {
  if (!keys.has(plan)) keys.set(plan, handles.api.key({ plan: plan as 'free' }));
  return handles.api.get(path, await keys.get(plan)!);
};

const BANDS = ['extreme fear', 'fear', 'neutral', 'greed', 'extreme greed'];
const bandOf = (index: number) => BANDS[Math.min(4, Math.floor(index / 20))];

test('/sentiment/fear-greed: score, index and regime on the reading and on every interval', async (t) => {
  const response = await get('/api/v1/sentiment/fear-greed');
  t.is(response.status, 200);
  const data = response.body.data;
  t.is(data.scope, 'market');
  t.like(response.body.meta, { scope: 'market' });
  for (const reading of [data, ...Object.values<any>(data.intervals)]) {
    t.true(Number.isInteger(reading.score) && reading.score >= -100 && reading.score <= 100);
    t.true(Number.isInteger(reading.index) && reading.index >= 0 && reading.index <= 100);
    t.is(reading.index, Math.round((reading.score + 100) / 2 + 1e-9));
    t.is(reading.regime, bandOf(reading.index));
  }
  t.deepEqual(Object.keys(data.intervals), ['7d', '30d', '90d']);
  t.deepEqual(Object.keys(data.intervals['7d'].breakdown), ['volatility', 'momentum', 'volume', 'dominance', 'breadth']);
  t.regex(data.updated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
});

test('/sentiment/fear-greed?coin=: a per-coin reading; unknown coin 404, bad slug 422', async (t) => {
  const coin = await get('/api/v1/sentiment/fear-greed?coin=ethereum');
  t.is(coin.status, 200);
  t.is(coin.body.data.scope, 'ethereum');
  const missing = await get('/api/v1/sentiment/fear-greed?coin=no-such-coin');
  t.is(missing.status, 404);
  t.is(missing.body.error.code, 'not_found');
  const bad = await get('/api/v1/sentiment/fear-greed?coin=Not%20a%20slug');
  t.is(bad.status, 422);
  t.deepEqual(Object.keys(bad.body.error.details.errors), ['coin']);
});

test('/sentiment/bull-bear: percentages that add up, for the market and a coin', async (t) => {
  const market = await get('/api/v1/sentiment/bull-bear');
  t.is(market.status, 200);
  const data = market.body.data;
  t.is(data.scope, 'market');
  t.is(data.bull + data.bear, 100);
  t.is(data.score, data.bull - data.bear);
  t.true(['bull', 'bear', 'neutral'].includes(data.regime));
  t.is(data.coins, SENTIMENT_COINS.filter((c) => c.supply !== null).length);
  const coin = await get('/api/v1/sentiment/bull-bear?coin=solana');
  t.is(coin.body.data.scope, 'solana');
  t.is((await get('/api/v1/sentiment/bull-bear?coin=nope')).status, 404);
});

test('/sentiment/altseason: current reading, `days` of history, 422 outside 0-365', async (t) => {
  const current = await get('/api/v1/sentiment/altseason');
  t.is(current.status, 200);
  const data = current.body.data;
  t.true(Number.isInteger(data.index) && data.index >= 0 && data.index <= 100);
  t.is(data.index, Math.round((100 * data.outperformers) / data.coins));
  t.is(data.season, data.index >= 75 ? 'altcoin season' : data.index <= 25 ? 'bitcoin season' : 'neutral');
  t.is(data.look_back_days, 90);
  t.deepEqual(data.history, []);
  const week = await get('/api/v1/sentiment/altseason?days=7');
  t.is(week.body.data.history.length, 7);
  t.is(week.body.meta.count, 7);
  t.is(week.body.data.history.at(-1).date, data.date);
  const dates = week.body.data.history.map((h: any) => h.date);
  t.deepEqual(dates, [...dates].sort());
  for (const days of ['366', '-1', 'abc']) {
    const bad = await get(`/api/v1/sentiment/altseason?days=${days}`);
    t.is(bad.status, 422, days);
    t.deepEqual(Object.keys(bad.body.error.details.errors), ['days']);
  }
});

test('/sentiment/indicators: Pro only; 25 categories with state, score and data', async (t) => {
  for (const plan of ['free', 'starter']) {
    const denied = await get('/api/v1/sentiment/indicators', plan);
    t.is(denied.status, 403, plan);
    t.is(denied.body.error.code, 'plan_required');
    t.is(denied.body.error.details.required_plan, 'pro');
  }
  const response = await get('/api/v1/sentiment/indicators', 'pro');
  t.is(response.status, 200);
  t.is(response.body.data.length, 25);
  for (const category of response.body.data) {
    t.deepEqual(Object.keys(category), ['category', 'state', 'score', 'data']);
    t.true(Number.isInteger(category.score) && category.score >= -100 && category.score <= 100);
    t.is(typeof category.data, 'object');
  }
  t.is(response.body.meta.coins, SENTIMENT_COINS.length);
  t.is(response.body.meta.summary.bullish + response.body.meta.summary.bearish + response.body.meta.summary.neutral, 25);
});

test.serial('/coins/{slug}/votes: one vote per owner and coin per 24 hours, a second vote changes it', async (t) => {
  const alice = await handles.api.key({ plan: 'free', owner: 'alice' });
  const bob = await handles.api.key({ plan: 'free', owner: 'bob' });
  const vote = (key: string, body: unknown, slug = 'bitcoin') =>
    handles.api.request('POST', `/api/v1/coins/${slug}/votes`, { key, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const empty = await handles.api.get('/api/v1/coins/bitcoin/votes', alice);
  t.is(empty.status, 200);
  t.deepEqual(empty.body.data, { coin: 'bitcoin', bullish: 0, bearish: 0, total: 0 });
  t.deepEqual((await vote(alice, { vote: 'bullish' })).body.data, { coin: 'bitcoin', bullish: 1, bearish: 0, total: 1, your_vote: 'bullish' });
  t.deepEqual((await vote(bob, { vote: 'bullish' })).body.data, { coin: 'bitcoin', bullish: 2, bearish: 0, total: 2, your_vote: 'bullish' });
  // alice changes her mind inside the window: still one vote of hers
  t.deepEqual((await vote(alice, { vote: 'bearish' })).body.data, { coin: 'bitcoin', bullish: 1, bearish: 1, total: 2, your_vote: 'bearish' });
  // a vote older than 24 hours no longer counts, and a new one is a new vote
  await handles.db.sql`update app.coin_votes set voted_at = now() - interval '25 hours' where owner = 'bob'`;
  t.deepEqual((await handles.api.get('/api/v1/coins/bitcoin/votes', bob)).body.data, { coin: 'bitcoin', bullish: 0, bearish: 1, total: 1 });
  t.like((await vote(bob, { vote: 'bearish' })).body.data, { bearish: 2, total: 2 });
  const [rows] = await handles.db.sql`select count(*)::int as n from app.coin_votes where owner = 'bob'`;
  t.is(rows!.n, 2);
  // errors
  const bad = await vote(alice, { vote: 'moon' });
  t.is(bad.status, 422);
  t.deepEqual(Object.keys(bad.body.error.details.errors), ['vote']);
  t.is((await vote(alice, {})).status, 422);
  t.is((await vote(alice, { vote: 'bullish' }, 'no-such-coin')).status, 404);
  t.is((await handles.api.get('/api/v1/coins/no-such-coin/votes', alice)).status, 404);
});
