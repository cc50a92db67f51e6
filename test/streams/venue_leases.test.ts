// Holders share the venues (issue 46): over the loopback replay of three venues' streams, one
// holder alone holds them all; three holders (as three processes: each its own connection and its
// own ccxt instances) divide them, each venue held by exactly one, the live index made of all three
// and the source's health showing all three; a holder killed (no release) has its venue taken over
// by another within seconds, and that venue's prices go on.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import type { VenueReplay } from '../../dev/venues/replay.ts';
import type { VenueStreams } from '../../dev/venues/streams.ts';
import { btcStreamVenues, streamReadings } from '../helpers/venue-streams.ts';
import type { Config } from '../../src/config.ts';
import { StreamHolder } from '../../src/sources/stream/index.ts';
import { ExchangesSource, exchangesSettings } from '../../src/sources/exchanges/index.ts';
import { sleep, until } from '../../dev/wait.ts';

const VENUES = ['binance', 'bybit', 'okx'];
let db: TestDatabase;
let replay: VenueReplay;
let streams: VenueStreams;
let config: Config;
const holders: StreamHolder[] = [];

test.before(async () => {
  db = await testDatabase();
  ({ replay, streams, config } = await btcStreamVenues(db, {
    prices: { binance: '60000.5', okx: '60001.5', bybit: '60002.5' },
    env: { STREAM_LEASE_SECONDS: '3' },
  }));
});
test.after.always(async () => {
  for (const holder of holders) await holder.stop().catch(() => {});
  streams?.close();
  await replay?.close();
  await db?.close();
});

/** a holder as its own process has it: its own connection (ended by stop) and its own venue instances */
const holderOf = () => {
  const holder = new StreamHolder(config, undefined, undefined, new ExchangesSource(exchangesSettings(config)));
  holders.push(holder);
  return holder.start();
};

const readings = () => streamReadings(db);
const leases = async () =>
  Object.fromEntries((await db.sql<{ name: string; holder: string }[]>`select name, holder from market.stream_leases where expires_at > now() order by name`).map((row) => [row.name, row.holder]));
/** the venues each running holder streams, none held by two, all of them held */
const divided = (running: StreamHolder[]) => {
  const all = running.flatMap((holder) => holder.held);
  return all.length === VENUES.length && [...all].sort().join() === VENUES.join();
};

test.serial('one holder alone holds every venue (the default), the live price made of all three', async (t) => {
  const a = holderOf();
  await until('the holder holds the three venues', () => a.held.join() === VENUES.join(), { timeoutMs: 20_000 });
  const all = JSON.stringify(Object.fromEntries(VENUES.map((venue) => [venue, a.holder])));
  // read a tick later, once its renewal is in
  await until('the three leases are its own', async () => JSON.stringify(await leases()) === all, { timeoutMs: 5_000 });
  // the plain mean (no 24h volumes here) of the three
  await until('the live price of the three venues', async () => (await readings().btc()) === '60001.5', { timeoutMs: 15_000 });
  await until('the three venues up in the source health', async () => {
    const h = await readings().health();
    return VENUES.every((venue) => h?.[venue] === 'up');
  }, { timeoutMs: 5_000 });
  t.pass();
});

test.serial('three holders divide the venues, each held by exactly one; the live index and the source health cover all three', async (t) => {
  const [a] = holders;
  const b = holderOf();
  const c = holderOf();
  const running = [a!, b, c];
  await until('each holder holds one venue', () => running.every((holder) => holder.held.length === 1) && divided(running), { timeoutMs: 20_000 });
  // and it stays so: sampled over two seconds (ten ticks), no venue held by two and none left out
  for (let i = 0; i < 10; i++) {
    t.true(divided(running), `held: ${running.map((holder) => holder.held.join('+')).join(' / ')}`);
    await sleep(200);
  }
  const byVenue = await leases();
  t.deepEqual(Object.keys(byVenue), VENUES);
  t.is(new Set(Object.values(byVenue)).size, 3, 'three holders');
  for (const holder of running) t.is(byVenue[holder.held[0]!], holder.holder);

  // every venue's stream still reaches the live index, whichever process holds it
  streams.setPrice('binance', 'BTC/USDT', '60003.5');
  streams.setPrice('okx', 'BTC/USDT', '60004.5');
  streams.setPrice('bybit', 'BTC/USDT', '60005.5');
  await until('the live price of the three new prices', async () => (await readings().btc()) === '60004.5', { timeoutMs: 10_000 });
  // each holder records only its own venue, none erases the others'
  for (let i = 0; i < 5; i++) {
    const h = await readings().health();
    t.deepEqual(h, { binance: 'up', bybit: 'up', okx: 'up' });
    await sleep(200);
  }
  const [status] = await db.sql`select status from market.source_health where name = 'stream'`;
  t.is(status!.status, 'ok');
  // three holders refresh the live index, one at a time: a coin's price still changes at most once a second
  const [rapid] = await db.sql`select count(*)::int as n from market.live_price_changes a join market.live_price_changes b
    on b.coin_id = a.coin_id and b.version > a.version and b.at < a.at + interval '1 second'`;
  t.is(rapid!.n, 0);
});

test.serial('a holder killed (no release): its venue is taken over by another within seconds, and its prices go on', async (t) => {
  const victim = holders.find((holder) => holder.held.length === 1)!;
  const venue = victim.held[0]!;
  const others = holders.filter((holder) => holder !== victim);
  // killed: it neither renews nor releases its lease, and its stream stops
  await victim.stop(false);
  const killed = Date.now();
  await until('another holder takes the venue', () => others.some((holder) => holder.held.includes(venue)), { timeoutMs: 15_000 });
  const took = Date.now() - killed;
  t.log(`taken over ${took} ms after the kill`);
  t.true(took < 6_000, `taken over ${took} ms after the kill (lease 3 s)`);
  t.true(divided(others), `held: ${others.map((holder) => holder.held.join('+')).join(' / ')}`);
  const byVenue = await leases();
  t.deepEqual(Object.keys(byVenue), VENUES);
  t.false(Object.values(byVenue).includes(victim.holder));

  streams.setPrice(venue as 'binance', 'BTC/USDT', '60010.5');
  await until(`${venue}'s new price through its new holder`, async () => (await readings().venuePrice(venue)) === '60010.5', { timeoutMs: 10_000 });
  await until(`${venue} up again in the source health`, async () => (await readings().health())?.[venue] === 'up', { timeoutMs: 10_000 });
  const expected = { binance: 60003.5, okx: 60004.5, bybit: 60005.5, [venue]: 60010.5 };
  const mean = (expected.binance! + expected.okx! + expected.bybit!) / 3;
  await until(`the live price with ${venue}'s new price (${mean})`, async () => Math.abs(Number(await readings().btc()) - mean) < 0.001, { timeoutMs: 10_000 });
  t.pass();
});
