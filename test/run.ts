// `npm test`: builds the migrated template database once, runs ava with its TAP reporter, and ends
// with the plain "N passed, N failed" line that CI reads, counted from the TAP stream.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { TEMPLATE_DIR, buildTemplate } from './helpers/template.ts';

await buildTemplate();
// Node's compile cache, kept between runs: every test file, database and CLI process loads the same
// modules, and compiles them from the cache instead of from source.
const CACHE_DIR = new URL('../.cache', import.meta.url).pathname;
const NODE_COMPILE_CACHE = process.env.NODE_COMPILE_CACHE ?? `${CACHE_DIR}/node-compile-cache`;
const ava = spawn(process.execPath, ['node_modules/ava/entrypoints/cli.mjs', '--tap', ...process.argv.slice(2)], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, MDAPI_TEST_TEMPLATE: TEMPLATE_DIR, NODE_COMPILE_CACHE, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' },
});
// ava names a file's tests `dir › file › title` (the path under test/ without `.test.ts`); longest first
const TITLE_PREFIXES = readdirSync(new URL('.', import.meta.url), { recursive: true, encoding: 'utf8' })
  .filter((path) => path.endsWith('.test.ts'))
  .map((path) => path.slice(0, -'.test.ts'.length).split('/').join(' › '))
  .sort((a, b) => b.length - a.length);
let output = '';
const started = Date.now();
/** per test file (ava's title prefix, `dir › file`): when its first and its last result came, in ms from the start */
const fileTimes = new Map<string, { first: number; last: number }>();
let pending = '';
ava.stdout.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  output += chunk.toString();
  const lines = (pending + chunk.toString()).split('\n');
  pending = lines.pop()!;
  for (const line of lines) {
    const title = /^(?:not )?ok \d+ - (.+)$/.exec(line)?.[1];
    const file = title && TITLE_PREFIXES.find((prefix) => title.startsWith(`${prefix} › `));
    if (!file) continue;
    const at = Date.now() - started;
    const seen = fileTimes.get(file);
    fileTimes.set(file, { first: seen?.first ?? at, last: at });
  }
});
const code = await new Promise<number>((resolve) => ava.on('close', (exit) => resolve(exit ?? 1)));
if (!process.env.TEST_DATABASE_URL) {
  // the template, and the demo one with its lock (test/helpers/demo.ts)
  for (const dir of [TEMPLATE_DIR, `${TEMPLATE_DIR.replace(/\/$/, '')}-demo`, `${TEMPLATE_DIR.replace(/\/$/, '')}-demo.lock`]) rmSync(dir, { recursive: true, force: true });
}
const lines = output.split('\n');
/** `# pass N` and the like, ava's TAP summary */
const summary = (name: string) => Number(lines.map((line) => new RegExp(`^# ${name} (\\d+)$`).exec(line)?.[1]).find(Boolean) ?? 0);
// a test point per test, and one `not ok` per uncaught exception, unhandled rejection, timeout or crashed file
const points = (ok: boolean) => lines.filter((line) => (ok ? /^ok \d+/ : /^not ok \d+/).test(line) && !/# (SKIP|TODO)\b/i.test(line)).length;
const passed = Math.max(summary('pass'), points(true));
const failed = Math.max(summary('fail'), points(false));
const skipped = summary('skip') + summary('todo');
if (fileTimes.size > 1) {
  // where the time goes: the files whose last result came latest, and how long their results took
  const latest = [...fileTimes].sort(([, a], [, b]) => b.last - a.last).slice(0, 8);
  // every file's, for sorting LONGEST_FIRST (ava.config.mjs)
  mkdirSync(CACHE_DIR, { recursive: true });
  writeFileSync(`${CACHE_DIR}/test-times.tsv`, [...fileTimes].map(([file, { first, last }]) => `${file}\t${first}\t${last}`).join('\n') + '\n');
  const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;
  process.stdout.write(`\n# files ending last (results from → to, seconds into the run):\n${latest.map(([file, { first, last }]) => `#   ${file}: ${seconds(first)} → ${seconds(last)}`).join('\n')}\n`);
}
process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(code !== 0 && failed === 0 ? code : failed > 0 ? 1 : code);
