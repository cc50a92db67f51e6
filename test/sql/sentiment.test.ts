// Sentiment in SQL: the Fear & Greed bands at their edges, the index scale, the components and
// readings recomputed from the fixture, Bull/Bear and the daily altseason index.
import test from 'ava';
import postgres from 'postgres';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { DAYS, SENTIMENT_COINS, TODAY, loadSentimentMarket } from './sentiment_fixture.ts';

let db: TestDatabase;

test.before(async () => {
  db = await testDatabase();
  await loadSentimentMarket(db.sql);
  await db.sql`select market.refresh_sentiment()`;
});
test.after.always(async () => db?.close());

const squash = (x: number) => Math.round(100 * Math.tanh(x));
const coin = (slug: string) => SENTIMENT_COINS.find((c) => c.slug === slug)!;

test('the five bands meet at 19/20, 39/40, 59/60 and 79/80', async (t) => {
  const edges: [number, string][] = [
    [0, 'extreme fear'], [19, 'extreme fear'], [20, 'fear'], [39, 'fear'], [40, 'neutral'],
    [59, 'neutral'], [60, 'greed'], [79, 'greed'], [80, 'extreme greed'], [100, 'extreme greed'],
  ];
  const rows = await db.sql<{ band: string }[]>`
    select market.fear_greed_band(i) as band from unnest(${edges.map(([i]) => i)}::int[]) with ordinality as u (i, n) order by n`;
  t.deepEqual(rows.map((r) => r.band), edges.map(([, band]) => band));
  const [nulls] = await db.sql`select market.fear_greed_band(null) as band`;
  t.is(nulls!.band, null);
});

test('the index rescales the score -100..+100 onto 0..100, clamped, halves away from zero', async (t) => {
  const scores = [-100, -62, -61, -21, -20, 0, 19, 20, 59, 60, 100, 150, -150];
  const rows = await db.sql<{ index: number }[]>`
    select market.fear_greed_index(s) as index from unnest(${scores}::numeric[]) with ordinality as u (s, n) order by n`;
  const expected = scores.map((s) => Math.round((Math.min(100, Math.max(-100, s)) + 100) / 2 + 1e-9));
  t.deepEqual(rows.map((r) => r.index), expected);
  // -61 gives 19.5: index 20, fear; -62 gives 19, extreme fear
  t.is(rows[1]!.index, 19);
  t.is(rows[2]!.index, 20);
});

test('the market reading: score is the mean of its components, index and regime follow, all in range', async (t) => {
  const [{ reading }] = (await db.sql`select api.fear_greed() as reading`) as unknown as [{ reading: any }];
  t.is(reading.scope, 'market');
  t.deepEqual(Object.keys(reading.intervals), ['7d', '30d', '90d']);
  for (const interval of Object.values<any>(reading.intervals)) {
    const parts = Object.values<number | null>(interval.breakdown).filter((v): v is number => v !== null);
    t.deepEqual(Object.keys(interval.breakdown), ['volatility', 'momentum', 'volume', 'dominance', 'breadth']);
    for (const part of parts) t.true(Number.isInteger(part) && part >= -100 && part <= 100);
    t.is(interval.score, Math.round(parts.reduce((a, b) => a + b, 0) / parts.length));
    t.true(interval.score >= -100 && interval.score <= 100);
    t.is(interval.index, Math.round((interval.score + 100) / 2 + 1e-9));
    t.true(interval.index >= 0 && interval.index <= 100);
  }
  t.is(reading.score, reading.intervals['7d'].score);
  t.is(reading.index, reading.intervals['7d'].index);
  const [{ band }] = (await db.sql`select market.fear_greed_band(${reading.index}::int) as band`) as unknown as [{ band: string }];
  t.is(reading.regime, band);
});

