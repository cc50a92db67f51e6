// Wallets group over HTTP: the content fixture (test/content/fixtures.ts) imported through the
// content importer over the coin fixture; what each endpoint must return is computed here from
// the same fixture.
import test from 'ava';
import { importContent } from '../../src/content/import.ts';
import { useApi } from '../helpers/http.ts';
import { PUBLIC_ASSETS, WALLETS, writeContentDir } from '../content/fixtures.ts';
import { loadCoinFixture } from './fixtures.ts';

const handles = useApi(test, {
  setup: async ({ db }) => {
    await loadCoinFixture(db);
    await importContent(db.sql, writeContentDir());
  },
});
// Pro: these tests make more calls than the Free plan's 30 a minute.
let key: Promise<string> | undefined;
const get = async (path: string) => handles.api.get(path, await (key ??= handles.api.key({ plan: 'pro' })));

const published = WALLETS.filter((w) => w.status !== 'DRAFT');
const TOP_SCORE = Math.max(...published.map((w) => w.score));
const slugs = (body: { data: { slug: string }[] }) => body.data.map((w) => w.slug);
const byScore = [...published].sort((a, b) => b.score - a.score).map((w) => w.slug);

test('/wallets: every field typed, highest score first, drafts never shown, top_score in meta', async (t) => {
  const response = await get('/api/v1/wallets');
  t.is(response.status, 200);
  t.deepEqual(slugs(response.body), byScore);
  const vault = response.body.data.find((w: { slug: string }) => w.slug === 'vault-one');
  t.deepEqual(Object.keys(vault).sort(), ['assets', 'cons', 'id', 'logo', 'name', 'price_model', 'pros', 'released_at', 'score', 'slug', 'status'].sort());
  t.like(vault, { name: 'Vault One', score: 90, assets: PUBLIC_ASSETS['vault-one']!.length, pros: 3, cons: 1, price_model: 'paid', status: 'Active', released_at: '2019-05-01', logo: 'https://example.com/v1.png' });
  t.is(typeof vault.id, 'number');
  for (const w of response.body.data) t.is(w.assets, PUBLIC_ASSETS[w.slug]!.length, w.slug);
  t.like(response.body.data.find((w: { slug: string }) => w.slug === 'old-desk'), { status: 'Discontinued', released_at: null, assets: 0 });
  t.like(response.body.meta, { current_page: 1, from: 1, to: published.length, total: published.length, last_page: 1, top_score: TOP_SCORE });
  t.deepEqual(Object.keys(response.body.links), ['first', 'last', 'prev', 'next']);
});

test('/wallets: top_score is the highest of ALL wallets, not of the page or the filter', async (t) => {
  const page2 = await get('/api/v1/wallets?per_page=2&page=2');
  t.deepEqual(slugs(page2.body), byScore.slice(2, 4));
  t.like(page2.body.meta, { current_page: 2, per_page: 2, from: 3, to: 4, total: published.length, last_page: 3, top_score: TOP_SCORE });
  t.regex(page2.body.links.next, /page=3/);
  t.regex(page2.body.links.prev, /page=1/);
  const filtered = await get('/api/v1/wallets?max_score=80');
  t.deepEqual(slugs(filtered.body), ['pocket', 'old-desk']);
  t.is(filtered.body.meta.top_score, TOP_SCORE);
  const none = await get('/api/v1/wallets?search=nothing-matches');
  t.deepEqual(none.body.data, []);
  t.is(none.body.meta.top_score, TOP_SCORE);
});

test('/wallets filters: search, score bounds, tags (all of them), ids and slugs', async (t) => {
  t.deepEqual(slugs((await get('/api/v1/wallets?search=CARD')).body), ['cold-card']);
  t.deepEqual(slugs((await get('/api/v1/wallets?min_score=82&max_score=88')).body), ['cold-card', 'browser-x']);
  t.deepEqual(slugs((await get('/api/v1/wallets?tags=hardware')).body), ['vault-one', 'cold-card']);
  t.deepEqual(slugs((await get('/api/v1/wallets?tags=non-custodial,swap')).body), ['browser-x', 'pocket']);
  t.deepEqual(slugs((await get('/api/v1/wallets?tags=lightning')).body), []);
  t.deepEqual(slugs((await get('/api/v1/wallets?slugs=pocket,secret-draft,old-desk')).body), ['pocket', 'old-desk']);
  const ids = (await get('/api/v1/wallets')).body.data.filter((w: { slug: string }) => ['pocket', 'cold-card'].includes(w.slug)).map((w: { id: number }) => w.id);
  t.deepEqual(slugs((await get(`/api/v1/wallets?ids=${ids.join(',')}`)).body), ['cold-card', 'pocket']);
});

