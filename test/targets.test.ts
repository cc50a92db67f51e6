// A test that does not apply to the database it runs on is skipped by name (embeddedOnly, serverOnly,
// replicaOnly in helpers/targets.ts), so that a run's count of passed tests is a count of tests that
// asserted something: none returns early with t.pass(), none decides at run time on the database kind
// to return before asserting. A hook may (its tests are registered through the helpers).
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname);
const DATABASE_KIND = /\b(embeddedPort|TEST_DATABASE_URL|onServer|replicaUrl)\b/;

/** The places in a test file's text that pass or return without asserting, as `line: text`. */
function passingWithoutAsserting(text: string): string[] {
  const lines = text.split('\n');
  const found: string[] = [];
  for (const [index, line] of lines.entries()) {
    const earlyPass = /return\s+t\.pass\(/.test(line) || /\bif\s*\(.*\)\s*(return\s+)?t\.pass\(/.test(line);
    const earlyReturn = /\bif\s*\(.*\)\s*(\{\s*)?return\b/.test(line) && DATABASE_KIND.test(line);
    const inHook = /\.(before|after)(Each)?(\.always)?\(/.test(lines[index - 1] ?? '');
    if (earlyPass || (earlyReturn && !inHook)) found.push(`${index + 1}: ${line.trim()}`);
  }
  return found;
}

// A title that says where a test applies ("on the embedded database", "server only") on a test
// registered for both kinds: the title or the registration is wrong.
const ONE_DATABASE = /\b(on|in) the embedded database\b|\bon (a|the) (TimescaleDB |database )server\b|\b(embedded[- ]database|server)[- ]only\b/i;

/** Tests registered with ava's own `test` (so for both kinds of database) whose title names one kind, as `line: title`. */
function titlesNamingOneDatabase(text: string): string[] {
  return text.split('\n').flatMap((line, index) => {
    const title = /^\s*test(?:\.serial)?(?:\.failing)?\(\s*(['"`])(.*?)\1/.exec(line)?.[2];
    return title && ONE_DATABASE.test(title) ? [`${index + 1}: ${title}`] : [];
  });
}

const testFiles = () => readdirSync(ROOT, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.test.ts') && file !== 'targets.test.ts');

test('no test passes without asserting on a database it does not apply to', (t) => {
  // this file's own examples excepted
  const files = testFiles();
  t.true(files.length > 50, `${files.length} test files found`);
  const found = files.flatMap((file) => passingWithoutAsserting(readFileSync(join(ROOT, file), 'utf8')).map((place) => `test/${file}:${place}`));
  t.deepEqual(found, [], 'register these with embeddedOnly(), serverOnly() or replicaOnly() from test/helpers/targets.ts');
});

test('the scan finds the early returns it forbids, and lets a hook return', (t) => {
  t.deepEqual(passingWithoutAsserting([
    "test('a', async (t) => {",
    "  if (db.embeddedPort === null) return t.pass('embedded only');",
    '  if (process.env.TEST_DATABASE_URL) return;',
    "  if (!onServer) { return; }",
    '  if (x) t.pass();',
    '  t.is(1, 1);',
    '});',
    'test.before(async () => {',
    '  if (!onServer || !replicaUrl) return;',
    '});',
  ].join('\n')), [
    "2: if (db.embeddedPort === null) return t.pass('embedded only');",
    '3: if (process.env.TEST_DATABASE_URL) return;',
    '4: if (!onServer) { return; }',
    '5: if (x) t.pass();',
  ]);
});

test('no test registered for both kinds of database says in its title that it applies to one', (t) => {
  const found = testFiles().flatMap((file) => titlesNamingOneDatabase(readFileSync(join(ROOT, file), 'utf8')).map((place) => `test/${file}:${place}`));
  t.deepEqual(found, [], 'register these with embeddedOnly() or serverOnly(), or say in the title what they check on both');
});

test('the title scan finds a plain registration naming one database, and lets the helpers’ registrations be', (t) => {
  t.deepEqual(titlesNamingOneDatabase([
    "test.serial('refresh policies run on the embedded database', async (t) => {",
    "test('a vacuum on a database server', async (t) => {",
    "test('works everywhere', async (t) => {",
    "embeddedOnly(test, 'its process').serial('strict on the embedded database', async (t) => {",
    "  .serial('strict on the embedded database: a turn', async (t) => {",
    "test(`server-only behaviour`, (t) => {",
  ].join('\n')), [
    '1: refresh policies run on the embedded database',
    '2: a vacuum on a database server',
    '6: server-only behaviour',
  ]);
});