test('breadth and momentum recomputed from the closes', async (t) => {
  const [{ reading }] = (await db.sql`select api.fear_greed() as reading`) as unknown as [{ reading: any }];
  for (const days of [7, 30, 90]) {
    const changes = SENTIMENT_COINS.map((c) => Math.log(c.close(TODAY) / c.close(TODAY - days)));
    const up = changes.filter((x) => x > 1e-12).length;
    t.is(reading.intervals[`${days}d`].breakdown.breadth, Math.round((200 * up) / changes.length - 100), `${days}d breadth`);
  }
  const sol = coin('solana');
  const [{ solana }] = (await db.sql`select api.fear_greed('solana') as solana`) as unknown as [{ solana: any }];
  t.is(solana.scope, 'solana');
  const momentum = squash((20 * Math.log(sol.close(TODAY) / sol.close(TODAY - 7))) / Math.sqrt(7));
  t.true(Math.abs(solana.intervals['7d'].breakdown.momentum - momentum) <= 1);
  let upDays = 0;
  for (let d = TODAY - 6; d <= TODAY; d++) if (sol.close(d) > sol.close(d - 1)) upDays++;
  t.is(solana.intervals['7d'].breakdown.breadth, Math.round((200 * upDays) / 7 - 100));
});

test('a pegged coin has no volatility component (no price moves to compare)', async (t) => {
  const [{ reading }] = (await db.sql`select api.fear_greed('tether') as reading`) as unknown as [{ reading: any }];
  t.is(reading.intervals['7d'].breakdown.volatility, null);
  t.is(reading.intervals['7d'].breakdown.momentum, 0);
});

test('only the current reading is kept: a second refresh replaces the snapshots', async (t) => {
  const before = await db.sql`select count(*)::int as n from market.sentiment_snapshots where kind in ('fear_greed', 'bull_bear')`;
  await db.sql`select market.refresh_sentiment()`;
  const after = await db.sql`select count(*)::int as n from market.sentiment_snapshots where kind in ('fear_greed', 'bull_bear')`;
  t.is(after[0]!.n, before[0]!.n);
  // the market plus every ranked coin, for each of the two kinds
  t.is(before[0]!.n, 2 * (SENTIMENT_COINS.length + 1));
});

test('bull/bear of a coin: the share of the 20 previous closes below today', async (t) => {
  const c = coin('dogecoin');
  const [{ reading }] = (await db.sql`select api.bull_bear('dogecoin') as reading`) as unknown as [{ reading: any }];
  let below = 0;
  for (let d = TODAY - 20; d < TODAY; d++) below += c.close(d) < c.close(TODAY) ? 1 : c.close(d) === c.close(TODAY) ? 0.5 : 0;
  const bull = Math.round((100 * below) / 20);
  t.like(reading, { scope: 'dogecoin', bull, bear: 100 - bull, score: 2 * bull - 100 });
  t.is(reading.regime, bull >= 60 ? 'bull' : bull <= 40 ? 'bear' : 'neutral');
  const [{ market }] = (await db.sql`select api.bull_bear() as market`) as unknown as [{ market: any }];
  t.is(market.scope, 'market');
  t.is(market.coins, SENTIMENT_COINS.filter((x) => x.supply !== null).length);
  t.is(market.bull + market.bear, 100);
  // before the new UTC day has a bar (its first minutes): yesterday's close against the 20 days before it, not no reading
  const next = await db.sql<{ coin_id: number | null; reading: any }[]>`
    select r.coin_id, r.reading from market.bull_bear_readings(now() + interval '1 day') r join market.coins k on k.id = r.coin_id where k.slug = 'dogecoin'`;
  t.is(next.length, 1);
  t.like(next[0]!.reading, { scope: 'dogecoin', bull, bear: 100 - bull });
});

