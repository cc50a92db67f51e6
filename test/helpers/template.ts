// The migrated database every test file starts from: built once per run, copied per file.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { embeddedUrl } from '../../src/config.ts';
import { createSql } from '../../src/db/client.ts';
import { ensureEmbedded } from '../../src/db/embedded/launcher.ts';
import { migrate } from '../../src/db/migrate.ts';

// One template per test run (test/run.ts names it), so that two runs on one machine never copy
// a template the other is rebuilding.
export const TEMPLATE_DIR =
  process.env.MDAPI_TEST_TEMPLATE ?? new URL(`../../.cache/test-template-${process.pid}/`, import.meta.url).pathname;

export async function buildTemplate() {
  if (process.env.TEST_DATABASE_URL) return;
  rmSync(TEMPLATE_DIR, { recursive: true, force: true });
  mkdirSync(TEMPLATE_DIR, { recursive: true });
  const embedded = await ensureEmbedded({ dataDir: TEMPLATE_DIR, port: 0 });
  const sql = createSql({ url: embeddedUrl(embedded.port), pooled: true, embedded: true }, { max: 1 });
  try {
    await migrate(sql);
  } finally {
    await sql.end({ timeout: 5 });
    await embedded.stop();
  }
  if (!existsSync(`${TEMPLATE_DIR}/pgdata/PG_VERSION`)) throw new Error('template database was not written');
}
