// The embedded database process dies (SIGKILL, as a WASM trap would end it): the supervisor starts
// it again on the same port and data, the API answers 503 service_unavailable meanwhile and serves
// again without a restart, and the inline worker picks jobs up again. Stopping is bounded too.
import test from 'ava';
import { createKey } from '../../src/keys.ts';
import { silentLogger } from '../../src/log.ts';
import { startService, type RunningService } from '../../src/service.ts';
import { embeddedOnly } from '../helpers/targets.ts';
import { TEST_SHARED_BUFFERS, testDatabase, type TestDatabase } from '../helpers/database.ts';
import { schedule } from '../../jobs/index.ts';
import { poll, sleep } from '../../dev/wait.ts';

const embedded = embeddedOnly(test, 'the service supervises the embedded database process; a server has its own init system');

let db: TestDatabase;
let service: RunningService;
test.before(async () => {
  db = await testDatabase();
  service = await startService(db.config({ PORT: '0', WORKER: 'inline', WORKER_HEARTBEAT_MS: '1000' }), silentLogger, schedule);
});
test.after.always(async () => {
  await service?.close();
  await db?.close();
});


embedded.serial('a test database runs with the buffer pool it was started with, not PGlite\'s 128MB', async (t) => {
  const [row] = await db.sql<{ shared_buffers: string }[]>`show shared_buffers`;
  t.is(row!.shared_buffers, TEST_SHARED_BUFFERS);
});

embedded.serial('a killed database process is restarted; the API answers 503 meanwhile and recovers by itself', async (t) => {
  const { key } = await createKey(db.sql, { plan: 'pro', owner: 'supervision', scope: 'data-api' });
  const ping = () => fetch(`${service.url}/api/v1/ping`, { headers: { authorization: `Bearer ${key}` } });
  t.is((await ping()).status, 200);

  const database = db.embedded!;
  const pid = database.pid()!;
  const restarted = new Promise((resolve) => database.events.once('restart', resolve));
  process.kill(pid, 'SIGKILL');
  const statuses: number[] = [];
  // every answer until the first 200 after an outage, each refusal checked on the way
  const last = await poll(async () => {
    const answer = await ping();
    statuses.push(answer.status);
    if (answer.status !== 200) {
      const body = await answer.json();
      t.is(answer.status, 503, 'never a 500 while the database is away');
      t.is(body.error.code, 'service_unavailable');
      t.truthy(answer.headers.get('retry-after'));
    }
    return answer;
  }, (answer) => answer.status === 200 && statuses.some((status) => status !== 200), { timeoutMs: 60_000, everyMs: 50 });
  await restarted;
  t.log(`${statuses.filter((status) => status === 503).length} requests answered 503 before the restarted database served again`);
  t.true(statuses.includes(503), `the outage was seen (${statuses.length} requests)`);
  t.is(last.status, 200, 'served again without restarting the API');
  t.not(database.pid(), pid, 'a new database process');

  // The inline worker lost its connections too: it takes new jobs again.
  const [{ id }] = (await db.sql`select (graphile_worker.add_job('prune_counters', '{}'::json)).id`) as unknown as [{ id: string }];
  const left = await poll(async () => (await db.sql`select count(*)::int as n from graphile_worker.jobs where id = ${id}`)[0]!.n as number, (n) => n === 0, { timeoutMs: 30_000, everyMs: 100 });
  t.is(left, 0, 'the worker ran a job queued after the restart');
});

embedded.serial('stopping the database process is bounded even while a statement holds it', async (t) => {
  await service.close();
  // A WASM statement blocks the database's thread, and its SIGTERM handler with it.
  const busy = db.sql`select pg_sleep(30)`.catch(() => 'ended');
  await sleep(300);
  const started = Date.now();
  const database = db.embedded!;
  await database.stop();
  const took = Date.now() - started;
  t.log(`stopped in ${took} ms`);
  t.true(took < 8_000, `stopped in ${took} ms`);
  t.is(await busy, 'ended');
  t.is(database.pid(), null);
});
