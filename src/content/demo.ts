// The demo content (content/demo/): wallet reviews, articles in English, German and Spanish,
// videos and insights about the demo market's coins and venues. Loaded on a service's start when
// the demo market is on and the content tables are empty, so `make start` shows them; recorded
// under the data source demo-content (demo = true), which /ping reports.
import type { Sql } from '../db/client.ts';
import { importContent, type ContentImportResult } from './import.ts';

export const DEMO_CONTENT_DIR = new URL('../../content/demo/', import.meta.url).pathname;

/** Imports the demo content unless some content is there already (imported or demo). Returns what it imported. */
export async function loadDemoContentIfEmpty(sql: Sql): Promise<ContentImportResult[] | null> {
  const [row] = await sql<{ empty: boolean }[]>`
    select not exists (select from market.wallets) and not exists (select from market.articles)
      and not exists (select from market.videos) and not exists (select from market.insights) as empty`;
  if (!row!.empty) return null;
  return importContent(sql, DEMO_CONTENT_DIR);
}
