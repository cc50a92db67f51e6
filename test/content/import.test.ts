// mdapi import-content: validation names the file, item and field; a bad file imports nothing;
// importing the same files again writes nothing; the demo set imports cleanly and a service's
// first start with the demo market on loads it.
import test from 'ava';
import { ContentImportError, importContent } from '../../src/content/import.ts';
import { DEMO_CONTENT_DIR, loadDemoContentIfEmpty } from '../../src/content/demo.ts';
import { silentLogger } from '../../src/log.ts';
import { startService } from '../../src/service.ts';
import { captureLog } from '../helpers/log.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { ARTICLES, CATEGORIES, SOURCE, WALLETS, fixtureFiles, writeContentDir } from './fixtures.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
});
test.after.always(async () => {
  await db?.close();
});

const TABLES = [
  'wallet_tag_categories', 'wallet_tags', 'wallets', 'wallet_taggings', 'wallet_assets', 'articles', 'article_translations',
  'videos', 'insights', 'insight_translations', 'content_entities', 'content_imports',
] as const;
/** Every content row, as text, in a stable order: equal snapshots mean nothing changed. */
async function snapshot() {
  const result: Record<string, string[]> = {};
  for (const table of TABLES) {
    const rows = await db.sql.unsafe(`select t::text as row from market.${table} t order by 1`);
    result[table] = rows.map((r) => r.row as string);
  }
  return result;
}
const clear = () => db.sql.unsafe(`truncate ${TABLES.map((t) => `market.${t}`).join(', ')} cascade`);

async function importError(t: { fail: (message: string) => void }, dir: string): Promise<ContentImportError> {
  try {
    await importContent(db.sql, dir);
  } catch (error) {
    if (error instanceof ContentImportError) return error;
    throw error;
  }
  t.fail('the import was expected to fail');
  throw new Error('unreachable');
}

test.serial('importing the same files twice writes nothing the second time', async (t) => {
  await clear();
  const dir = writeContentDir();
  const first = await importContent(db.sql, dir);
  t.deepEqual(first.map((r) => [r.kind, r.items, r.inserted]), [['wallets', 6, 6], ['articles', 7, 7], ['videos', 4, 4], ['insights', 4, 4]]);
  const before = await snapshot();
  t.is(before.wallets!.length, 6);
  const second = await importContent(db.sql, dir);
  t.deepEqual(second.map((r) => [r.inserted, r.updated, r.rows_written]), [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]);
  t.deepEqual(await snapshot(), before);
  const [source] = await db.sql`select kind, demo, description from market.data_sources where name = ${SOURCE.name}`;
  t.deepEqual({ ...source }, { kind: 'import', demo: false, description: SOURCE.description });
});

test.serial('a changed file updates what changed and keeps counters; items it drops are kept', async (t) => {
  await clear();
  await importContent(db.sql, writeContentDir());
  await db.sql`update market.articles set views = 5, helpful_yes = 2 where slug = 'alpha-guide'`;
  const files = fixtureFiles();
  const wallets = structuredClone(WALLETS);
  wallets[0]!.score = 91;
  wallets[0]!.tags = ['hardware'];
  wallets[0]!.coins = ['alpha'];
  const articles = structuredClone(ARTICLES).filter((a) => a.slug !== 'beta-news');
  articles[0]!.translations = { en: articles[0]!.translations.en } as never;
  const dir = writeContentDir({ ...files, wallets: { version: 1, source: SOURCE, categories: CATEGORIES, wallets }, articles: { version: 1, source: SOURCE, articles } });
  const result = await importContent(db.sql, dir);
  t.like(result[0], { kind: 'wallets', inserted: 0, updated: 1 });
  t.like(result[1], { kind: 'articles', inserted: 0, updated: 0 });
  t.true(result[1]!.rows_written > 0, 'the dropped German translation is deleted');
  t.like(result[2], { rows_written: 0 });
  const [vault] = await db.sql`
    select w.score::text, array(select tag from market.wallet_taggings g where g.wallet_id = w.id order by tag) as tags,
      array(select coin_slug from market.wallet_assets a where a.wallet_id = w.id) as coins
    from market.wallets w where slug = 'vault-one'`;
  t.deepEqual({ ...vault }, { score: '91.0', tags: ['hardware'], coins: ['alpha'] });
  const [guide] = await db.sql`
    select views::int, helpful_yes, array(select locale from market.article_translations t where t.article_id = a.id) as locales
    from market.articles a where slug = 'alpha-guide'`;
  t.deepEqual({ ...guide }, { views: 5, helpful_yes: 2, locales: ['en'] });
  t.is((await db.sql`select 1 from market.articles where slug = 'beta-news'`).length, 1);
});

