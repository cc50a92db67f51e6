// Read replicas without a replica: which routes may read from one, how a replica's lag is bounded
// and judged, the round robin over healthy ones, and the configuration. Pure functions over states;
// test/db/read_replicas.test.ts checks the same on a real primary and streaming replica.
import test from 'ava';
import { apiRoutes } from '../../src/api/index.ts';
import { loadConfig } from '../../src/config.ts';
import { judgeReplica, lsnValue, pickReplica, replicaLagMs, replicaName, type ReplicaSample } from '../../src/db/replicas.ts';
import { readsFromReplica, type RouteSpec } from '../../src/http/routes.ts';

const route = (method: string, path: string) => {
  const found = apiRoutes.find((candidate) => candidate.method === method && candidate.path === path);
  if (!found) throw new Error(`no route ${method} ${path}`);
  return found;
};

test('market-data GET routes read from a replica', (t) => {
  for (const path of ['/coins', '/coins/{slug}', '/coins/{slug}/history', '/prices', '/prices/{slug}', '/fiats', '/exchanges/{slug}/assets', '/wallets/{slug}/assets', '/global', '/ping']) {
    t.true(readsFromReplica(route('get', path)), path);
  }
});

test('per-key state, just-written counts and every write stay on the primary', (t) => {
  // alarms and webhooks are no-store; usage and vote tallies are declared so
  for (const path of ['/alarms', '/alarms/{id}', '/webhooks', '/webhooks/{id}', '/webhooks/{id}/deliveries', '/usage', '/coins/{slug}/votes']) {
    t.false(readsFromReplica(route('get', path)), path);
  }
  const writes = apiRoutes.filter((candidate) => candidate.method !== 'get');
  t.true(writes.length > 5);
  for (const write of writes) t.false(readsFromReplica(write), `${write.method} ${write.path}`);
  // a declaration cannot send a write to a replica
  t.false(readsFromReplica({ method: 'post', reads: 'replica' } as RouteSpec));
  t.true(readsFromReplica({ method: 'get', noStore: true, reads: 'replica' } as RouteSpec));
});

const sample = (over: Partial<ReplicaSample> = {}): ReplicaSample => ({ inRecovery: true, replayedLsn: '0/3000000', replayAgeMs: null, ...over });
const NOW = 1_000_000;

test('lsnValue orders LSNs across the high word', (t) => {
  t.true(lsnValue('1/0') > lsnValue('0/FFFFFFFF'));
  t.is(lsnValue('16/B374D848'), (0x16n << 32n) + 0xb374d848n);
});

test('an idle primary: the replay timestamp is old but the replica has reached the latest mark', (t) => {
  const marks = [{ at: NOW - 60_000, lsn: '0/2000000' }, { at: NOW - 50, lsn: '0/3000000' }];
  t.is(replicaLagMs(sample({ replayAgeMs: 3_600_000 }), marks, NOW), 50);
  t.is(judgeReplica(sample(), 50, 10_000), 'healthy');
});

test('a busy primary: the replay timestamp bounds the lag when the marks are ahead', (t) => {
  const marks = [{ at: NOW - 100, lsn: '0/4000000' }];
  t.is(replicaLagMs(sample({ replayAgeMs: 120 }), marks, NOW), 120);
});

test('replay stopped: the lag grows from the last mark reached, and past the bound the replica is skipped', (t) => {
  const marks = [{ at: NOW - 12_000, lsn: '0/3000000' }, { at: NOW - 8_000, lsn: '0/3000100' }, { at: NOW - 10, lsn: '0/3000200' }];
  const lag = replicaLagMs(sample({ replayAgeMs: 15_000 }), marks, NOW);
  t.is(lag, 12_000);
  t.is(judgeReplica(sample(), lag, 10_000), 'lagging');
  t.is(judgeReplica(sample(), lag, 20_000), 'healthy');
});

test('an unknown lag, or a server that is not in recovery, is skipped', (t) => {
  t.is(replicaLagMs(sample({ replayedLsn: null }), [], NOW), null);
  t.is(judgeReplica(sample(), null, 10_000), 'lagging');
  t.is(judgeReplica(sample({ inRecovery: false }), 0, 10_000), 'not_a_replica');
});

test('round robin over the healthy replicas only; none healthy: the primary', (t) => {
  const states = [{ status: 'healthy' }, { status: 'down' }, { status: 'healthy' }, { status: 'lagging' }] as const;
  t.deepEqual([0, 1, 2, 3].map((turn) => pickReplica([...states], turn)), [0, 2, 0, 2]);
  t.is(pickReplica([{ status: 'down' }, { status: 'not_a_replica' }, { status: 'unchecked' }], 0), null);
  t.is(pickReplica([], 5), null);
});

test('DATABASE_READ_URL takes a comma-separated list beside DATABASE_URL and is refused with the embedded database', (t) => {
  const config = loadConfig({
    DATABASE_URL: 'postgres://u@primary:5432/db',
    DATABASE_READ_URL: 'postgres://u:secret@replica-a:5432/db, postgres://u@replica-b:5433/db',
  });
  t.deepEqual(config.DATABASE_READ_URL, ['postgres://u:secret@replica-a:5432/db', 'postgres://u@replica-b:5433/db']);
  t.is(config.DATABASE_READ_MAX_LAG_MS, 10_000);
  t.is(replicaName(config.DATABASE_READ_URL![0]!), 'replica-a:5432/db', 'no credentials in the name shown by /readyz and /metrics');
  t.is(loadConfig({}).DATABASE_READ_URL, undefined);
  t.throws(() => loadConfig({ DATABASE_READ_URL: 'postgres://u@replica-a:5432/db' }), { message: /DATABASE_READ_URL: .*embedded database/ });
  t.throws(() => loadConfig({ DATABASE_URL: 'postgres://u@primary:5432/db', DATABASE_READ_URL: 'not a url' }), { message: /DATABASE_READ_URL/ });
  t.throws(() => loadConfig({ DATABASE_URL: 'postgres://u@primary:5432/db', DATABASE_READ_URL: ' , ' }), { message: /DATABASE_READ_URL/ });
});
