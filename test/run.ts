// `npm test`: builds the migrated template database once, runs ava with its TAP reporter, and ends
// with the plain "N passed, N failed" line that CI reads, counted from the TAP stream.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { TEMPLATE_DIR, buildTemplate } from './helpers/template.ts';

await buildTemplate();
// Node's compile cache, kept between runs: every test file, database and CLI process loads the same
// modules, and compiles them from the cache instead of from source.
const NODE_COMPILE_CACHE = process.env.NODE_COMPILE_CACHE ?? new URL('../.cache/node-compile-cache', import.meta.url).pathname;
const ava = spawn(process.execPath, ['node_modules/ava/entrypoints/cli.mjs', '--tap', ...process.argv.slice(2)], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, MDAPI_TEST_TEMPLATE: TEMPLATE_DIR, NODE_COMPILE_CACHE, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' },
});
let output = '';
ava.stdout.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  output += chunk.toString();
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
process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(code !== 0 && failed === 0 ? code : failed > 0 ? 1 : code);