test.serial('articles and insights take the same translation update alike: removed locales deleted, changed ones updated, the rest untouched', async (t) => {
  await clear();
  // one article and one insight with the same texts; the field between title and body is subtitle or summary
  const texts = (locales: Record<string, string>) => Object.fromEntries(Object.entries(locales).map(([locale, word]) => [locale, { title: `${word} title`, middle: `${word} middle`, body: `<p>${word}</p>` }]));
  const files = (locales: Record<string, string>) => {
    const translations = texts(locales);
    const named = (field: string) => Object.fromEntries(Object.entries(translations).map(([locale, x]) => [locale, { title: x.title, [field]: x.middle, body: x.body }]));
    return {
      articles: { version: 1, source: SOURCE, articles: [{ slug: 'same-update', tags: ['news'], published_at: '2026-01-01T00:00:00Z', translations: named('subtitle') }] },
      insights: { version: 1, source: SOURCE, insights: [{ id: 31, type: 'narrative', first_reported_at: '2026-01-01T00:00:00Z', translations: named('summary') }] },
    };
  };
  // each table's rows in one shape, with the transaction that last wrote each (xmin)
  const stored = async () => {
    const rows = await db.sql<{ kind: string; locale: string; title: string; middle: string; body: string; xmin: string }[]>`
      select 'article' as kind, locale, title, subtitle as middle, body, xmin::text from market.article_translations
      union all
      select 'insight', locale, title, summary, body, xmin::text from market.insight_translations
      order by kind, locale`;
    const of = (kind: string) => Object.fromEntries(rows.filter((r) => r.kind === kind).map(({ locale, title, middle, body, xmin }) => [locale, { title, middle, body, xmin }]));
    return { article: of('article'), insight: of('insight') };
  };
  await importContent(db.sql, writeContentDir(files({ en: 'one', de: 'eins', es: 'uno' })));
  const before = await stored();
  const result = await importContent(db.sql, writeContentDir(files({ en: 'one', de: 'zwei', fr: 'un' })));
  // es deleted, de updated, fr inserted; the items themselves and en unchanged
  t.deepEqual(result.map((r) => [r.kind, r.inserted, r.updated, r.rows_written]), [['articles', 0, 0, 3], ['insights', 0, 0, 3]]);
  const after = await stored();
  for (const kind of ['article', 'insight'] as const) {
    t.deepEqual(Object.keys(after[kind]), ['de', 'en', 'fr'], kind);
    t.is(after[kind].en!.xmin, before[kind].en!.xmin, `${kind}: the untouched English row is not rewritten`);
    t.not(after[kind].de!.xmin, before[kind].de!.xmin, kind);
    t.like(after[kind].de, { title: 'zwei title', middle: 'zwei middle', body: '<p>zwei</p>' }, kind);
  }
  const withoutXmin = (rows: Record<string, { xmin: string }>) => Object.fromEntries(Object.entries(rows).map(([locale, { xmin: _, ...text }]) => [locale, text]));
  t.deepEqual(withoutXmin(after.insight), withoutXmin(after.article));
});