test('altseason: every day with a 90-day look-back, today recomputed from the closes', async (t) => {
  const days = await db.sql<{ day: string; index: number; outperformers: number; coins: number }[]>`
    select day::text, index, outperformers, coins from market.altseason_days order by day`;
  t.is(days.length, DAYS - 90);
  const btc = coin('bitcoin');
  const ratio = (c: (typeof SENTIMENT_COINS)[number]) => c.close(TODAY) / c.close(TODAY - 90);
  // alts: not bitcoin, not pegged (tether), with a marketcap (mystery has none)
  const alts = SENTIMENT_COINS.filter((c) => c.slug !== 'bitcoin' && c.slug !== 'tether' && c.supply !== null);
  const outperformers = alts.filter((c) => ratio(c) > ratio(btc)).length;
  t.like(days.at(-1)!, { outperformers, coins: alts.length, index: Math.round((100 * outperformers) / alts.length) });
  const [{ result }] = (await db.sql`select api.altseason(30) as result`) as unknown as [{ result: any }];
  t.is(result.history.length, 30);
  t.is(result.index, days.at(-1)!.index);
  t.is(result.history.at(-1).date, days.at(-1)!.day);
  const [{ current }] = (await db.sql`select api.altseason(0) as current`) as unknown as [{ current: any }];
  t.deepEqual(current.history, []);
});

test('an unknown coin is MD404, days out of range MD422', async (t) => {
  const missing = await t.throwsAsync(db.sql`select api.fear_greed('no-such-coin')`);
  t.is((missing as any).code, 'MD404');
  const bad = await t.throwsAsync(db.sql`select api.altseason(366)`);
  t.is((bad as any).code, 'MD422');
});

test('every component of the market reading is available on this market', async (t) => {
  const [{ reading }] = (await db.sql`select api.fear_greed() as reading`) as unknown as [{ reading: any }];
  for (const value of Object.values(reading.intervals['30d'].breakdown)) t.not(value, null);
});

test('the indicator tally: 25 categories in range, per-coin counts add up, breadth from the closes', async (t) => {
  await db.sql`select market.refresh_indicator_tally()`;
  const [{ tally }] = (await db.sql`select api.market_indicator_tally() as tally`) as unknown as [{ tally: any }];
  t.is(tally.categories.length, 25);
  t.is(new Set(tally.categories.map((c: any) => c.category)).size, 25);
  for (const c of tally.categories) {
    t.true(Number.isInteger(c.score) && c.score >= -100 && c.score <= 100, c.category);
    t.true(['bullish', 'bearish', 'neutral', 'overbought', 'oversold'].includes(c.state), c.category);
  }
  const byName = new Map<string, any>(tally.categories.map((c: any) => [c.category, c]));
  const rsi = byName.get('rsi')!.data;
  t.is(rsi.coins, SENTIMENT_COINS.length);
  t.is(rsi.bullish + rsi.bearish + rsi.neutral + rsi.overbought + rsi.oversold, SENTIMENT_COINS.length);
  // breadth-24h: coins whose close rose since yesterday's
  const up = SENTIMENT_COINS.filter((c) => c.close(TODAY) > c.close(TODAY - 1)).length;
  const down = SENTIMENT_COINS.filter((c) => c.close(TODAY) < c.close(TODAY - 1)).length;
  const breadth = byName.get('breadth-24h')!;
  t.like(breadth.data, { bullish: up, bearish: down });
  t.is(breadth.score, Math.round((100 * (up - down)) / SENTIMENT_COINS.length));
  const [{ fg }] = (await db.sql`select api.fear_greed() as fg`) as unknown as [{ fg: any }];
  t.is(byName.get('fear-greed')!.score, fg.score);
  t.is(byName.get('market-momentum')!.score, fg.intervals['7d'].breakdown.momentum);
  t.is(tally.summary.bullish + tally.summary.bearish + tally.summary.neutral, 25);
});

test('the analyst reads the readings and the vote tallies, never the votes', async (t) => {
  const analyst = postgres(db.urlAs('analyst'), { prepare: false, max: 1, onnotice: () => {} });
  try {
    const [{ fg }] = (await analyst`select api.fear_greed() as fg`) as unknown as [{ fg: any }];
    t.is(fg.scope, 'market');
    const [{ votes }] = (await analyst`select api.coin_votes('bitcoin') as votes`) as unknown as [{ votes: any }];
    t.is(votes.total, 0);
    const denied = await t.throwsAsync(analyst`select count(*) from app.coin_votes`);
    t.is((denied as any).code, '42501');
  } finally {
    await analyst.end({ timeout: 5 });
  }
});
