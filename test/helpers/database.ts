// A database of its own for each test file: a copy of the migrated template served by its own
// embedded server, or, with TEST_DATABASE_URL, a new database on that TimescaleDB server.
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedUrl, loadConfig, type Config } from '../../src/config.ts';
import { createSql, type Sql } from '../../src/db/client.ts';
import { queryOf, type Query } from '../../src/db/query.ts';
import { ensureEmbedded, type EmbeddedHandle } from '../../src/db/embedded/launcher.ts';
import { migrate } from '../../src/db/migrate.ts';
import { TEMPLATE_DIR, buildTemplate } from './template.ts';

export interface TestDatabase {
  url: string;
  /** the URL for another role (the analyst) */
  urlAs(user: string): string;
  sql: Sql;
  /** the same pool as a Query, for code that runs SQL text (sources, jobs' helpers) */
  query: Query;
  embeddedPort: number | null;
  /** the supervised embedded database process (null on a database server) */
  embedded: EmbeddedHandle | null;
  dataDir: string | null;
  /** service configuration pointing at this database */
  config(overrides?: Record<string, string>): Config;
  close(): Promise<void>;
}

/**
 * The settings every test app starts from. A strict cached answer waits for its versions read however
 * long it takes (on a loaded machine one can outlast the production bound, and a test reads what it
 * just wrote); test/http/cache.test.ts tests the bound itself.
 */
const TEST_DEFAULTS = { LOG_REQUESTS: 'false', WORKER: 'off', MARKET_SOURCE: 'none', CACHE_CONFIRM_WAIT_MS: '600000' };

/**
 * A test database's buffer pool: PGlite zeroes its 128MB one at every start (0.6 s of CPU per test
 * file), and no test file reads near 16MB of pages more than once.
 */
export const TEST_SHARED_BUFFERS = '16MB';

/** optimisedWasm: for a file whose database works hard (tens of seconds of queries), see EmbeddedOptions */
export async function testDatabase(options: { idleInTransactionTimeoutMs?: number; statementTimeoutMs?: number; template?: string; optimisedWasm?: boolean } = {}): Promise<TestDatabase> {
  const external = process.env.TEST_DATABASE_URL;
  if (external) return externalDatabase(external);
  const { template = TEMPLATE_DIR, ...limits } = options;
  if (!existsSync(join(template, 'pgdata'))) await buildTemplate();
  const dataDir = mkdtempSync(join(tmpdir(), 'mdapi-test-'));
  cpSync(template, dataDir, { recursive: true });
  const embedded = await ensureEmbedded({ dataDir, port: 0, sharedBuffers: TEST_SHARED_BUFFERS, ...limits });
  const url = embeddedUrl(embedded.port);
  const sql = createSql({ url, pooled: true, embedded: true }, { max: 4 });
  return {
    url,
    urlAs: (user) => embeddedUrl(embedded.port, user),
    sql,
    query: queryOf(sql),
    embeddedPort: embedded.port,
    embedded,
    dataDir,
    config: (overrides = {}) =>
      // The demo market stays off unless a test asks for it: its first tick backfills two years.
      loadConfig({ ...TEST_DEFAULTS, ...overrides, DATA_DIR: dataDir, EMBEDDED_DB_PORT: String(embedded.port) }),
    async close() {
      await sql.end({ timeout: 5 });
      await embedded.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function externalDatabase(serverUrl: string): Promise<TestDatabase> {
  const admin = createSql({ url: serverUrl, pooled: false, embedded: false }, { max: 1 });
  const name = `mdapi_test_${process.pid}_${Date.now()}`;
  await admin.unsafe(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const sql = createSql({ url: url.toString(), pooled: false, embedded: false }, { max: 4 });
  await migrate(sql);
  return {
    url: url.toString(),
    urlAs(user) {
      const other = new URL(url);
      other.username = user;
      other.password = process.env.TEST_ANALYST_PASSWORD ?? '';
      return other.toString();
    },
    sql,
    query: queryOf(sql),
    embeddedPort: null,
    embedded: null,
    dataDir: null,
    config: (overrides = {}) =>
      loadConfig({ ...TEST_DEFAULTS, ...overrides, DATABASE_URL: url.toString() }),
    async close() {
      await sql.end({ timeout: 5 });
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end({ timeout: 5 });
    },
  };
}
