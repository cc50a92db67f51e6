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

test('no test passes without asserting on a database it does not apply to', (t) => {
  // this file's own examples excepted
  const files = readdirSync(ROOT, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.test.ts') && file !== 'targets.test.ts');
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
