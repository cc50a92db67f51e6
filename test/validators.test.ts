// The shared formats (src/validators.ts) the routes, the MCP tools, the CLI and the importers use.
import test from 'ava';
import { booleanFlag, date, ImportRefusedError, isDate, parseSlug, SLUG, slug, slugList, storedSlug } from '../src/validators.ts';
import { CatalogueImportError } from '../src/sources/catalogue/index.ts';
import { CandleImportError } from '../src/sources/files/candle-columns.ts';
import { ContentImportError } from '../src/content/import.ts';

test('a slug is letter-or-digit runs joined by single dashes, in either case, and comes out lowercase', (t) => {
  for (const [input, stored] of [['bitcoin', 'bitcoin'], ['BitCoin', 'bitcoin'], ['USD-Coin', 'usd-coin'], ['0x', '0x'], [' okx ', 'okx']] as const) {
    t.is(parseSlug(input), stored, input);
    t.is(slug('coin').parse(input), stored, input);
  }
  for (const bad of ['', '-btc', 'btc-', 'bit--coin', 'bit_coin', 'bit coin', 'bitcöin', 'a'.repeat(121)]) t.is(parseSlug(bad), null, bad);
  t.is(parseSlug('a'.repeat(200), 200), 'a'.repeat(200));
  t.regex(slug('exchange').safeParse('Bin_ance').error!.issues[0]!.message, /^Must be an exchange slug such as binance/);
});

test('a slug list lowercases each item and names the kind when one is malformed', (t) => {
  t.deepEqual(slugList('coin', 100).parse('BitCoin, ethereum,,'), ['bitcoin', 'ethereum']);
  t.regex(slugList('coin', 100).safeParse('bitcoin,bit coin').error!.issues[0]!.message, /^Must be comma-separated coin slugs/);
});

test('an imported slug is stored as written: lowercase only', (t) => {
  t.true(storedSlug().safeParse('bitcoin').success);
  t.false(storedSlug().safeParse('Bitcoin').success);
  t.true(SLUG.test('usd-coin'));
});

test('a date is a calendar day YYYY-MM-DD that exists', (t) => {
  for (const good of ['2024-02-29', '2009-01-03']) t.true(isDate(good) && date().safeParse(good).success, good);
  for (const bad of ['2023-02-29', '2024-13-01', '24-01-01', '2024-1-1', '2024-01-01T00:00:00Z', '']) t.false(isDate(bad), bad);
});

test('a boolean flag is true/false or 1/0, nothing else', (t) => {
  t.deepEqual(['true', '1', 'false', '0'].map((value) => booleanFlag.parse(value)), [true, true, false, false]);
  t.false(booleanFlag.safeParse('yes').success);
});

test("an importer's refusal is an ImportRefusedError named after the importer's own class, with its problems", (t) => {
  for (const Refusal of [CatalogueImportError, CandleImportError, ContentImportError]) {
    const error = new Refusal('2 problem(s), nothing imported', ['coins[0].slug: bad', 'coins[1].name: missing']);
    t.true(error instanceof ImportRefusedError);
    t.is(error.name, Refusal.name);
    t.deepEqual(error.problems, ['coins[0].slug: bad', 'coins[1].name: missing']);
    t.deepEqual(new Refusal('no rows').problems, []);
  }
});
