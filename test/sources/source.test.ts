// Every source runs through runSource, which records its health (market.source_health) for /ping,
// /readyz and analysts: here the real ECB source on recorded responses, a success then a failure.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { ecbRates, type Fetch } from '../../src/sources/ecb.ts';
import { runSource, type Source } from '../../src/sources/source.ts';
import { useApi } from '../helpers/http.ts';

const handles = useApi(test);
const recorded = readFileSync(new URL('../../dev/venues/recorded/ecb/eurofxref-daily-2025-07-01.xml', import.meta.url), 'utf8');
const replay = (body: string, status = 200): Fetch => async () => ({ ok: status >= 200 && status < 300, status, text: async () => body });
const health = async (name: string) => (await handles.db.sql`select * from market.source_health where name = ${name}`)[0]!;

test.serial('a source that never ran is idle, and /readyz leaves it out', async (t) => {
  t.like(await health('ecb'), { status: 'idle', last_run_at: null, last_success_at: null, last_error: null });
  const key = await handles.api.key();
  const ping = await handles.api.get('/api/v1/ping', key);
  t.like(ping.body.meta.sources.find((source: { name: string }) => source.name === 'ecb'), { kind: 'reference', demo: false, status: 'idle' });
  t.false((await handles.api.get('/readyz')).body.checks.sources.sources.some((source: { name: string }) => source.name === 'ecb'));
});

test.serial('a successful run is recorded: status ok, last success, lag', async (t) => {
  const result = await runSource(handles.db.query, ecbRates(replay(recorded)));
  t.is(result.date, '2025-07-01');
  const row = await health('ecb');
  t.is(row.status, 'ok');
  t.truthy(row.last_success_at);
  t.is(row.last_error, null);
  // lag: how old the newest data is (the ECB day stored), not how long ago the run was
  const [day] = await handles.db.sql`select extract(epoch from now() - covered_until)::int as age from market.data_sources where name = 'ecb'`;
  t.true(Math.abs((row.lag_seconds as number) - (day!.age as number)) <= 1);
  t.true((row.lag_seconds as number) > 86_400, 'the recorded day is long past');
  const key = await handles.api.key();
  t.like((await handles.api.get('/api/v1/ping', key)).body.meta.sources.find((source: { name: string }) => source.name === 'ecb'), { status: 'ok' });
});

test.serial('a failed run is recorded with its error and rethrown; the last success stays', async (t) => {
  const before = (await health('ecb')).last_success_at as Date;
  await t.throwsAsync(runSource(handles.db.query, ecbRates(replay('<html>busy</html>', 503))), { message: /503/ });
  const row = await health('ecb');
  t.is(row.status, 'failing');
  t.regex(row.last_error as string, /503/);
  t.deepEqual(row.last_success_at, before);
  const readyz = (await handles.api.get('/readyz')).body;
  t.like(readyz.checks.sources.sources.find((source: { name: string }) => source.name === 'ecb'), { status: 'failing' });
  // then a success: ok again, the error kept for the record
  await runSource(handles.db.query, ecbRates(replay(recorded)));
  t.like(await health('ecb'), { status: 'ok' });
  t.regex((await health('ecb')).last_error as string, /503/);
});

test.serial('venues up and down are recorded for sources that have several', async (t) => {
  const venues: Source<{ up: string[]; down: string[] }> = {
    name: 'simulated-liquidations',
    run: async () => ({ up: ['binance', 'kraken'], down: ['okx'] }),
    venues: (result) => Object.fromEntries([...result.up.map((v) => [v, 'up'] as const), ...result.down.map((v) => [v, 'down'] as const)]),
  };
  await runSource(handles.db.query, venues);
  t.deepEqual((await health('simulated-liquidations')).venues, { binance: 'up', kraken: 'up', okx: 'down' });
});

test.serial('a source follows its venues: degraded when some produced nothing, failing when none did, on /ping, /readyz and /status', async (t) => {
  let outcome = { up: ['binance', 'kraken'], down: ['okx'] };
  const exchanges: Source<typeof outcome> = {
    name: 'exchanges',
    run: async () => outcome,
    venues: (result) => Object.fromEntries([...result.up.map((v) => [v, 'up'] as const), ...result.down.map((v) => [v, 'down'] as const)]),
  };
  const key = await handles.api.key();
  const seen = async () => {
    const ping = (await handles.api.get('/api/v1/ping', key)).body.meta.sources.find((source: { name: string }) => source.name === 'exchanges');
    const ready = (await handles.api.get('/readyz')).body.checks.sources.sources.find((source: { name: string }) => source.name === 'exchanges');
    const status = (await handles.api.get('/status.json', null)).body.data.components.find((component: { id: string }) => component.id === 'source:exchanges');
    return { sql: (await health('exchanges')).status, ping, ready, status };
  };

  await runSource(handles.db.query, exchanges);
  let now = await seen();
  t.is(now.sql, 'degraded');
  t.like(now.ping, { status: 'degraded', venues: { binance: 'up', kraken: 'up', okx: 'down' } });
  t.like(now.ready, { status: 'degraded', venues: { okx: 'down' } });
  t.like(now.status, { state: 'degraded', figures: { status: 'degraded', venues_up: 2, venues_down: 1 } });

  // every venue down, though the run itself ended without an error
  outcome = { up: [], down: ['binance', 'kraken', 'okx'] };
  await runSource(handles.db.query, exchanges);
  now = await seen();
  t.is(now.sql, 'failing');
  t.like(now.ping, { status: 'failing', venues: { binance: 'down', kraken: 'down', okx: 'down' } });
  t.like(now.ready, { status: 'failing', venues: { binance: 'down' } });
  t.like(now.status, { state: 'outage', figures: { status: 'failing', venues_up: 0 } });

  outcome = { up: ['binance', 'kraken', 'okx'], down: [] };
  await runSource(handles.db.query, exchanges);
  now = await seen();
  t.is(now.sql, 'ok');
  t.like(now.ping, { status: 'ok' });
  t.like(now.status, { state: 'operational', figures: { status: 'ok' } });
});

test('the analyst reads source health', async (t) => {
  const [row] = await handles.db.sql`select has_table_privilege('analyst', 'market.source_health', 'select') as can`;
  t.true(row!.can);
});