test('/wallets sort: each field both ways, multi-field, nulls last', async (t) => {
  const order = async (sort: string) => slugs((await get(`/api/v1/wallets?sort=${sort}`)).body);
  t.deepEqual(await order('score'), [...byScore].reverse());
  t.deepEqual(await order('-released_at'), ['cold-card', 'pocket', 'vault-one', 'browser-x', 'old-desk']);
  t.deepEqual(await order('released_at'), ['browser-x', 'vault-one', 'pocket', 'cold-card', 'old-desk']);
  t.deepEqual(await order('-pros'), ['browser-x', 'vault-one', 'cold-card', 'pocket', 'old-desk']);
  // cons: 0 browser-x, 1 vault-one, 2 pocket and cold-card (score breaks the tie), 3 old-desk
  t.deepEqual(await order('cons'), ['browser-x', 'vault-one', 'cold-card', 'pocket', 'old-desk']);
  t.deepEqual(await order('-assets,score'), ['vault-one', 'pocket', 'cold-card', 'browser-x', 'old-desk']);
});

test('/wallets/timeline: newest release first by default, unknown dates last; sort honoured both ways', async (t) => {
  const timeline = await get('/api/v1/wallets/timeline');
  t.is(timeline.status, 200);
  t.deepEqual(slugs(timeline.body), ['cold-card', 'pocket', 'vault-one', 'browser-x', 'old-desk']);
  t.is(timeline.body.meta.top_score, TOP_SCORE);
  t.deepEqual(slugs((await get('/api/v1/wallets/timeline?sort=released_at')).body), ['browser-x', 'vault-one', 'pocket', 'cold-card', 'old-desk']);
  t.deepEqual(slugs((await get('/api/v1/wallets/timeline?sort=-released_at')).body), ['cold-card', 'pocket', 'vault-one', 'browser-x', 'old-desk']);
  t.deepEqual(slugs((await get('/api/v1/wallets/timeline?sort=-score')).body), byScore);
  t.deepEqual(slugs((await get('/api/v1/wallets/timeline?tags=hardware&per_page=1&page=2')).body), ['vault-one']);
});

test('/wallets/{slug}: detail with website, highlights and the tags grouped by category', async (t) => {
  const response = await get('/api/v1/wallets/vault-one');
  t.is(response.status, 200);
  t.like(response.body.data, {
    slug: 'vault-one', score: 90, assets: 3, pros: 3, cons: 1, website: 'https://vault.example.com', description: 'A hardware wallet.',
    highlights: { pros: ['Secure element', 'Bluetooth', 'Many coins'], cons: ['Closed firmware'] },
  });
  t.deepEqual(response.body.data.categories, [
    { group: 'type', name: 'Type', tags: [{ slug: 'hardware', name: 'Hardware', value: null }] },
    { group: 'custody', name: 'Custody', tags: [{ slug: 'non-custodial', name: 'Non-custodial', value: null }] },
    { group: 'features', name: 'Features', tags: [{ slug: 'staking', name: 'Staking', value: null }] },
  ]);
  t.is(response.body.data.status, 'Active', 'spelled as the reference spells it');
  t.deepEqual(response.body.meta, { top_score: TOP_SCORE });
  t.deepEqual((await get('/api/v1/wallets/VAULT-ONE')).body.data.slug, 'vault-one');
});

test('/wallets/{slug}: unknown and draft wallets are 404 not_found', async (t) => {
  for (const slug of ['nope', 'secret-draft']) {
    const response = await get(`/api/v1/wallets/${slug}`);
    t.is(response.status, 404, slug);
    t.is(response.body.error.code, 'not_found');
    t.is(response.body.error.message, 'Wallet not found.');
  }
});

