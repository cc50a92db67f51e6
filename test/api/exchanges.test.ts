// Exchanges group over HTTP: the venue list (filters, selectors, sort, pagination), detail, trust
// score, history, sparkline, a venue's tickers and coins, against ./exchange_fixtures.ts.
import test from 'ava';
import { useApi } from '../helpers/http.ts';
import { TICKERS, VENUES, expectedVenues, type ExpectedVenue } from './exchange_fixtures.ts';
import { loadVenueFixture } from './exchange_fixtures.ts';
import type { Fixture } from './fixtures.ts';

let fixture: Fixture;
const handles = useApi(test, { setup: async ({ db }) => void (fixture = await loadVenueFixture(db)) });
const state = expectedVenues();
/** the factors and weights documented on market.exchange_trust_score() */
const TRUST_WEIGHTS = {
  rank: 0.1, volume: 0.15, age: 0.08, volume_trend: 0.05, stability: 0.1, rank_stability: 0.05, ticker_health: 0.15,
  pairs: 0.07, community: 0, assets: 0.07, dominance: 0.05, market_breadth: 0.08, transparency: 0.05,
} as const;
const TRUST_FACTORS = Object.keys(TRUST_WEIGHTS) as (keyof typeof TRUST_WEIGHTS)[];

let key: Promise<string> | undefined;
const get = async (path: string) => handles.api.get(path, await (key ??= handles.api.key({ plan: 'pro' })));
const slugs = (body: { data: { slug: string }[] }) => body.data.map((row) => row.slug);
/** the default order: rank (unranked last), then volume desc, then id */
const byRank = (rows: ExpectedVenue[]) =>
  [...rows].sort((a, b) => (a.rank ?? Infinity) - (b.rank ?? Infinity) || b.volume.comparedTo(a.volume) || a.venue.id - b.venue.id);
const all = [...state.values()];

