// One venue discipline (issue 43) on the loopback replay: every request of the process to a venue —
// the minute job's and the stream holder's market loads and resynchronisations — passes one gate
// (market.venue_status's back-off and Retry-After, one ccxt instance per venue), and the stream's
// reconnections have their own back-off, recorded apart from the REST health. The gate's clock runs
// 60 times faster than the wall clock (a second of the test is a minute of the schedule), so ten
// minutes of a venue whose stream endpoint answers 404 take ten seconds; the counts asserted are
// those of the real schedule: stream reconnections 2 s doubling to 5 minutes with a jitter of 0.5
// to 1, REST back-off 30 s doubling or the venue's Retry-After.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { withQuery } from '../helpers/query.ts';
import type { VenueReplay } from '../../dev/venues/replay.ts';
import type { VenueStreams } from '../../dev/venues/streams.ts';
import { btcStreamVenues } from '../helpers/venue-streams.ts';
import { ExchangesSource } from '../../src/sources/exchanges/index.ts';
import type { VenueClock } from '../../src/sources/exchanges/gate.ts';
import { StreamHolder } from '../../src/sources/stream/index.ts';
import { sleep, until } from '../../dev/wait.ts';

const SPEED = 60;
const started = Date.now();
const clock: VenueClock = {
  now: () => started + (Date.now() - started) * SPEED,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms) / SPEED).unref()),
};
/** sleeps this many seconds of the gate's clock */
const pass = (seconds: number) => sleep((seconds * 1000) / SPEED);

let [db, replay, streams, holder, source] = [null, null, null, null, null] as unknown as [TestDatabase, VenueReplay, VenueStreams, StreamHolder, ExchangesSource];
/** every request the replay received, REST and stream upgrades, at the gate's time */
const log: { venue: string; path: string; at: number; upgrade: boolean }[] = [];
/** when the holder started, on the gate's clock */
let startedAt = 0;
const venueLog = (venue: string, from = 0, to = Infinity) => log.filter((entry) => entry.venue === venue && entry.at >= from && entry.at < to);
const binanceLog = (from = 0, to = Infinity) => venueLog('binance', from, to);

test.before(async () => {
  db = await testDatabase();
  const seeded = await btcStreamVenues(db);
  ({ replay, streams } = seeded);
  const { config } = seeded;
  const record = (upgrade: boolean) => (req: { url?: string }) => {
    const [, venue = '', ...path] = (req.url ?? '').split('?')[0]!.split('/');
    log.push({ venue, path: '/' + path.join('/'), at: clock.now(), upgrade });
  };
  replay.server.on('request', record(false));
  replay.server.on('upgrade', record(true));
  // the minute job and the holder share the venues' instances, as in a worker
  source = new ExchangesSource({ venues: ['binance', 'okx'], urls: { binance: replay.baseUrl('binance'), okx: replay.baseUrl('okx') }, rateLimitMs: 5, venueClock: clock });
  // binance's stream endpoint answers 404 from the start (as behind a proxy that blocks WebSocket)
  streams.unreachable('binance', true);
  startedAt = clock.now();
  holder = new StreamHolder(config, undefined, undefined, source).start();
});
test.after.always(async () => {
  await holder?.stop();
  streams?.close();
  await replay?.close();
  await db?.close();
});

const status = async () =>
  (await db.sql`select s.failures, s.last_error, (extract(epoch from s.backoff_until) * 1000)::float8 as backoff_until, s.stream_failures,
      s.stream_attempts::int, s.stream_up_since is not null as stream_up, s.stream_last_error
    from market.venue_status s join market.exchanges e on e.id = s.exchange_id where e.slug = 'binance'`)[0]!;
const venuePrice = async (venue: string) =>
  (await db.sql`select p.price::text from market.live_venue_prices p join market.exchanges e on e.id = p.exchange_id where e.slug = ${venue}`)[0]?.price as string | undefined;

/** the most stream connections the real schedule allows in `seconds`: each wait at least half of 2 s doubling, capped at 5 minutes */
function mostAttempts(seconds: number): number {
  let [attempts, elapsed] = [1, 0];
  for (;;) {
    const wait = 0.5 * Math.min(300, 2 * 2 ** (attempts - 1));
    if (elapsed + wait > seconds) return attempts;
    elapsed += wait;
    attempts++;
  }
}

test.serial('a stream endpoint answering 404 for 10 minutes: stream attempts within the back-off schedule, its markets loaded once, no ticker request', async (t) => {
  await until('okx streaming meanwhile', async () => (await venuePrice('okx')) === '60001.5');
  await pass(600 - (clock.now() - startedAt) / 1000);
  const tenMinutes = binanceLog(startedAt, startedAt + 600_000);
  const attempts = tenMinutes.filter((entry) => entry.upgrade).length;
  const rest = tenMinutes.filter((entry) => !entry.upgrade);
  t.log(`stream attempts in 10 minutes: ${attempts}; REST requests: ${rest.map((entry) => entry.path).join(', ')}`);
  t.true(attempts >= 4, `it kept trying: ${attempts} attempts`);
  t.true(attempts <= mostAttempts(600), `${attempts} stream attempts in 10 minutes, at most ${mostAttempts(600)} by the schedule (before: 474 in 12 minutes)`);
  // before: every attempt reloaded the markets and the tickers over REST
  t.deepEqual(rest.map((entry) => entry.path), ['/api/v3/exchangeInfo'], 'one market load, no ticker request');
  const binance = await status();
  t.like(binance, { stream_up: false, failures: 0 }, 'a stream fault is no REST fault');
  t.true((binance.stream_failures as number) >= 4);
  t.regex(binance.stream_last_error as string, /404|Unexpected server response/);
  t.is(await venuePrice('binance'), undefined);
});

