// The HTTP app on an ephemeral port over a test database, and a small fetch wrapper.
import { createServer, type Server } from 'node:http';
import { createApp, guardServer } from '../../src/http/app.ts';
import type { RouteSpec } from '../../src/http/routes.ts';
import type { Deps } from '../../src/http/admission.ts';
import { served } from '../../src/service.ts';
import { silentLogger, type Logger } from '../../src/log.ts';
import { createKey, type NewKey } from '../../src/keys.ts';
import { testDatabase, type TestDatabase } from './database.ts';
import { sleep } from '../../dev/wait.ts';

export interface TestApi {
  base: string;
  server: Server;
  /** the Koa app: its admission batcher (null with ADMISSION_FLUSH_MS=0) */
  app: ReturnType<typeof createApp>;
  get(path: string, key?: string | null, headers?: Record<string, string>): Promise<TestResponse>;
  request(method: string, path: string, init?: { key?: string | null; headers?: Record<string, string>; body?: string }): Promise<TestResponse>;
  key(options?: Partial<NewKey>): Promise<string>;
  close(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
}

export async function testApi(
  db: TestDatabase,
  options: { env?: Record<string, string>; routes?: RouteSpec[]; logger?: Logger; activity?: Deps['activity'] } = {},
): Promise<TestApi> {
  const config = db.config(options.env);
  const app = createApp({ sql: db.sql, config, activity: options.activity }, { logger: options.logger ?? silentLogger }, { ...served, routes: options.routes ?? served.routes });
  const server = createServer(app.callback());
  guardServer(server);
  app.attach(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const request: TestApi['request'] = async (method, path, init = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    if (init.key) headers.authorization = `Bearer ${init.key}`;
    const response = await fetch(`${base}${path}`, { method, headers, body: init.body });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: response.status, headers: response.headers, body };
  };
  return {
    base,
    server,
    app,
    request,
    get: (path, key, headers) => request('GET', path, { key, headers }),
    key: async (options = {}) =>
      (await createKey(db.sql, { plan: options.plan ?? (options.scope === 'mcp' ? 'mcp-free' : 'free'), owner: options.owner ?? 'tester', scope: options.scope ?? 'data-api' })).key,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await app.close();
    },
  };
}

/** Counters use one-minute windows: start a sequence that must stay in one window well inside it. */
export async function awayFromMinuteBoundary(needSeconds = 10) {
  const intoMinute = (Date.now() % 60_000) / 1000;
  if (intoMinute > 60 - needSeconds) await sleep((60 - intoMinute) * 1000 + 200);
}

/**
 * A test database and the API over it for one test file: registers the before/after hooks and
 * returns the handles, filled in once `before` has run.
 */
export function useApi(
  test: { before: (fn: () => Promise<void>) => void; after: { always: (fn: () => Promise<void>) => void } },
  options: Parameters<typeof testApi>[1] & {
    /** the file's database (default: a new migrated one) */
    database?: () => Promise<TestDatabase>;
    setup?: (handles: { db: TestDatabase; api: TestApi }) => Promise<void>;
  } = {},
) {
  const handles = {} as { db: TestDatabase; api: TestApi };
  // One hook: ava runs a file's before hooks concurrently.
  test.before(async () => {
    handles.db = await (options.database ?? testDatabase)();
    handles.api = await testApi(handles.db, options);
    await options.setup?.(handles);
  });
  test.after.always(async () => {
    await handles.api?.close();
    await handles.db?.close();
  });
  return handles;
}