test.serial('a translation\'s reading time is stored with its body and follows it when the body changes, by import or by hand', async (t) => {
  await clear();
  await importContent(db.sql, writeContentDir());
  const minutes = async () => Object.fromEntries((await db.sql<{ locale: string; minutes: number | null }[]>`
    select t.locale, t.reading_time_minutes as minutes from market.article_translations t
    join market.articles a on a.id = t.article_id where a.slug = 'wallet-roundup'`).map((row) => [row.locale, row.minutes]));
  // 252 words in English (the heading's two and 250) at 200 a minute; no body in pt or pt-BR
  t.deepEqual(await minutes(), { en: 2, pt: null, 'pt-BR': null });
  await db.sql`
    update market.article_translations set body = ${`<p>${'palavra '.repeat(601)}</p>`}
    where locale = 'pt' and article_id = (select id from market.articles where slug = 'wallet-roundup')`;
  t.deepEqual(await minutes(), { en: 2, pt: 4, 'pt-BR': null });
  // the pt-BR reader now gets the body of its language, and its reading time
  const [detail] = await db.sql<{ article: { body: string; reading_time_minutes: number; fallback_fields: string[] } }[]>`
    select api.article_detail('wallet-roundup', 'pt-BR') as article`;
  t.like(detail!.article, { reading_time_minutes: 4, fallback_fields: ['body', 'title'] });
  t.regex(detail!.article.body, /palavra/);
});

test.serial('a bad file imports nothing, not even the good files beside it, and names file, item and field', async (t) => {
  await clear();
  const files = fixtureFiles();
  const articles = structuredClone(ARTICLES) as Record<string, unknown>[];
  articles[2]!.published_at = 'yesterday';
  (articles[3]!.translations as Record<string, unknown>).en = { subtitle: 'no title' };
  const error = await importError(t, writeContentDir({ ...files, articles: { version: 1, articles } }));
  t.regex(error.message, /nothing imported/);
  t.true(error.problems.includes('articles.json: articles[2] (slug "exchange-review"): published_at: Must be an ISO 8601 date-time with an offset, e.g. 2026-01-31T09:00:00Z.'), error.problems.join('\n'));
  t.true(error.problems.some((p) => p.startsWith('articles.json: articles[3] (slug "wallet-roundup"): translations.en.title:')), error.problems.join('\n'));
  t.true(error.problems.some((p) => p.startsWith('articles.json: articles[3] (slug "wallet-roundup"): translations.en.body:')), error.problems.join('\n'));
  t.deepEqual(Object.values(await snapshot()).flat(), []);
});

test.serial('validation names the problem: unknown tag, repeated slug, version, type, locale, JSON', async (t) => {
  await clear();
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ wallets: { version: 1, categories: CATEGORIES, wallets: [{ ...WALLETS[1], tags: ['mobile', 'quantum'] }] } },
      /^wallets\.json: wallets\[0\] \(slug "pocket"\): tags\.1: Unknown tag "quantum": not in categories\.$/],
    [{ wallets: { version: 1, categories: CATEGORIES, wallets: [WALLETS[1], WALLETS[1]] } }, /^wallets\.json: wallets\[1\] \(slug "pocket"\): Repeats the wallet slug pocket\.$/],
    [{ wallets: { version: 1, categories: CATEGORIES, wallets: [{ ...WALLETS[1], score: 101 }] } }, /^wallets\.json: wallets\[0\] \(slug "pocket"\): score: /],
    [{ wallets: { version: 1, categories: CATEGORIES, wallets: [{ ...WALLETS[1], colour: 'blue' }] } }, /^wallets\.json: wallets\[0\] \(slug "pocket"\): .*colour/],
    [{ videos: { version: 2, videos: [] } }, /^videos\.json: version: /],
    [{ videos: { version: 1, videos: [{ id: 1, type: 'vlog', title: 'x', url: 'https://x.example', published_at: '2026-01-01T00:00:00Z' }] } }, /^videos\.json: videos\[0\] \(id 1\): type: /],
    [{ insights: { version: 1, insights: [{ id: 1, type: 'narrative', first_reported_at: '2026-01-01T00:00:00Z', translations: { de: { title: 'Nur Deutsch' } } }] } },
      /^insights\.json: insights\[0\] \(id 1\): translations\.en: An English \(en\) translation is required/],
    [{ insights: { version: 1, insights: [{ id: 1, type: 'narrative', first_reported_at: '2026-01-01T00:00:00Z', translations: { en: { title: 'x' }, german: { title: 'y' } } }] } },
      /^insights\.json: insights\[0\] \(id 1\): translations\.german: /],
    [{ articles: '{"version": 1, "articles": [' }, /^articles\.json: not readable JSON/],
  ];
  for (const [files, pattern] of cases) {
    const error = await importError(t, writeContentDir(files));
    t.true(error.problems.some((p) => pattern.test(p)), `${pattern}\n${error.problems.join('\n')}`);
  }
  const empty = await importError(t, writeContentDir({}));
  t.regex(empty.message, /no content files in .*: expected any of wallets\.json, articles\.json, videos\.json, insights\.json/);
  t.deepEqual(Object.values(await snapshot()).flat(), []);
});

