// The import rules of .dependency-cruiser.cjs: the tree passes them (as `npm run lint:imports` cruises
// it), and every rule does catch what it forbids, at any depth, on a small tree made here.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');
const RULES = (createRequire(import.meta.url)(CONFIG) as { forbidden: { name: string }[] }).forbidden.map((rule) => rule.name);

async function cruise(cwd: string, paths: string[]) {
  try {
    const { stdout } = await run(DEPCRUISE, ['--config', CONFIG, ...paths], { cwd });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: `${failed.stdout}${failed.stderr}` };
  }
}

test('the tree breaks no import rule, over every folder `npm run lint:imports` names', async (t) => {
  const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['lint:imports']!;
  const folders = script.split(/\s+/).slice(3);
  t.deepEqual([...folders].sort(), ['bench', 'bin', 'dev', 'jobs', 'src', 'test'], script);
  const result = await cruise(ROOT, folders);
  t.is(result.code, 0, result.output);
  t.regex(result.output, /no dependency violations found/);
});

// Each tree breaks one rule, all but the circle only through a module in between: `line` is the
// head of the report the rule must give (the importing module → the module it must not reach), or
// one per case when a rule covers several.
// The trees share one folder, so a module may break a second rule as well: that one is reported too.
const BROKEN: Record<string, { files: Record<string, string>; line: string | string[] }> = {
  'no-circular': {
    files: {
      'src/circle/a.ts': "import type { B } from './b.ts';\nexport type A = { b?: B };\n",
      'src/circle/b.ts': "import type { A } from './a.ts';\nexport type B = { a?: A };\n",
    },
    line: 'no-circular: src/circle/a.ts →',
  },
  'src-not-to-jobs': {
    files: {
      'src/schedule.ts': "import { step } from './steps/step.ts';\nexport const schedule = step;\n",
      'src/steps/step.ts': "import { task } from '../../jobs/task.ts';\nexport const step = task;\n",
      'jobs/task.ts': 'export const task = 1;\n',
    },
    line: 'src-not-to-jobs: src/schedule.ts → jobs/task.ts',
  },
  'src-not-to-bin': {
    files: {
      'jobs/launch.ts': "import { helper } from './helper.ts';\nexport const launch = helper;\n",
      'jobs/helper.ts': "import { entry } from '../bin/entry.ts';\nexport const helper = entry;\n",
      'bin/entry.ts': 'export const entry = 1;\n',
    },
    line: 'src-not-to-bin: jobs/launch.ts → bin/entry.ts',
  },
  'src-not-to-service': {
    files: {
      'src/worker.ts': "import { served } from './served.ts';\nexport const worker = served;\n",
      'src/served.ts': "import { service } from './service.ts';\nexport const served = service;\n",
      'src/service.ts': 'export const service = 1;\n',
    },
    line: 'src-not-to-service: src/worker.ts → src/service.ts',
  },
  'runtime-not-to-tests': {
    files: {
      'bin/main.ts': "import { start } from '../src/start.ts';\nexport const main = start;\n",
      'src/start.ts': "import { mailbox } from '../dev/mailbox.ts';\nexport const start = mailbox;\n",
      'dev/mailbox.ts': 'export const mailbox = 1;\n',
    },
    line: 'runtime-not-to-tests: bin/main.ts → dev/mailbox.ts',
  },
  'http-core-not-to-groups': {
    files: {
      'src/http/app.ts': "import { tools } from '../mcp/server.ts';\nexport const app = tools;\n",
      'src/mcp/server.ts': "import { coins } from '../api/coins.ts';\nexport const tools = coins;\n",
      'src/api/coins.ts': 'export const coins = 1;\n',
    },
    line: 'http-core-not-to-groups: src/http/app.ts → src/api/coins.ts',
  },
  'http-core-not-to-mail': {
    files: {
      'src/http/health.ts': "import { checks } from './checks.ts';\nexport const health = checks;\n",
      'src/http/checks.ts': "import { smtp } from '../mail/smtp.ts';\nexport const checks = smtp;\n",
      'src/mail/smtp.ts': 'export const smtp = 1;\n',
    },
    line: 'http-core-not-to-mail: src/http/health.ts → src/mail/smtp.ts',
  },
  'http-core-not-to-pages': {
    files: {
      'src/http/observe.ts': "import { links } from './links.ts';\nexport const observe = links;\n",
      'src/http/links.ts': "import { shell } from '../pages/shell.ts';\nexport const links = shell;\n",
      'src/pages/shell.ts': 'export const shell = 1;\n',
    },
    line: 'http-core-not-to-pages: src/http/observe.ts → src/pages/shell.ts',
  },
  'db-is-the-floor': {
    files: {
      'src/db/open.ts': "import { notify } from './notify.ts';\nexport const open = notify;\n",
      'src/db/notify.ts': "import { hub } from '../sources/hub.ts';\nexport const notify = hub;\n",
      'src/sources/hub.ts': 'export const hub = 1;\n',
    },
    line: 'db-is-the-floor: src/db/open.ts → src/sources/hub.ts',
  },
  'pages-not-to-groups': {
    files: {
      'src/pages/status.ts': "import { figures } from './figures.ts';\nexport const status = figures;\n",
      'src/pages/figures.ts': "import { coins } from '../api/coins.ts';\nexport const figures = coins;\n",
      'src/api/coins.ts': 'export const coins = 1;\n',
    },
    line: 'pages-not-to-groups: src/pages/status.ts → src/api/coins.ts',
  },
  // Any module but src/service.ts: the HTTP core, and a job through a shared module to a wing that is not there yet.
  'wings-only-from-service': {
    files: {
      'src/http/views.ts': "import { layout } from './layout.ts';\nexport const views = layout;\n",
      'src/http/layout.ts': "import { consolePages } from '../console/pages.ts';\nexport const layout = consolePages;\n",
      'src/console/pages.ts': 'export const consolePages = 1;\n',
      'jobs/refresh.ts': "import { feed } from '../src/prices/feed.ts';\nexport const refresh = feed;\n",
      'src/prices/feed.ts': "import { prices } from '../streams/prices.ts';\nexport const feed = prices;\n",
      'src/streams/prices.ts': 'export const prices = 1;\n',
    },
    line: ['wings-only-from-service: src/http/views.ts → src/console/pages.ts', 'wings-only-from-service: jobs/refresh.ts → src/streams/prices.ts'],
  },
  'console-not-to-groups': {
    files: {
      'src/console/alarms.ts': "import { form } from './forms.ts';\nexport const alarms = form;\n",
      'src/console/forms.ts': "import { alarmRoutes } from '../api/alarms.ts';\nexport const form = alarmRoutes;\n",
      'src/api/alarms.ts': 'export const alarmRoutes = 1;\n',
    },
    line: 'console-not-to-groups: src/console/alarms.ts → src/api/alarms.ts',
  },
  'wing-not-to-wing': {
    files: {
      'src/widgets/page.ts': "import { frame } from './frame.ts';\nexport const page = frame;\n",
      'src/widgets/frame.ts': "import { layout } from '../console/layout.ts';\nexport const frame = layout;\n",
      'src/console/layout.ts': 'export const layout = 1;\n',
      'src/streams/hub.ts': "import { ticker } from './ticker.ts';\nexport const hub = ticker;\n",
      'src/streams/ticker.ts': "import { quote } from '../mcp/quote.ts';\nexport const ticker = quote;\n",
      'src/mcp/quote.ts': 'export const quote = 1;\n',
    },
    line: ['wing-not-to-wing: src/widgets/page.ts → src/console/layout.ts', 'wing-not-to-wing: src/streams/hub.ts → src/mcp/quote.ts'],
  },
  'groups-not-to-mcp': {
    files: {
      'src/api/prices.ts': "import { convert } from '../calculators/convert.ts';\nexport const prices = convert;\n",
      'src/calculators/convert.ts': "import { tools } from '../mcp/tools.ts';\nexport const convert = tools;\n",
      'src/mcp/tools.ts': 'export const tools = 1;\n',
    },
    line: 'groups-not-to-mcp: src/api/prices.ts → src/mcp/tools.ts',
  },
  'sources-not-to-http': {
    files: {
      'src/sources/feed.ts': "import { shared } from './shared.ts';\nexport const feed = shared;\n",
      'src/sources/shared.ts': "import { envelope } from '../http/envelope.ts';\nexport const shared = envelope;\n",
      'src/http/envelope.ts': 'export const envelope = 1;\n',
    },
    line: 'sources-not-to-http: src/sources/feed.ts → src/http/envelope.ts',
  },
  'bench-not-to-test': {
    files: {
      'bench/run.ts': "import { receiver } from '../dev/receiver.ts';\nexport const bench = receiver;\n",
      'dev/receiver.ts': "import { wait } from '../test/helpers/wait.ts';\nexport const receiver = wait;\n",
      'test/helpers/wait.ts': 'export const wait = 1;\n',
    },
    line: 'bench-not-to-test: bench/run.ts → test/helpers/wait.ts',
  },
  'dev-not-to-test': {
    files: {
      'dev/replay.ts': "import { scenario } from './scenario.ts';\nexport const replay = scenario;\n",
      'dev/scenario.ts': "import { recorded } from '../test/fixtures/recorded.ts';\nexport const scenario = recorded;\n",
      'test/fixtures/recorded.ts': 'export const recorded = 1;\n',
    },
    line: 'dev-not-to-test: dev/replay.ts → test/fixtures/recorded.ts',
  },
  'test-not-to-bench': {
    files: {
      'test/a.test.ts': "import { measure } from './helpers/measure.ts';\nexport const a = measure;\n",
      'test/helpers/measure.ts': "import { harness } from '../../bench/harness.ts';\nexport const measure = harness;\n",
      'bench/harness.ts': 'export const harness = 1;\n',
    },
    line: 'test-not-to-bench: test/a.test.ts → bench/harness.ts',
  },
};