test('/exchanges lists every venue by rank, rows typed as the reference types them', async (t) => {
  const response = await get('/api/v1/exchanges');
  t.is(response.status, 200);
  t.deepEqual(slugs(response.body), byRank(all).map((e) => e.venue.slug));
  t.deepEqual(response.body.meta, { current_page: 1, from: 1, last_page: 1, per_page: 100, to: all.length, total: all.length });
  for (const row of response.body.data) {
    const e = state.get(row.id)!;
    t.like(row, {
      slug: e.venue.slug, name: e.venue.name, type: e.venue.type, rank: e.rank, volume_24h: e.volume.toNumber(),
      volume_dominance: e.dominance, change_24h: e.change24h, change_7d: e.change7d, change_rank_24h: e.changeRank24h,
      change_rank_7d: e.changeRank7d, pairs: e.pairs, assets: e.assets,
    });
    t.is(typeof row.volume_24h, 'number', 'USD volumes are numbers');
  }
  const big = response.body.data[0];
  t.regex(big.last_updated, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
  t.is(big.change_24h, state.get(201)!.change24h);
  t.not(big.change_24h, null, 'the fixture has history 24 hours back');
});

test('/exchanges filters: type, search, pairs, assets, volume, ids and slugs', async (t) => {
  const expectSlugs = async (query: string, pick: (e: ExpectedVenue) => boolean) => {
    const response = await get(`/api/v1/exchanges?${query}`);
    t.is(response.status, 200, JSON.stringify(response.body));
    t.deepEqual(slugs(response.body), byRank(all.filter(pick)).map((e) => e.venue.slug), query);
  };
  await expectSlugs('type=dex', (e) => e.venue.type === 'dex');
  await expectSlugs('type=cex', (e) => e.venue.type === 'cex');
  await expectSlugs('search=dex', (e) => /dex/i.test(e.venue.name) || e.venue.slug.includes('dex'));
  await expectSlugs('min_pairs=2', (e) => e.pairs >= 2);
  await expectSlugs('max_pairs=0', (e) => e.pairs === 0);
  await expectSlugs('min_assets=3', (e) => e.assets >= 3);
  await expectSlugs('min_volume=7000&max_volume=300100', (e) => e.volume.gte(7000) && e.volume.lte(300100));
  await expectSlugs('ids=201,203&slugs=closed', (e) => [201, 203].includes(e.venue.id) || e.venue.slug === 'closed');
});

test('/exchanges sort: fields, descending, nulls last both ways, and pagination', async (t) => {
  const asc = await get('/api/v1/exchanges?sort=change_24h');
  const withChange = all.filter((e) => e.change24h !== null).sort((a, b) => a.change24h! - b.change24h!);
  t.deepEqual(slugs(asc.body).slice(0, withChange.length), withChange.map((e) => e.venue.slug));
  t.true(asc.body.data.slice(withChange.length).every((row: { change_24h: null }) => row.change_24h === null), 'nulls last ascending');
  const desc = await get('/api/v1/exchanges?sort=-assets,volume');
  const expected = [...all].sort((a, b) => b.assets - a.assets || a.volume.comparedTo(b.volume) || (a.rank ?? Infinity) - (b.rank ?? Infinity) || a.venue.id - b.venue.id);
  t.deepEqual(slugs(desc.body), expected.map((e) => e.venue.slug));
  const page = await get('/api/v1/exchanges?per_page=2&page=2');
  t.deepEqual(slugs(page.body), byRank(all).slice(2, 4).map((e) => e.venue.slug));
  t.is(page.body.links.next, `${handles.api.base}/api/v1/exchanges?per_page=2&page=3`);
});

test('/exchanges rejects bad parameters with 422', async (t) => {
  for (const query of ['type=hybrid', 'sort=name', 'min_pairs=-1', 'min_volume=abc', 'per_page=251', 'search=' + 'x'.repeat(101), 'ids=a,b']) {
    const response = await get(`/api/v1/exchanges?${query}`);
    t.is(response.status, 422, query);
    t.is(response.body.error.code, 'validation');
  }
});

test('/exchanges/{slug}: detail with type from the taxonomy, null when unknown; 404 for an unknown slug', async (t) => {
  const response = await get('/api/v1/exchanges/big-cex');
  t.is(response.status, 200);
  const e = state.get(201)!;
  t.like(response.body.data, {
    id: 201, slug: 'big-cex', name: 'Big CEX', type: 'cex', rank: e.rank, volume_24h: e.volume.toNumber(), pairs: e.pairs,
    assets: e.assets, established: '2017-07-14', location: 'Testland', website: 'https://big-cex.example',
  });
  t.is((await get('/api/v1/exchanges/amm-dex')).body.data.type, 'dex');
  t.is((await get('/api/v1/exchanges/mystery')).body.data.type, null, 'no cex/dex term: type null');
  const closed = (await get('/api/v1/exchanges/closed')).body.data;
  t.is(closed.rank, null);
  t.is(closed.volume_dominance, null);
  const missing = await get('/api/v1/exchanges/no-such-venue');
  t.is(missing.status, 404);
  t.deepEqual(missing.body.error, { code: 'not_found', message: 'Exchange not found.', details: {} });
});

test('/exchanges/{slug}/trust-score: 13 factors 0-10 as stored, the score their weighted mean; null score and breakdown when unranked', async (t) => {
  const stored = new Map((await handles.db.sql`select exchange_id, trust_score, trust_breakdown from market.exchange_state`)
    .map((row) => [row.exchange_id as number, row]));
  const bodies = new Map<string, { score: number | null; breakdown: Record<(typeof TRUST_FACTORS)[number], number> | null }>();
  for (const venue of VENUES) {
    const response = await get(`/api/v1/exchanges/${venue.slug}/trust-score`);
    t.is(response.status, 200);
    const row = stored.get(venue.id)!;
    t.like(response.body.data, { exchange: venue.slug, score: row.trust_score, breakdown: row.trust_breakdown }, venue.slug);
    bodies.set(venue.slug, response.body.data);
  }
  for (const slug of ['big-cex', 'amm-dex', 'mystery']) {
    const { score, breakdown } = bodies.get(slug)!;
    t.deepEqual(Object.keys(breakdown!).sort(), [...TRUST_FACTORS].sort(), slug);
    for (const factor of TRUST_FACTORS) {
      const value = breakdown![factor];
      t.true(typeof value === 'number' && value >= 0 && value <= 10, `${slug} ${factor}: ${value}`);
    }
    const mean = TRUST_FACTORS.reduce((sum, f) => sum + TRUST_WEIGHTS[f] * breakdown![f], 0);
    t.is(score, Math.round(mean * 10) / 10, `${slug}: the weighted mean to one decimal`);
  }
  // big-cex: 0.1 % volume-weighted spread, fresh tickers in line with the median: 10 * (0.5 * 0.895 + 0.25 + 0.25)
  t.is(bodies.get('big-cex')!.breakdown!.ticker_health, 9.5);
  t.true(bodies.get('amm-dex')!.breakdown!.ticker_health < 9.5, 'amm-dex quotes wider spreads (0.5 %)');
  t.is(bodies.get('big-cex')!.breakdown!.rank, 10);
  t.true(bodies.get('big-cex')!.breakdown!.pairs > bodies.get('mystery')!.breakdown!.pairs, '2 pairs score above 1');
  t.deepEqual(bodies.get('closed'), { exchange: 'closed', score: null, breakdown: null }, 'an inactive venue is unranked');
  t.deepEqual(bodies.get('idle-dex'), { exchange: 'idle-dex', score: null, breakdown: null }, 'a venue without volume is unranked');
  t.is((await get('/api/v1/exchanges/nope/trust-score')).status, 404);
});

test('/exchanges/{slug}/history: snapshots per interval, oldest first, limit keeps the newest', async (t) => {
  const minutely = await get('/api/v1/exchanges/big-cex/history?interval=minutely');
  t.is(minutely.status, 200);
  const times = minutely.body.data.map((row: { time: string }) => row.time);
  // the 7-day snapshot, the 24-hour one, and the one the state refresh recorded
  t.is(times.length, 3);
  t.deepEqual(times, [...times].sort());
  const last = minutely.body.data.at(-1);
  t.deepEqual(last, {
    time: new Date(fixture.now).toISOString().replace(/\.\d{3}Z$/, '+00:00'),
    volume_24h: state.get(201)!.volume.toNumber(), volume_dominance: state.get(201)!.dominance,
    rank: 1, pairs: state.get(201)!.pairs, assets: state.get(201)!.assets,
  });
  t.is(minutely.body.meta.retention, '8 days');
  const limited = await get('/api/v1/exchanges/big-cex/history?interval=hourly&limit=2');
  t.is(limited.body.data.length, 2);
  t.is(limited.body.data[1].volume_24h, state.get(201)!.volume.toNumber());
  const daily = await get('/api/v1/exchanges/big-cex/history');
  t.is(daily.body.meta.interval, 'daily');
  t.true(daily.body.data.length >= 2);
  t.is((await get('/api/v1/exchanges/big-cex/history?interval=weekly')).status, 422);
  t.is((await get('/api/v1/exchanges/big-cex/history?limit=2001')).status, 422);
  t.is((await get('/api/v1/exchanges/nope/history')).status, 404);
});

test('/exchanges/{slug}/sparkline: points, extremes and change over the period', async (t) => {
  // 7 days of hourly snapshots (the one exactly 7 days back has just left the window)
  const response = await get('/api/v1/exchanges/big-cex/sparkline?period=7d');
  t.is(response.status, 200);
  const volumes = [2000000, state.get(201)!.volume.toNumber()];
  t.deepEqual(response.body.data.points.map((p: { volume: number }) => p.volume), volumes);
  t.is(response.body.data.low, Math.min(...volumes));
  t.is(response.body.data.high, Math.max(...volumes));
  t.is(response.body.data.change, state.get(201)!.change24h);
  t.is((await get('/api/v1/exchanges/big-cex/sparkline?period=2d')).status, 422);
  t.is((await get('/api/v1/exchanges/nope/sparkline')).status, 404);
});

test('/exchanges/{slug}/tickers: only that venue, largest volume first; 404 for an unknown venue', async (t) => {
  const response = await get('/api/v1/exchanges/big-cex/tickers');
  t.is(response.status, 200);
  const own = TICKERS.filter((x) => x.exchange === 201).sort((a, b) => Number(b.volumeUsd) - Number(a.volumeUsd));
  t.deepEqual(response.body.data.map((row: { id: number }) => row.id), own.map((x) => x.id));
  t.is(response.body.meta.total, own.length);
  t.is((await get('/api/v1/exchanges/nope/tickers')).status, 404);
});

test('/exchanges/{slug}/assets: the coins listed there (base or quote) as coin rows', async (t) => {
  const response = await get('/api/v1/exchanges/big-cex/assets');
  t.is(response.status, 200);
  // alpha and mu as bases, beta as mu's quote; in the coin list's order (rank)
  t.deepEqual(response.body.data.map((row: { slug: string }) => row.slug).sort(), ['alpha', 'beta', 'mu']);
  const ranks = response.body.data.map((row: { rank: number }) => row.rank);
  t.deepEqual(ranks, [...ranks].sort((a, b) => a - b));
  t.is(typeof response.body.data[0].price, 'string');
  const tokens = await get('/api/v1/exchanges/big-cex/assets?type=token');
  t.deepEqual(tokens.body.data.map((row: { slug: string }) => row.slug).sort(), ['beta', 'mu']);
  t.is((await get('/api/v1/exchanges/nope/assets')).status, 404);
});