test.serial('the SQL importer checks too: a tag outside the taxonomy is refused, naming the wallet', async (t) => {
  await clear();
  const file = { version: 1, categories: [], wallets: [{ ...WALLETS[1], tags: ['mobile'] }] };
  const error = await t.throwsAsync(db.sql`select market.import_wallets(${JSON.stringify(file)}::text::jsonb)`);
  t.is((error as { code?: string }).code, 'MD422');
  t.is(error!.message, 'wallets: wallet "pocket": tags: unknown tag "mobile"');
});

test.serial('the demo set imports cleanly: 12+ wallets, 20+ articles in 2+ locales with fields left to English', async (t) => {
  await clear();
  const loaded = await loadDemoContentIfEmpty(db.sql);
  t.truthy(loaded);
  t.deepEqual(loaded!.map((r) => r.kind), ['wallets', 'articles', 'videos', 'insights']);
  const [counts] = await db.sql`
    select (select count(*)::int from api.wallets) as wallets,
      (select count(*)::int from market.articles where market.is_published(status, published_at)) as articles,
      (select count(distinct locale)::int from market.article_translations) as locales,
      (select count(*)::int from market.article_translations where locale <> 'en' and (subtitle is null or body is null)) as partial,
      (select count(*)::int from market.videos) as videos, (select count(*)::int from market.insights) as insights,
      (select demo from market.data_sources where name = 'demo-content') as demo`;
  t.true(counts!.wallets >= 12, `${counts!.wallets} wallets`);
  t.true(counts!.articles >= 20, `${counts!.articles} articles`);
  t.true(counts!.locales >= 2);
  t.true(counts!.partial > 0);
  t.true(counts!.videos > 0 && counts!.insights > 0);
  t.true(counts!.demo);
  t.is(await loadDemoContentIfEmpty(db.sql), null, 'not again once content is there');
  t.deepEqual((await importContent(db.sql, DEMO_CONTENT_DIR)).map((r) => r.rows_written), [0, 0, 0, 0]);
});

test.serial('a first start with the demo market on loads the demo content; MARKET_SOURCE=none does not', async (t) => {
  await clear();
  const off = await startService(db.config({ PORT: '0', WORKER: 'off', MARKET_SOURCE: 'none' }), silentLogger);
  await off.close();
  t.is((await db.sql`select from market.wallets`).length, 0);
  const log = captureLog();
  const on = await startService(db.config({ PORT: '0', WORKER: 'off', MARKET_SOURCE: 'simulated' }), log.logger);
  try {
    t.true(log.lines().some((line) => String(line.msg).startsWith('demo content loaded: wallets: ')), log.text());
    t.true((await db.sql`select from market.wallets`).length >= 12);
  } finally {
    await on.close();
  }
});