test('/wallets/compare: 2-4 wallets in the order given, each with its categories', async (t) => {
  const response = await get('/api/v1/wallets/compare?slugs=pocket,vault-one,old-desk');
  t.is(response.status, 200);
  t.deepEqual(slugs(response.body), ['pocket', 'vault-one', 'old-desk']);
  t.deepEqual(response.body.meta, { top_score: TOP_SCORE, count: 3 });
  t.deepEqual(response.body.data[0].categories.map((c: { group: string }) => c.group), ['type', 'custody', 'features']);
  t.deepEqual(response.body.data[2].categories, [
    { group: 'type', name: 'Type', tags: [{ slug: 'desktop', name: 'Desktop', value: null }] },
    { group: 'custody', name: 'Custody', tags: [{ slug: 'custodial', name: 'Custodial', value: null }] },
  ]);
  t.is(response.body.data[2].status, 'Discontinued');
  t.deepEqual(response.body.data[1], (await get('/api/v1/wallets/vault-one')).body.data);
});

test('/wallets/compare: fewer than 2, more than 4, repeats → 422 naming slugs; an unknown slug → 404 naming it', async (t) => {
  for (const query of ['slugs=pocket', 'slugs=pocket,vault-one,old-desk,cold-card,browser-x', 'slugs=pocket,pocket', '']) {
    const response = await get(`/api/v1/wallets/compare?${query}`);
    t.is(response.status, 422, query);
    t.is(response.body.error.code, 'validation');
    t.deepEqual(Object.keys(response.body.error.details.errors), ['slugs'], query);
  }
  const unknown = await get('/api/v1/wallets/compare?slugs=pocket,ghost');
  t.is(unknown.status, 404);
  t.is(unknown.body.error.message, 'Wallet not found: ghost.');
  t.is((await get('/api/v1/wallets/compare?slugs=pocket,secret-draft')).status, 404);
});

test('/wallets/{slug}/assets: the coin list restricted to the wallet, with its filters and sort', async (t) => {
  const response = await get('/api/v1/wallets/vault-one/assets');
  t.is(response.status, 200);
  t.deepEqual(response.body.data.map((c: { slug: string }) => c.slug).sort(), [...PUBLIC_ASSETS['vault-one']!].sort());
  const coins = await get('/api/v1/coins?slugs=alpha,beta,gamma');
  t.deepEqual(response.body.data, coins.body.data, 'the same rows as the coin list');
  t.like(response.body.meta, { total: 3 });
  t.deepEqual((await get('/api/v1/wallets/vault-one/assets?status=preparing')).body.data.map((c: { slug: string }) => c.slug), ['epsilon']);
  t.deepEqual((await get('/api/v1/wallets/vault-one/assets?type=token&per_page=1')).body.data.map((c: { slug: string }) => c.slug), ['beta']);
  t.deepEqual((await get('/api/v1/wallets/old-desk/assets')).body.data, []);
  const missing = await get('/api/v1/wallets/secret-draft/assets');
  t.is(missing.status, 404);
  t.is(missing.body.error.message, 'Wallet not found.');
});

test('the coin detail counts the published wallets supporting the coin', async (t) => {
  const supporting = (slug: string) => Object.values(PUBLIC_ASSETS).filter((coins) => coins.includes(slug)).length;
  t.is((await get('/api/v1/coins/alpha')).body.data.counts.wallets, supporting('alpha'));
  t.is((await get('/api/v1/coins/delta')).body.data.counts.wallets, supporting('delta'));
});

test('/wallets validation: bad parameters are 422 with the field named', async (t) => {
  const cases: [string, string][] = [
    ['sort=name', 'sort'], ['min_score=-1', 'min_score'], ['max_score=101', 'max_score'], ['per_page=0', 'per_page'],
    ['tags=Not%20A%20Slug', 'tags'], ['ids=x', 'ids'], ['search=' + 'x'.repeat(101), 'search'],
  ];
  for (const [query, field] of cases) {
    const response = await get(`/api/v1/wallets?${query}`);
    t.is(response.status, 422, query);
    t.deepEqual(Object.keys(response.body.error.details.errors), [field], query);
  }
  t.is((await get('/api/v1/wallets/timeline?sort=-name')).status, 422);
  t.is((await get('/api/v1/wallets/vault-one/assets?sort=score')).status, 422);
});
