// The import rules of .dependency-cruiser.cjs: the tree passes them, and they do catch what they
// forbid — a circle (type imports included) and src/ reaching into jobs/ — on a small tree made here.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');

async function cruise(cwd: string, paths: string[]) {
  try {
    const { stdout } = await run(DEPCRUISE, ['--config', CONFIG, ...paths], { cwd });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: `${failed.stdout}${failed.stderr}` };
  }
}

test('the tree has no import circle and src/ never imports jobs/', async (t) => {
  const result = await cruise(ROOT, ['src', 'jobs', 'bin']);
  t.is(result.code, 0, result.output);
  t.regex(result.output, /no dependency violations found/);
});

test('a circle, even of types only, and an import of jobs/ from src/ are refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mdapi-imports-'));
  try {
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'nodenext', allowImportingTsExtensions: true, noEmit: true } }),
      'src/a.ts': "import type { B } from './b.ts';\nexport type A = { b?: B };\n",
      'src/b.ts': "import type { A } from './a.ts';\nexport type B = { a?: A };\n",
      'src/c.ts': "import { job } from '../jobs/d.ts';\nexport const c = job;\n",
      'jobs/d.ts': 'export const job = 1;\n',
    };
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    const result = await cruise(dir, ['src', 'jobs']);
    t.not(result.code, 0, result.output);
    t.regex(result.output, /no-circular: src\/a\.ts/);
    t.regex(result.output, /src-not-to-jobs: src\/c\.ts/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
