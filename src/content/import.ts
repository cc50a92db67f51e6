// `mdapi import-content DIR`: curated content from versioned JSON files (wallets.json,
// articles.json, videos.json, insights.json; any of them). Every file present is read and
// validated before anything is written; then each is handed, as jsonb, to its SQL importer in one
// transaction. A bad file imports nothing, and the error names the file, the item and the field.
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import type { Sql } from '../db/client.ts';
import { ImportRefusedError } from '../validators.ts';
import { CONTENT_FILES, type ContentKind } from './schema.ts';

/** Nothing was imported; `problems` holds one line per fault, each naming the file, the item and the field. */
export class ContentImportError extends ImportRefusedError {}

export interface ContentFile {
  kind: ContentKind;
  file: string;
  /** the file's text: PostgreSQL parses it, so scores never pass through a JS float */
  text: string;
}

export interface ContentImportResult {
  kind: ContentKind;
  items: number;
  inserted: number;
  updated: number;
  /** every row written, the items' parts included: 0 when the same file is imported again */
  rows_written: number;
}

// One importer a file kind, called once with the whole file.
const IMPORTERS: Record<ContentKind, (sql: Sql, text: string) => Promise<{ result: ContentImportResult }[]>> = {
  wallets: (sql, text) => sql`select market.import_wallets(${text}::text::jsonb) as result`,
  articles: (sql, text) => sql`select market.import_articles(${text}::text::jsonb) as result`,
  videos: (sql, text) => sql`select market.import_videos(${text}::text::jsonb) as result`,
  insights: (sql, text) => sql`select market.import_insights(${text}::text::jsonb) as result`,
};

// Any constant: concurrent imports (two services starting on an empty database) take turns.
const IMPORT_LOCK = 727_060;

/** Reads and validates every content file of the directory; throws ContentImportError listing every problem. */
export function readContentDir(dir: string): ContentFile[] {
  const files: ContentFile[] = [];
  const problems: string[] = [];
  for (const { kind, file, schema } of CONTENT_FILES) {
    const path = join(dir, file);
    if (!existsSync(path)) continue;
    let text: string;
    let json: unknown;
    try {
      text = readFileSync(path, 'utf8');
      json = JSON.parse(text);
    } catch (error) {
      problems.push(`${file}: not readable JSON (${(error as Error).message})`);
      continue;
    }
    const parsed = (schema as z.ZodType).safeParse(json);
    if (parsed.success) files.push({ kind, file, text });
    else problems.push(...parsed.error.issues.map((issue) => `${file}: ${describeIssue(json, issue)}`));
  }
  if (problems.length > 0) throw new ContentImportError(`${problems.length} problem(s) in ${dir}, nothing imported`, problems);
  if (files.length === 0) {
    throw new ContentImportError(`no content files in ${dir}: expected any of ${CONTENT_FILES.map((f) => f.file).join(', ')}`);
  }
  return files;
}

/** Imports every content file of the directory, all or nothing. Re-importing the same files writes nothing. */
export async function importContent(sql: Sql, dir: string): Promise<ContentImportResult[]> {
  const files = readContentDir(dir);
  let current = '';
  try {
    return await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${IMPORT_LOCK})`;
      const results: ContentImportResult[] = [];
      for (const { kind, file, text } of files) {
        current = file;
        const [row] = await IMPORTERS[kind](tx as unknown as Sql, text);
        results.push(row!.result);
      }
      return results;
    });
  } catch (error) {
    // The SQL importers raise MD422 (and the tables' checks 23xxx) with a message naming the item.
    const code = (error as { code?: string }).code ?? '';
    if (code === 'MD422' || code.startsWith('23') || code.startsWith('22')) {
      throw new ContentImportError(`${current}: rejected by the database, nothing imported`, [`${current}: ${(error as Error).message}`]);
    }
    throw error;
  }
}

/** "wallets[3] (slug ledger-nano-x): score: Too big" — the item by position and by its key, then the field. */
function describeIssue(json: unknown, issue: z.core.$ZodIssue): string {
  const [list, index, ...field] = issue.path;
  if (typeof list === 'string' && typeof index === 'number') {
    const item = (json as Record<string, unknown[]>)[list]?.[index] as Record<string, unknown> | undefined;
    const key = item?.slug !== undefined ? `slug ${JSON.stringify(item.slug)}` : item?.id !== undefined ? `id ${JSON.stringify(item.id)}` : null;
    const where = `${list}[${index}]${key ? ` (${key})` : ''}`;
    return field.length > 0 ? `${where}: ${field.join('.')}: ${issue.message}` : `${where}: ${issue.message}`;
  }
  return issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}

/** One line per file imported, for the operator. */
export const describeImport = (results: ContentImportResult[]): string[] =>
  results.map((r) => `${r.kind}: ${r.items} items, ${r.inserted} new, ${r.updated} updated, ${r.rows_written} rows written`);
