// The database server is checked before anything is migrated: versions, preloading, TSL features.
import test from 'ava';
import { MIN_POSTGRES, readServerFacts, serverProblems, type ServerFacts } from '../../src/db/server-check.ts';
import { testDatabase } from '../helpers/database.ts';

const supported: ServerFacts = {
  postgres: '15.8', postgresMajor: 15, timescaledb: '2.13.0', installed: true, preloaded: true,
  sharedPreloadLibraries: 'timescaledb', license: 'timescale', embedded: false,
};

test('the test database is a supported server, and says what it is', async (t) => {
  const db = await testDatabase();
  try {
    const facts = await readServerFacts(db.sql);
    t.deepEqual(serverProblems(facts), []);
    t.true(facts.postgresMajor >= MIN_POSTGRES);
    t.true(facts.installed);
    t.regex(facts.timescaledb!, /^2\.\d+\.\d+/);
    t.is(facts.license, 'timescale', 'continuous aggregates and policies are there');
    t.is(facts.embedded, db.embedded !== null);
  } finally {
    await db.close();
  }
});

test('PostgreSQL 15 with TimescaleDB 2.13 preloaded, TSL licence: supported', (t) => {
  t.deepEqual(serverProblems(supported), []);
  t.deepEqual(serverProblems({ ...supported, postgres: '17.5', postgresMajor: 17, timescaledb: '2.23.1' }), []);
  t.deepEqual(serverProblems({ ...supported, sharedPreloadLibraries: 'pg_stat_statements, "timescaledb"' }), []);
});

test('each unsupported server is refused naming what was found and what is needed', (t) => {
  t.deepEqual(serverProblems({ ...supported, postgres: '14.12', postgresMajor: 14 }), ['PostgreSQL 14.12 found; 15 or newer is needed']);
  t.deepEqual(serverProblems({ ...supported, timescaledb: '2.12.2' }), ['TimescaleDB 2.12.2 found; TimescaleDB 2.13 or newer is needed']);
  t.deepEqual(serverProblems({ ...supported, timescaledb: '1.7.5' }), ['TimescaleDB 1.7.5 found; TimescaleDB 2.13 or newer is needed']);
  t.deepEqual(serverProblems({ ...supported, timescaledb: null, installed: false, preloaded: false, license: null }), [
    'TimescaleDB is not installed on the server; TimescaleDB 2.13 or newer is needed',
  ]);
  const [notPreloaded] = serverProblems({ ...supported, preloaded: false, sharedPreloadLibraries: 'pg_stat_statements' });
  t.regex(notPreloaded!, /timescaledb is not in shared_preload_libraries \(found: 'pg_stat_statements'\)/);
  const [apache] = serverProblems({ ...supported, license: 'apache' });
  t.regex(apache!, /timescaledb\.license = 'apache'.*continuous aggregates/);
});
