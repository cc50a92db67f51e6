// Global Market group over HTTP on the 200-day fixture market: totals, counts and dominance
// recomputed from the fixture (a coin without circulating supply among them), the heatmap and its
// meta.fear_greed, the marketcap/volume history per period, and 422 for bad parameters.
import test from 'ava';
import { Decimal } from 'decimal.js';
import { useApi } from '../helpers/http.ts';
import { DAYS, SENTIMENT_COINS, TODAY, loadSentimentMarket, volumeOf } from '../sql/sentiment_fixture.ts';

const handles = useApi(test, {
  setup: async ({ db }) => {
    await loadSentimentMarket(db.sql);
    await db.sql`select market.refresh_sentiment()`;
  },
});
let key: Promise<string> | undefined;
const get = async (path: string) => handles.api.get(path, await (key ??= handles.api.key({ plan: 'free' })));

// what market.coin_state holds at today's bar: marketcap = round(close * supply, 2)
const marketcapOn = (coin: (typeof SENTIMENT_COINS)[number], d: number) =>
  coin.supply === null ? null : new Decimal(coin.close(d).toFixed(4)).mul(coin.supply).toDecimalPlaces(2);
const ranked = [...SENTIMENT_COINS].sort((a, b) => {
  const [x, y] = [marketcapOn(a, TODAY), marketcapOn(b, TODAY)];
  if (x === null || y === null) return x === null ? (y === null ? 0 : 1) : -1;
  return y.comparedTo(x);
});
const total = SENTIMENT_COINS.reduce((sum, c) => sum.plus(marketcapOn(c, TODAY) ?? 0), new Decimal(0));
const dominance = (slug: string) => {
  const cap = marketcapOn(SENTIMENT_COINS.find((c) => c.slug === slug)!, TODAY);
  return cap === null ? null : cap.mul(100).div(total).toDecimalPlaces(2).toNumber();
};

test('/global: totals, counts, dominance with the rank-based top 3, fear_greed with index', async (t) => {
  const response = await get('/api/v1/global');
  t.is(response.status, 200);
  const data = response.body.data;
  const [venues] = await handles.db.sql`select * from market.venue_counts()`;
  t.like(data, {
    total_marketcap: total.toNumber(),
    total_volume_24h: SENTIMENT_COINS.reduce((sum, c) => sum.plus(volumeOf(c, TODAY).toFixed(2)), new Decimal(0)).toNumber(),
    total_cryptocurrencies: SENTIMENT_COINS.length,
    total_tokens: SENTIMENT_COINS.filter((c) => c.type === 'token').length,
    total_exchanges: venues!.exchanges,
    total_pairs: venues!.pairs,
    total_markets: venues!.markets,
  });
  t.deepEqual(data.dominance, {
    btc: dominance('bitcoin'),
    eth: dominance('ethereum'),
    top3: ranked.slice(0, 3).map((c) => ({ symbol: c.symbol, domination: dominance(c.slug) })),
  });
  const [{ fg }] = (await handles.db.sql`select api.fear_greed() as fg`) as unknown as [{ fg: any }];
  t.deepEqual(data.fear_greed, { score: fg.score, index: fg.index, regime: fg.regime });
  t.regex(data.last_updated, /^\d{4}-\d\d-\d\dT00:00:00\+00:00$/);
});

test('/global/heatmap: the ranked coins by rank, typed; a coin without circulating supply (no marketcap to size its tile) is left out', async (t) => {
  const response = await get('/api/v1/global/heatmap');
  t.is(response.status, 200);
  const { data, meta } = response.body;
  const tiles = ranked.filter((c) => c.supply !== null);
  t.deepEqual(data.map((row: any) => row.slug), tiles.map((c) => c.slug));
  t.deepEqual(data.map((row: any) => row.rank), tiles.map((_, i) => i + 1));
  for (const row of data) {
    const coin = SENTIMENT_COINS.find((c) => c.slug === row.slug)!;
    t.is(row.price, coin.close(TODAY).toFixed(4));
    t.is(row.marketcap, marketcapOn(coin, TODAY)!.toNumber());
    t.is(typeof row.dominance, 'number');
    t.is(typeof row.change_24h, 'number');
    t.is(typeof row.change_7d, 'number');
  }
  t.false(data.some((row: any) => row.slug === 'mystery'));
  const [{ fg }] = (await handles.db.sql`select api.fear_greed() as fg`) as unknown as [{ fg: any }];
  t.like(meta, { total_marketcap: total.toNumber(), fear_greed: fg.index });
  t.is(meta.dominance.btc, dominance('bitcoin'));
  t.is(meta.dominance.top3, ranked.slice(0, 3).reduce((sum, c) => sum.plus(dominance(c.slug)!), new Decimal(0)).toNumber());
});

test('/global/history/{metric}: one row per bar of the period, sums of the fixture', async (t) => {
  const dayTotal = (d: number) => SENTIMENT_COINS.reduce((sum, c) => sum.plus(marketcapOn(c, d) ?? 0), new Decimal(0)).toNumber();
  const month = await get('/api/v1/global/history/marketcap?period=30d');
  t.is(month.status, 200);
  t.is(month.body.data.length, 30);
  t.deepEqual(Object.keys(month.body.data[0]), ['time', 'marketcap']);
  t.is(month.body.data.at(-1).marketcap, dayTotal(TODAY));
  t.is(month.body.data[0].marketcap, dayTotal(TODAY - 29));
  t.like(month.body.meta, { metric: 'marketcap', period: '30d', count: 30 });
  const all = await get('/api/v1/global/history/volume?period=all');
  t.is(all.body.data.length, DAYS);
  t.is(all.body.data[0].volume, SENTIMENT_COINS.reduce((sum, c) => sum.plus(volumeOf(c, 0).toFixed(2)), new Decimal(0)).toNumber());
  const week = await get('/api/v1/global/history/marketcap?period=7d');
  t.is(week.body.data.length, 7);
  const day = await get('/api/v1/global/history/marketcap');
  t.like(day.body.meta, { period: '24h', count: 1 });
});

test('/global/history: 422 for an unknown metric or period', async (t) => {
  const metric = await get('/api/v1/global/history/price');
  t.is(metric.status, 422);
  t.deepEqual(Object.keys(metric.body.error.details.errors), ['metric']);
  const period = await get('/api/v1/global/history/marketcap?period=1y');
  t.is(period.status, 422);
  t.deepEqual(Object.keys(period.body.error.details.errors), ['period']);
});
