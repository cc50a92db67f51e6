// docs/configuration.md is what the configuration schema (src/config.ts) generates: a variable
// added, removed or redescribed there without `make config-doc` fails here.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { CONFIG_DOC_FILE, configurationDocument } from '../src/config-doc.ts';
import { CONFIG_GROUPS, loadConfig } from '../src/config.ts';

test('docs/configuration.md matches the configuration schema', (t) => {
  const generated = configurationDocument();
  const committed = readFileSync(CONFIG_DOC_FILE, 'utf8');
  const [ours, theirs] = [generated.split('\n'), committed.split('\n')];
  const line = Array.from({ length: Math.max(ours.length, theirs.length) }, (_, index) => index).find((index) => ours[index] !== theirs[index]);
  t.is(line, undefined, line === undefined ? '' :
    `docs/configuration.md differs from src/config.ts from line ${line + 1}:\n  generated: ${ours[line] ?? '(end of file)'}\n  committed: ${theirs[line] ?? '(end of file)'}\nrun \`make config-doc\` and review the difference`);
});

test('the document lists every variable the service reads, each once, with its default', (t) => {
  const document = configurationDocument();
  const rows = [...document.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)].map((match) => ({ name: match[1]!, default: match[2]!.trim() }));
  const names = Object.values(CONFIG_GROUPS).flatMap((group) => Object.keys(group));
  t.deepEqual(rows.map((row) => row.name), names);
  t.is(new Set(names).size, names.length, 'no variable in two groups');
  // a literal default is printed as the value the schema applies to an empty environment
  const applied = loadConfig({}) as unknown as Record<string, unknown>;
  for (const name of ['PORT', 'DATA_DIR', 'WORKER', 'ADMISSION_FLUSH_MS', 'LOG_REQUESTS']) {
    t.is(rows.find((row) => row.name === name)!.default, `\`${String(applied[name])}\``, name);
  }
});

test('a variable without a description stops the generator, naming it', (t) => {
  const group = CONFIG_GROUPS.HTTP as Record<string, unknown>;
  const { HOST } = group;
  try {
    group.HOST = (HOST as { meta: (m: object) => unknown }).meta({ description: '' });
    t.throws(() => configurationDocument(), { message: /HOST has no description/ });
  } finally {
    group.HOST = HOST;
  }
});
