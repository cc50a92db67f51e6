// `npm test`: builds the migrated template database once, runs ava, and ends with the plain
// "N passed, N failed" line that CI reads.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { TEMPLATE_DIR, buildTemplate } from './helpers/template.ts';

await buildTemplate();
const ava = spawn(process.execPath, ['node_modules/ava/entrypoints/cli.mjs', ...process.argv.slice(2)], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, MDAPI_TEST_TEMPLATE: TEMPLATE_DIR, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' },
});
let output = '';
ava.stdout.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  output += chunk.toString();
});
const code = await new Promise<number>((resolve) => ava.on('close', (exit) => resolve(exit ?? 1)));
if (!process.env.TEST_DATABASE_URL) rmSync(TEMPLATE_DIR, { recursive: true, force: true });
const count = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? 0);
const lines = (pattern: RegExp) => output.split('\n').filter((line) => pattern.test(line)).length;
// ava prints the passed total only when nothing failed; its ✔ lines are always there.
const passed = Math.max(count(/(\d+) tests? passed/), lines(/^\s*✔/));
const failed = Math.max(count(/(\d+) tests? failed/), lines(/^\s*✘ \[fail\]/)) +
  count(/(\d+) uncaught exceptions?/) + count(/(\d+) unhandled rejections?/) + lines(/exited with a non-zero exit code|timed out|remained pending/i);
const skipped = count(/(\d+) tests? skipped/) + count(/(\d+) tests? todo/);
process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(code !== 0 && failed === 0 ? code : failed > 0 ? 1 : code);
