// docs/configuration.md, generated from the configuration schema (src/config.ts): each variable's
// description, default and accepted values come from the schema itself, so the document cannot
// drift from what the service reads. `make config-doc` writes it; test/config_doc.test.ts checks it.
import { writeFileSync } from 'node:fs';
import { z } from 'zod';
import { CONFIG_GROUPS } from './config.ts';

export const CONFIG_DOC_FILE = new URL('../docs/configuration.md', import.meta.url);

interface Meta { description?: string; documentedDefault?: string }

const code = (value: string) => `\`${value}\``;
// a table cell: a pipe would end the cell
const cell = (text: string) => text.replace(/\|/g, '\\|');

/** The default as an environment value: the schema's literal default (inside any transform), else unset. */
function defaultOf(field: z.ZodType): string {
  const meta = (field.meta() ?? {}) as Meta;
  if (meta.documentedDefault) return meta.documentedDefault;
  let inner = field as z.ZodType & { def: { type: string; in?: z.ZodType; defaultValue?: unknown } };
  while (inner.def.type === 'pipe' && inner.def.in) inner = inner.def.in as typeof inner;
  if (inner.def.type !== 'default') return 'unset';
  return code(String(inner.def.defaultValue));
}

const FLAG_VALUES = ['0', '1', 'true', 'false'];

/** What the variable accepts, read from the schema's JSON Schema (its input side). */
function valuesOf(field: z.ZodType): string {
  const json = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' }) as {
    type?: string; enum?: string[]; minimum?: number; maximum?: number; format?: string;
  };
  if (json.enum) {
    return json.enum.length === FLAG_VALUES.length && FLAG_VALUES.every((value) => json.enum!.includes(value))
      ? '`true` or `false` (`1`, `0`)'
      : json.enum.map(code).join(', ');
  }
  if (json.type === 'integer' || json.type === 'number') {
    const kind = json.type === 'integer' ? 'integer' : 'number';
    // z.int() bounds every integer by the safe range: not a limit worth printing
    if (json.maximum !== undefined && json.maximum >= Number.MAX_SAFE_INTEGER) delete json.maximum;
    if (json.minimum !== undefined && json.minimum <= Number.MIN_SAFE_INTEGER) delete json.minimum;
    if (json.minimum !== undefined && json.maximum !== undefined) return `${kind}, ${json.minimum}–${json.maximum}`;
    if (json.minimum !== undefined) return `${kind} ≥ ${json.minimum}`;
    return kind;
  }
  if (json.format === 'uri') return 'URL';
  return 'text';
}

export function configurationDocument(): string {
  const lines = [
    '# Configuration',
    '',
    'Every setting is an environment variable, read and validated once at start-up: a bad value stops',
    'the service with a message naming the variable. The same variables apply to `make start`, the',
    '`mdapi` commands and `mdapi worker`. The tests and benchmarks read a few of their own',
    '(`TEST_DATABASE_URL`, `BENCH_*`, `CHAOS_*`, `TOPOLOGY_*`): see [development.md](development.md) and',
    '[bench/README.md](../bench/README.md).',
    '',
    '<!-- Generated from src/config.ts by `make config-doc`; edit the descriptions there. -->',
  ];
  for (const [group, fields] of Object.entries(CONFIG_GROUPS)) {
    lines.push('', `## ${group}`, '', '| variable | default | values | meaning |', '| --- | --- | --- | --- |');
    for (const [name, field] of Object.entries(fields) as [string, z.ZodType][]) {
      const { description } = (field.meta() ?? {}) as Meta;
      if (!description) throw new Error(`src/config.ts: ${name} has no description (.meta(doc('…')))`);
      lines.push(`| ${code(name)} | ${cell(defaultOf(field))} | ${cell(valuesOf(field))} | ${cell(description)} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export const writeConfigurationDocument = () => writeFileSync(CONFIG_DOC_FILE, configurationDocument());
