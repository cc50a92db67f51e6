// `make bench`: the service on a fresh embedded database (or a new database on the server given by
// BENCH_DATABASE_URL), each endpoint measured over HTTP beside the same SQL called directly through
// postgres.js (the ceiling the HTTP layer adds to), then ingest at catalogue scale.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createSql } from '../src/db/client.ts';
import { hashKey, createKey } from '../src/keys.ts';
import { silentLogger } from '../src/log.ts';
import { startService } from '../src/service.ts';
import { measure, printTable, type Figures } from './harness.ts';
import { benchBackfill } from './backfill.ts';
import { benchVenues } from './venues.ts';
import { benchScale, benchStreamsAgainstPolling } from './scale.ts';
import { benchExchanges } from './exchanges.ts';
import { benchGlobal } from './global.ts';
import { benchHttp } from './http.ts';
import { benchIndicators } from './indicators.ts';
import { benchIngest } from './ingest.ts';
import { benchMarket } from './market.ts';
import { benchLiveLatency, benchStreams } from './streams.ts';

// BENCH_MODE=as-run: the service as `make start` runs it, measured from outside (bench/as-run.ts)
if (process.env.BENCH_MODE === 'as-run') {
  await import('./as-run.ts');
  process.exit(0);
}

const dataDir = mkdtempSync(join(tmpdir(), 'mdapi-bench-'));
// On a server the figures come from a database of their own, dropped afterwards.
const server = process.env.BENCH_DATABASE_URL ? await benchDatabase(process.env.BENCH_DATABASE_URL) : null;
const service = await startService(
  loadConfig({ ...process.env, DATABASE_URL: server?.url, DATA_DIR: dataDir, EMBEDDED_DB_PORT: '0', PORT: '0', WORKER: 'off', LOG_REQUESTS: 'false' }),
  silentLogger,
);
const { sql } = service;
try {
  // A plan without practical limits, so that the figures measure work, not 429s.
  await sql`insert into app.plans (name, rank, monthly_quota, requests_per_minute, per_page_cap)
            values ('bench', 100, 1000000000, 1000000000, 250) on conflict (name) do nothing`;
  const { key } = await createKey(sql, { plan: 'bench' as never, owner: 'bench', scope: 'data-api' });
  const headers = { authorization: `Bearer ${key}` };
  const get = (path: string) => async () => {
    const response = await fetch(`${service.url}${path}`, { headers });
    if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
    await response.arrayBuffer();
  };
  const requests = Number(process.env.BENCH_REQUESTS ?? 1000);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
  const options = { requests, concurrency };
  const rows: Figures[] = [];
  rows.push(await measure('GET /api/v1/ping (HTTP)', get('/api/v1/ping'), options));
  rows.push(
    await measure(
      'app.admit (SQL ceiling)',
      () => sql`select * from app.admit(${hashKey(key)}, '127.0.0.1', 'data-api', 'free', 'GET /api/v1/ping', 10, 100, true)`,
      options,
    ),
  );
  const [{ version, timescaledb }] = (await sql`
    select current_setting('server_version') as version, (select extversion from pg_extension where extname = 'timescaledb') as timescaledb`) as unknown as [{ version: string; timescaledb: string }];
  const database = `${service.config.database.embedded ? 'embedded database' : 'database server'}: PostgreSQL ${version}, TimescaleDB ${timescaledb}`;
  console.log(`\nmarket-data-api benchmarks — ${database}, ${requests} requests, concurrency ${concurrency}\n`);
  printTable(rows);
  // first, while binance lists no market but the bench's own (the holder streams every listed one)
  if (process.env.BENCH_STREAMS !== 'off' && process.env.BENCH_LIVE !== 'off') await benchLiveLatency(service);
  if (process.env.BENCH_MARKET !== 'off') await benchMarket(sql, get, options);
  if (process.env.BENCH_MARKET !== 'off' && process.env.BENCH_EXCHANGES !== 'off') await benchExchanges(sql, get, options);
  if (process.env.BENCH_MARKET !== 'off' && process.env.BENCH_GLOBAL !== 'off') await benchGlobal(sql, get, options);
  // after the parts that load the demo market, the venues and the sentiment its routes read
  if (process.env.BENCH_MARKET !== 'off' && process.env.BENCH_HTTP !== 'off') await benchHttp(service);
  if (process.env.BENCH_INDICATORS !== 'off') await benchIndicators(sql, get, options);
  if (process.env.BENCH_INGEST !== 'off') await benchIngest(sql, service.config.database.url);
  if (process.env.BENCH_VENUES !== 'off') await benchVenues(sql);
  if (process.env.BENCH_BACKFILL !== 'off') await benchBackfill(sql);
  if (process.env.BENCH_STREAMS !== 'off') await benchStreams(service);
  // the service as make start runs it on the replay at BENCH_VENUES_COINS, a process and a database of its own
  if (process.env.BENCH_SCALE !== 'off') await benchScale();
  if (process.env.BENCH_SCALE_STREAMS !== 'off') await benchStreamsAgainstPolling();
  const memory = process.memoryUsage();
  console.log(`\nAPI process memory: rss ${(memory.rss / 2 ** 20).toFixed(0)} MiB, heap used ${(memory.heapUsed / 2 ** 20).toFixed(0)} MiB`);
} finally {
  await service.close();
  await server?.drop();
  rmSync(dataDir, { recursive: true, force: true });
}

async function benchDatabase(serverUrl: string) {
  const admin = createSql({ url: serverUrl, pooled: false, embedded: false }, { max: 1 });
  const name = `mdapi_bench_${process.pid}`;
  await admin.unsafe(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end({ timeout: 5 });
    },
  };
}