test.serial('a 429 with Retry-After 90: no request to the venue, from the holder or the minute job, before the time is up', async (t) => {
  replay.faults.set('binance', { status: 429, retryAfterSeconds: 90 });
  streams.unreachable('binance', false);
  // the stream connects at its next back-off step; its resynchronisation gets the 429
  await until('the 429', () => binanceLog().some((entry) => entry.path === '/api/v3/ticker/24hr'), { timeoutMs: 15_000 });
  const throttledAt = binanceLog().find((entry) => entry.path === '/api/v3/ticker/24hr')!.at;
  await until('the 429 recorded', async () => (await status()).backoff_until !== null);
  const recorded = await status();
  t.true((recorded.backoff_until as number) - throttledAt >= 89_000, `backed off ${((recorded.backoff_until as number) - throttledAt) / 1000} s`);
  t.regex(recorded.last_error as string, /RateLimitExceeded|DDoSProtection/);
  // the minute job within the 90 s: binance skipped, okx read
  const minute = await withQuery(db, (query) => source.run(query));
  t.is(minute.venues['binance']!.state, 'skipped');
  t.is(minute.venues['okx']!.state, 'up');
  replay.faults.clear('binance');
  await until('binance resynchronised after the back-off', async () => (await venuePrice('binance')) !== undefined, { timeoutMs: 15_000 });
  const within = binanceLog(throttledAt + 1, recorded.backoff_until as number).filter((entry) => !entry.upgrade);
  t.deepEqual(within.map((entry) => entry.path), [], 'no REST request within the Retry-After');
  const next = binanceLog(throttledAt + 1).find((entry) => !entry.upgrade)!;
  t.true(next.at >= (recorded.backoff_until as number), `the next request came ${(next.at - throttledAt) / 1000} s after the 429`);
});

test.serial('the minute job\'s faults stay recorded: the holder\'s successful REST and stream reads never reset them', async (t) => {
  await until('binance streaming', async () => (await status()).stream_up, { timeoutMs: 15_000 });
  // the minute job's ticker answer is garbage (one failure more: the 429 before was the venue's too)
  const before = (await status()).failures as number;
  replay.faults.set('binance', { malformed: true, path: '/api/v3/ticker/24hr' });
  const minute = await withQuery(db, (query) => source.run(query));
  t.is(minute.venues['binance']!.state, 'down');
  replay.faults.clear('binance');
  const fault = await status();
  t.is(fault.failures, before + 1);
  t.regex(fault.last_error as string, /BadVenueAnswer/);
  // the holder resynchronises after a cut (once the 30 s back-off has passed) and streams on
  const resyncs = binanceLog().filter((entry) => entry.path === '/api/v3/ticker/24hr').length;
  streams.cut('binance');
  await until('the holder resynchronised from REST', () => binanceLog().filter((entry) => entry.path === '/api/v3/ticker/24hr').length > resyncs, { timeoutMs: 15_000 });
  await until('binance streaming again', async () => (await status()).stream_up, { timeoutMs: 15_000 });
  await pass(30);
  const after = await status();
  t.like(after, { failures: before + 1, last_error: fault.last_error, stream_up: true }, 'REST health as the minute job left it, stream health apart');
  const [health] = await db.sql`select failures, stream_state, stream_failures from market.venue_health where exchange = 'binance'`;
  t.like(health, { failures: before + 1, stream_state: 'up' });
});

test.serial('a venue whose REST is down for 10 minutes, with its stream cut and the minute job running every minute: its requests stay within the REST back-off', async (t) => {
  replay.faults.set('okx', { down: true });
  const from = clock.now();
  streams.cut('okx');
  while (clock.now() < from + 600_000) {
    const minute = await withQuery(db, (query) => source.run(query));
    t.not(minute.venues['okx']!.state, 'up');
    await pass(60);
  }
  const requests = venueLog('okx', from, from + 600_000).filter((entry) => !entry.upgrade);
  // 30 s doubling from the first failure: the gate opens at 0, 30, 90, 210 and 450 s; at each the
  // minute job and the holder's resynchronisation may each send one request (before: 58 in 111 s)
  const openings = 5;
  t.log(`REST requests at ${requests.map((entry) => Math.round((entry.at - from) / 1000)).join(', ')} s`);
  t.true(requests.length >= 3, `it kept probing: ${requests.length} requests`);
  t.true(requests.length <= 2 * openings, `${requests.length} REST requests in 10 minutes of 30 s doubling: ${requests.map((entry) => Math.round((entry.at - from) / 1000)).join(', ')} s`);
  const [okx] = await db.sql`select failures, stream_failures from market.venue_health where exchange = 'okx'`;
  t.true((okx!.failures as number) >= 3);
  replay.faults.clear('okx');
});
