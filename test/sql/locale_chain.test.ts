// One locale fallback order (market.locale_chain) for the per-field content texts (market.localize)
// and the coin descriptions (market.coin_description).
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
  await db.sql`insert into market.data_sources (name, kind, description) values ('test', 'import', 'test coins')`;
  await db.sql`insert into market.coins (id, slug, symbol, name, type, status, source) values (901, 'locale-coin', 'LOC', 'Locale coin', 'coin', 'active', 'test')`;
  await db.sql`insert into market.coin_descriptions (coin_id, locale, html) values (901, 'pt', '<p>pt</p>'), (901, 'en', '<p>en</p>'), (901, 'de-AT', '<p>de-AT</p>')`;
});
test.after.always(async () => db?.close());

test('the chain: the locale, its language, English, each once', async (t) => {
  const cases: [string | null, string[]][] = [
    ['pt-BR', ['pt-BR', 'pt', 'en']],
    ['de', ['de', 'en']],
    ['en', ['en']],
    ['en-GB', ['en-GB', 'en']],
    [null, ['en']],
  ];
  for (const [locale, chain] of cases) {
    const [row] = await db.sql<{ chain: string[] }[]>`select market.locale_chain(${locale}::text) as chain`;
    t.deepEqual(row!.chain, chain, String(locale));
  }
});

test('a coin description and a content field fall back along the same chain', async (t) => {
  const translations = { pt: { title: 'título', body: null }, en: { title: 'title', body: 'body' }, 'de-AT': { title: 'Titel', body: 'Text' } };
  const cases: [string, string][] = [
    ['pt-BR', 'pt'],
    ['pt', 'pt'],
    ['de-AT', 'de-AT'],
    ['de', 'en'],
    ['fr', 'en'],
  ];
  for (const [locale, winner] of cases) {
    const [row] = await db.sql<{ description: string; content: { locale: string } }[]>`
      select (select d.locale from market.coin_description(901, ${locale}) d) as description,
        market.localize(${db.sql.json(translations)}::jsonb, ${locale}) as content`;
    t.is(row!.description, winner, `description in ${locale}`);
    t.is(row!.content.locale, winner, `content in ${locale}`);
  }
  // per field: pt has no body, so pt-BR takes the title from pt and the body from English
  const [row] = await db.sql<{ content: Record<string, unknown> }[]>`select market.localize(${db.sql.json(translations)}::jsonb, 'pt-BR') as content`;
  t.deepEqual(row!.content, { title: 'título', body: 'body', locale: 'pt', fallback_fields: ['body'] });
});
