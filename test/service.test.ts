// The whole service as `make start` runs it: database found on its port, migrations, the
// worker with its crontab, and the HTTP API.
import test from 'ava';
import { createKey } from '../src/keys.ts';
import { silentLogger } from '../src/log.ts';
import { availableParallelism } from 'node:os';
import { loadConfig } from '../src/config.ts';
import { startService, type RunningService } from '../src/service.ts';
import { testDatabase, type TestDatabase } from './helpers/database.ts';
import { schedule } from '../jobs/index.ts';
import { poll } from '../dev/wait.ts';

let db: TestDatabase;
let service: RunningService;
test.before(async () => {
  db = await testDatabase();
  service = await startService(db.config({ PORT: '0', WORKER: 'inline' }), silentLogger, schedule);
});
test.after.always(async () => {
  await service?.close();
  await db?.close();
});

test.serial('the service answers ping with a key and 401 without one', async (t) => {
  const { key } = await createKey(db.sql, { plan: 'free', owner: 'service', scope: 'data-api' });
  const ok = await fetch(`${service.url}/api/v1/ping`, { headers: { authorization: `Bearer ${key}` } });
  t.is(ok.status, 200);
  t.is((await ok.json()).data.status, 'ok');
  const refused = await fetch(`${service.url}/api/v1/ping`);
  t.is(refused.status, 401);
});

test.serial('the API pool is twice the cores, 4 to 16, unless DATABASE_POOL_SIZE says otherwise', (t) => {
  const cores = availableParallelism();
  const expected = cores <= 2 ? 4 : cores >= 8 ? 16 : 2 * cores;
  t.is(service.config.DATABASE_POOL_SIZE, expected);
  // the setting reaches the pool the handlers query on
  t.is((service.sql as unknown as { options: { max: number } }).options.max, expected);
  t.is(loadConfig({ DATABASE_POOL_SIZE: '8' }).DATABASE_POOL_SIZE, 8);
  t.throws(() => loadConfig({ DATABASE_POOL_SIZE: '0' }), { message: /DATABASE_POOL_SIZE/ });
});

test.serial('the worker runs in the service process with the crontab registered', async (t) => {
  const known = await poll(
    async () => (await db.sql<{ identifier: string }[]>`select identifier from graphile_worker._private_known_crontabs`).map((row) => row.identifier),
    (identifiers) => identifiers.includes('run_timescaledb_jobs'),
    { timeoutMs: 5_000, everyMs: 100 },
  );
  t.true(known.includes('run_timescaledb_jobs'));
  const [job] = await db.sql`select graphile_worker.add_job('prune_counters', '{}'::json) as job`;
  t.truthy(job);
  const remaining = await poll(
    async () => (await db.sql<{ n: number }[]>`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'prune_counters'`)[0]!.n,
    (n) => n === 0,
    { timeoutMs: 10_000, everyMs: 100 },
  );
  t.is(remaining, 0, 'the inline worker picked the job up and completed it');
});
