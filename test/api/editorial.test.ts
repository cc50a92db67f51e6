// Editorial group over HTTP: the content fixture (test/content/fixtures.ts) imported through the
// content importer, over the coin and venue fixtures so related slugs resolve to names.
import test from 'ava';
import { importContent } from '../../src/content/import.ts';
import { useApi } from '../helpers/http.ts';
import { PUBLISHED_ARTICLES, writeContentDir } from '../content/fixtures.ts';
import { loadVenueFixture } from './exchange_fixtures.ts';

const handles = useApi(test, {
  setup: async ({ db }) => {
    await loadVenueFixture(db);
    await importContent(db.sql, writeContentDir());
  },
});
// Pro: these tests make more calls than the Free plan's 30 a minute.
let key: Promise<string> | undefined;
const apiKey = () => (key ??= handles.api.key({ plan: 'pro' }));
const get = async (path: string) => handles.api.get(path, await apiKey());
const post = async (path: string, body: unknown) =>
  handles.api.request('POST', path, { key: await apiKey(), headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const slugs = (body: { data: { slug: string }[] }) => body.data.map((a) => a.slug);
const ids = (body: { data: { id: number }[] }) => body.data.map((a) => a.id);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/;

test('/articles: published only, newest first, every field typed, paginated', async (t) => {
  const response = await get('/api/v1/articles');
  t.is(response.status, 200);
  t.deepEqual(slugs(response.body), PUBLISHED_ARTICLES);
  const guide = response.body.data.find((a: { slug: string }) => a.slug === 'alpha-guide');
  t.deepEqual(Object.keys(guide).sort(), ['entities', 'fallback_fields', 'hero_image', 'id', 'locale', 'published_at', 'reading_time_minutes', 'slug', 'subtitle', 'tags', 'title', 'updated_at'].sort());
  t.like(guide, {
    title: 'Alpha guide', subtitle: 'All about alpha', locale: 'en', fallback_fields: [], tags: ['guide', 'tutorial'],
    // 452 words (the heading's two and 450) at 200 a minute
    reading_time_minutes: 3, hero_image: 'https://example.com/a.jpg', published_at: '2026-01-10T09:00:00+00:00', updated_at: '2026-01-12T10:30:00+00:00',
  });
  t.deepEqual(guide.entities, [
    { type: 'coin', slug: 'alpha', name: 'Alpha' },
    { type: 'wallet', slug: 'vault-one', name: 'Vault One' },
    { type: 'wallet', slug: 'pocket', name: 'Pocket' },
  ]);
  t.is(typeof guide.id, 'number');
  t.regex(guide.published_at, ISO);
  t.like(response.body.meta, { current_page: 1, per_page: 20, total: PUBLISHED_ARTICLES.length, last_page: 1 });
  const page = await get('/api/v1/articles?per_page=3&page=2');
  t.deepEqual(slugs(page.body), PUBLISHED_ARTICLES.slice(3));
  t.like(page.body.meta, { current_page: 2, per_page: 3, total: 4, last_page: 2 });
});

test('/articles filters: tag, related coin / exchange / wallet slug, search', async (t) => {
  const list = async (query: string) => slugs((await get(`/api/v1/articles?${query}`)).body);
  t.deepEqual(await list('tag=review'), ['exchange-review', 'wallet-roundup']);
  t.deepEqual(await list('tag=trading'), []);
  t.deepEqual(await list('coin=alpha'), ['alpha-guide']);
  t.deepEqual(await list('exchange=big-cex'), ['exchange-review', 'beta-news']);
  t.deepEqual(await list('wallet=vault-one'), ['alpha-guide', 'wallet-roundup']);
  t.deepEqual(await list('wallet=vault-one&tag=guide'), ['alpha-guide']);
  t.deepEqual(await list('search=ROUNDUP'), ['wallet-roundup']);
  t.deepEqual(await list('search=Nachrichten&locale=de'), ['beta-news']);
  t.deepEqual(await list('search=Nachrichten'), []);
  t.deepEqual(await list('coin=unknown-coin'), []);
});

test('locale: per-field English fallback, and the payload says which locale won', async (t) => {
  const de = await get('/api/v1/articles/alpha-guide?locale=de');
  t.is(de.status, 200);
  // German has title and body; the subtitle comes from English
  t.like(de.body.data, { title: 'Alpha-Leitfaden', subtitle: 'All about alpha', body: '<p>Auf Deutsch.</p>', locale: 'de', fallback_fields: ['subtitle'], reading_time_minutes: 1 });
  t.deepEqual(de.body.meta, { requested_locale: 'de', locale: 'de' });
  const es = await get('/api/v1/articles/beta-news?locale=es');
  t.like(es.body.data, { title: 'Noticias de beta', subtitle: 'Beta moves', locale: 'es', fallback_fields: ['body', 'subtitle'] });
  t.regex(es.body.data.body, /Beta news/);
  // no French at all: English wins, nothing is a fallback
  const fr = await get('/api/v1/articles/beta-news?locale=fr');
  t.like(fr.body.data, { title: 'Beta news', locale: 'en', fallback_fields: [] });
  t.deepEqual(fr.body.meta, { requested_locale: 'fr', locale: 'en' });
  // pt-BR has only a subtitle: the title comes from its language (pt), the body from English
  const br = await get('/api/v1/articles/wallet-roundup?locale=pt_br');
  // (the reading time is that of the body served: English's 252 words)
  t.like(br.body.data, { title: 'Resumo de carteiras', subtitle: 'Cinco carteiras', locale: 'pt-BR', fallback_fields: ['body', 'title'], reading_time_minutes: 2 });
  // lists resolve per item the same way
  const list = await get('/api/v1/articles?locale=de');
  const items = Object.fromEntries(list.body.data.map((a: { slug: string }) => [a.slug, a]));
  t.like(items['beta-news'], { title: 'Beta-Nachrichten', subtitle: 'Beta bewegt sich', locale: 'de', fallback_fields: [] });
  t.like(items['exchange-review'], { title: 'Exchange review', subtitle: null, locale: 'en', fallback_fields: [] });
});

test('/articles/{slug}: detail with body and counts; drafts, archived, scheduled and unknown are 404', async (t) => {
  const response = await get('/api/v1/articles/exchange-review');
  t.is(response.status, 200);
  t.like(response.body.data, { slug: 'exchange-review', subtitle: null, reading_time_minutes: 5, views: 0, helpful_yes: 0, helpful_no: 0 });
  t.deepEqual(response.body.data.entities, [
    { type: 'exchange', slug: 'big-cex', name: 'Big CEX' },
    { type: 'exchange', slug: 'amm-dex', name: 'AMM Swap' },
  ]);
  // a related wallet that is a draft shows no name
  const roundup = await get('/api/v1/articles/wallet-roundup');
  t.deepEqual(roundup.body.data.entities.map((e: { name: string | null }) => e.name), ['Vault One', 'Cold Card', null]);
  for (const slug of ['draft-article', 'archived-article', 'scheduled-article', 'nope']) {
    const missing = await get(`/api/v1/articles/${slug}`);
    t.is(missing.status, 404, slug);
    t.deepEqual(missing.body.error, { code: 'not_found', message: 'Article not found.', details: {} });
  }
});

// Counters of beta-news, video 11 and insight 22 are set here: other tests do not check theirs.
test('reads never change view counts; feedback counts helpful answers', async (t) => {
  const { sql } = handles.db;
  await sql`update market.articles set views = 41 where slug = 'beta-news'`;
  await sql`update market.videos set views = 7 where id = 11`;
  await sql`update market.insights set views = 3 where id = 22`;
  const counts = () => sql`
    select (select json_object_agg(slug, views) from market.articles) as articles,
      (select json_object_agg(id, views) from market.videos) as videos,
      (select json_object_agg(id, views) from market.insights) as insights`;
  const before = await counts();
  for (let i = 0; i < 2; i++) {
    t.is((await get('/api/v1/articles/beta-news')).body.data.views, 41);
    t.is((await get('/api/v1/videos/11')).body.data.views, 7);
    t.is((await get('/api/v1/insights/22')).body.data.views, 3);
    await get('/api/v1/articles');
    await get('/api/v1/insights');
    await get('/api/v1/coins/alpha/videos');
    await get('/api/v1/coins/alpha/insights');
  }
  t.deepEqual(await counts(), before);

  t.deepEqual((await post('/api/v1/articles/beta-news/feedback', { helpful: true })).body, { data: { article: 'beta-news', helpful_yes: 1, helpful_no: 0 }, meta: {} });
  await post('/api/v1/articles/beta-news/feedback', { helpful: true });
  const no = await post('/api/v1/articles/beta-news/feedback', { helpful: false });
  t.is(no.status, 200);
  t.deepEqual(no.body.data, { article: 'beta-news', helpful_yes: 2, helpful_no: 1 });
  t.like((await get('/api/v1/articles/beta-news')).body.data, { helpful_yes: 2, helpful_no: 1, views: 41 });
});

test('feedback: validation and 404', async (t) => {
  for (const body of [{}, { helpful: 'yes' }, { helpful: 1 }]) {
    const response = await post('/api/v1/articles/beta-news/feedback', body);
    t.is(response.status, 422, JSON.stringify(body));
    t.deepEqual(Object.keys(response.body.error.details.errors), ['helpful']);
  }
  t.is((await post('/api/v1/articles/draft-article/feedback', { helpful: true })).status, 404);
  t.is((await post('/api/v1/articles/nope/feedback', { helpful: false })).status, 404);
  const [row] = await handles.db.sql`select helpful_yes, helpful_no from market.articles where slug = 'draft-article'`;
  t.deepEqual({ ...row }, { helpful_yes: 0, helpful_no: 0 });
});

test('/coins/{slug}/videos: published videos of the coin, newest first, type and search, paginated', async (t) => {
  const response = await get('/api/v1/coins/alpha/videos');
  t.is(response.status, 200);
  t.deepEqual(ids(response.body), [12, 11]);
  t.deepEqual(response.body.data[1], {
    id: 11, type: 'tutorial', title: 'Alpha setup', description: 'Set up alpha step by step', url: 'https://video.example.com/11',
    thumbnail: null, duration_seconds: 600, channel: 'Academy', published_at: '2026-01-05T10:00:00+00:00',
    entities: [{ type: 'coin', slug: 'alpha', name: 'Alpha' }, { type: 'wallet', slug: 'vault-one', name: 'Vault One' }],
  });
  t.like(response.body.meta, { current_page: 1, per_page: 10, total: 2, coin: 'alpha' });
  t.deepEqual(ids((await get('/api/v1/coins/alpha/videos?type=tutorial')).body), [11]);
  t.deepEqual(ids((await get('/api/v1/coins/alpha/videos?search=STEP')).body), [11]);
  t.deepEqual(ids((await get('/api/v1/coins/alpha/videos?per_page=1&page=2')).body), [11]);
  t.deepEqual(ids((await get('/api/v1/coins/gamma/videos')).body), []);
  const unknown = await get('/api/v1/coins/nope/videos');
  t.is(unknown.status, 404);
  t.is(unknown.body.error.message, 'Coin not found.');
  t.is((await get('/api/v1/coins/alpha/videos?type=vlog')).status, 422);
  t.is((await get('/api/v1/coins/alpha/videos?per_page=51')).status, 422);
});

test('/videos/{id}: detail with views; draft, unknown and malformed ids', async (t) => {
  const response = await get('/api/v1/videos/13');
  t.is(response.status, 200);
  t.like(response.body.data, { id: 13, type: 'review', views: 0, entities: [{ type: 'exchange', slug: 'big-cex', name: 'Big CEX' }] });
  for (const id of [14, 999]) {
    const missing = await get(`/api/v1/videos/${id}`);
    t.is(missing.status, 404);
    t.is(missing.body.error.message, 'Video not found.');
  }
  const bad = await get('/api/v1/videos/abc');
  t.is(bad.status, 422);
  t.deepEqual(Object.keys(bad.body.error.details.errors), ['id']);
});

test('/insights: published only, sort by first report or last update, filters, locale', async (t) => {
  const response = await get('/api/v1/insights');
  t.is(response.status, 200);
  t.deepEqual(ids(response.body), [22, 23, 21]);
  t.deepEqual(response.body.data[2], {
    id: 21, type: 'per_asset', sentiment: 'bullish', title: 'Alpha breaks out', summary: 'Alpha above resistance', locale: 'en', fallback_fields: [],
    entities: [{ type: 'coin', slug: 'alpha', name: 'Alpha' }], first_reported_at: '2026-01-01T06:00:00+00:00', last_updated_at: '2026-03-01T06:00:00+00:00',
  });
  t.like(response.body.meta, { total: 3, per_page: 20, sort: 'first_reported' });
  t.deepEqual(ids((await get('/api/v1/insights?sort=last_updated')).body), [21, 22, 23]);
  t.deepEqual(ids((await get('/api/v1/insights?type=per_asset')).body), [23, 21]);
  t.deepEqual(ids((await get('/api/v1/insights?coin=beta')).body), [23]);
  t.deepEqual(ids((await get('/api/v1/insights?search=steady')).body), [22]);
  t.deepEqual(ids((await get('/api/v1/insights?per_page=1&page=3')).body), [21]);
  const de = await get('/api/v1/insights?locale=de&coin=alpha');
  t.like(de.body.data[0], { id: 23, title: 'Alpha und Beta laufen auseinander', summary: 'Nur auf Deutsch', locale: 'de', fallback_fields: [] });
  t.like(de.body.data[1], { id: 21, title: 'Alpha bricht aus', summary: 'Alpha above resistance', locale: 'de', fallback_fields: ['body', 'summary'] });
  for (const query of ['sort=newest', 'type=rumour', 'per_page=51', 'locale=deutsch']) t.is((await get(`/api/v1/insights?${query}`)).status, 422, query);
});

test('/insights/{id}: detail in a locale with fallback; archived and unknown are 404', async (t) => {
  const response = await get('/api/v1/insights/21?locale=de');
  t.is(response.status, 200);
  t.like(response.body.data, { id: 21, title: 'Alpha bricht aus', body: '<p>Body</p>', locale: 'de', fallback_fields: ['body', 'summary'], views: 0 });
  t.deepEqual(response.body.meta, { requested_locale: 'de', locale: 'de' });
  for (const id of [24, 999]) {
    const missing = await get(`/api/v1/insights/${id}`);
    t.is(missing.status, 404);
    t.is(missing.body.error.message, 'Insight not found.');
  }
});

test('/coins/{slug}/insights: the coin timeline by offset and limit, newest first', async (t) => {
  const response = await get('/api/v1/coins/alpha/insights');
  t.is(response.status, 200);
  t.deepEqual(ids(response.body), [23, 21]);
  t.deepEqual(response.body.meta, { coin: 'alpha', locale: 'en', offset: 0, limit: 5, total: 2 });
  t.deepEqual(ids((await get('/api/v1/coins/alpha/insights?offset=1&limit=1')).body), [21]);
  t.deepEqual(ids((await get('/api/v1/coins/alpha/insights?offset=2')).body), []);
  t.like((await get('/api/v1/coins/alpha/insights?locale=de&limit=1')).body.data[0], { title: 'Alpha und Beta laufen auseinander', locale: 'de' });
  t.is((await get('/api/v1/coins/nope/insights')).status, 404);
  for (const query of ['offset=501', 'limit=0', 'limit=51']) t.is((await get(`/api/v1/coins/alpha/insights?${query}`)).status, 422, query);
});

test('/articles validation: bad parameters are 422 with the field named', async (t) => {
  const cases: [string, string][] = [['tag=gossip', 'tag'], ['per_page=51', 'per_page'], ['locale=english', 'locale'], ['coin=Not%20a%20slug', 'coin'], ['page=0', 'page']];
  for (const [query, field] of cases) {
    const response = await get(`/api/v1/articles?${query}`);
    t.is(response.status, 422, query);
    t.deepEqual(Object.keys(response.body.error.details.errors), [field], query);
  }
});