test('every rule has a tree that breaks it', (t) => {
  t.deepEqual(Object.keys(BROKEN).sort(), [...RULES].sort());
});

test('every rule is reported on the tree that breaks it, also through a module in between', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mdapi-imports-'));
  try {
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'nodenext', allowImportingTsExtensions: true, noEmit: true } }),
    };
    for (const broken of Object.values(BROKEN)) Object.assign(files, broken.files);
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    const result = await cruise(dir, ['src', 'jobs', 'bin', 'dev', 'bench', 'test']);
    t.not(result.code, 0, result.output);
    const reported = result.output.split('\n').map((line) => line.trim());
    for (const [rule, { line }] of Object.entries(BROKEN)) {
      for (const one of [line].flat()) t.true(reported.includes(`error ${one}`), `${rule}: expected "${one}" in\n${result.output}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// src/ with each folder taken as one module (depcruise --collapse): a circle between two folders that no
// two files close (a/one → b/two, b/three → a/four) is a circle of the layers all the same. depcruise
// marks no circle on a collapsed graph, so the folders' graph is searched here.
async function folderCircles(cwd: string) {
  const { stdout } = await run(DEPCRUISE, ['--config', CONFIG, '--collapse', '^src/[^/]+/', '--output-type', 'json', 'src'], { cwd, maxBuffer: 64 << 20 });
  const modules = (JSON.parse(stdout) as { modules: { source: string; dependencies: { resolved: string }[] }[] }).modules;
  const graph = new Map(modules.map((module) => [module.source, module.dependencies.map((dependency) => dependency.resolved)]));
  const circles = new Set<string>();
  // a folder is on a circle when it reaches itself
  for (const start of graph.keys()) {
    const seen = new Set<string>();
    const path: string[] = [];
    const walk = (node: string): boolean => {
      for (const next of graph.get(node) ?? []) {
        if (next === start) return path.push(node), true;
        if (seen.has(next)) continue;
        seen.add(next);
        if (walk(next)) return path.push(node), true;
      }
      return false;
    };
    if (walk(start)) circles.add([...path.reverse(), start].join(' → '));
  }
  return [...circles];
}

test('src/ has no circle between its folders either, and a circle of folders alone is caught', async (t) => {
  t.deepEqual(await folderCircles(ROOT), []);
  const dir = mkdtempSync(join(tmpdir(), 'mdapi-folders-'));
  try {
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'nodenext', allowImportingTsExtensions: true, noEmit: true } }),
      'src/a/one.ts': "import { two } from '../b/two.ts';\nexport const one = two;\n",
      'src/b/two.ts': 'export const two = 2;\n',
      'src/b/three.ts': "import { four } from '../a/four.ts';\nexport const three = four;\n",
      'src/a/four.ts': 'export const four = 4;\n',
    };
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    t.is((await cruise(dir, ['src'])).code, 0, 'no circle between the files');
    t.deepEqual(await folderCircles(dir), ['src/a/ → src/b/ → src/a/', 'src/b/ → src/a/ → src/b/']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
