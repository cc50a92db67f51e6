// market.take_stream_venues (issue 46): holders divide the venues into fair shares, each venue held
// by exactly one; a newcomer gets its share from those above it, a dead holder's venues go to the
// others once its leases expire, a released holder's at once; holders of other venues (the demo
// market's `simulated`) do not shrink the share. Concurrent holders never hold a venue twice.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
const VENUES = ['binance', 'bitget', 'bybit', 'coinbase', 'gate', 'htx', 'kraken', 'kucoin', 'okx'];

test.before(async () => {
  db = await testDatabase();
});
test.after.always(async () => {
  await db?.close();
});

const take = async (holder: string, venues = VENUES) =>
  (await db.sql<{ held: string[] }[]>`select market.take_stream_venues(${holder}, ${venues}::text[], 30) as held`)[0]!.held;
/** venue → holder of every live lease */
const leases = async () =>
  Object.fromEntries((await db.sql<{ name: string; holder: string }[]>`select name, holder from market.stream_leases where expires_at > now()`).map((row) => [row.name, row.holder]));
const counts = async () => {
  const byHolder: Record<string, number> = {};
  for (const holder of Object.values(await leases())) byHolder[holder] = (byHolder[holder] ?? 0) + 1;
  return byHolder;
};

test.serial('one holder takes every venue; a second and a third get their share from it; every venue held by one', async (t) => {
  t.deepEqual(await take('a'), VENUES);
  // b counts from its first call, but every venue is a's until a sheds
  t.deepEqual(await take('b'), []);
  t.is((await take('a')).length, 5, 'nine venues over two holders: 5');
  t.is((await take('b')).length, 4);
  t.deepEqual(Object.keys(await leases()).sort(), VENUES);

  t.deepEqual(await take('c'), []);
  await take('a');
  await take('b');
  t.is((await take('c')).length, 3);
  t.deepEqual(await counts(), { a: 3, b: 3, c: 3 });
  t.deepEqual(Object.keys(await leases()).sort(), VENUES);
  // steady: renewing changes nothing
  const before = await leases();
  for (const holder of ['a', 'b', 'c']) await take(holder);
  t.deepEqual(await leases(), before);
});

test.serial('a dead holder\'s venues go to the others once its leases expire; a released holder\'s at once', async (t) => {
  const dead = Object.entries(await leases()).filter(([, holder]) => holder === 'c').map(([venue]) => venue);
  // c stops renewing: still its venues until they expire
  await take('a');
  t.deepEqual(Object.entries(await leases()).filter(([, holder]) => holder === 'c').map(([venue]) => venue), dead);
  await db.sql`update market.stream_leases set expires_at = now() - interval '1 second' where holder = 'c'`;
  await db.sql`update market.stream_holders set expires_at = now() - interval '1 second' where holder = 'c'`;
  await take('a');
  await take('b');
  t.deepEqual(await counts(), { a: 5, b: 4 });
  t.deepEqual(Object.keys(await leases()).sort(), VENUES);
  t.is((await db.sql`select count(*)::int as n from market.stream_holders where holder = 'c'`)[0]!.n, 0, 'its heartbeat cleared');

  await db.sql`select market.release_stream_venues('a')`;
  t.deepEqual(await take('b'), VENUES, 'alone again: b holds every venue');
});

test.serial('a holder of other venues (the demo market) does not shrink the share; a venue no longer streamed is given up', async (t) => {
  t.deepEqual(await take('demo', ['simulated']), ['simulated']);
  t.deepEqual(await take('b'), VENUES);
  t.deepEqual(await take('b', VENUES.slice(1)), VENUES.slice(1));
  t.false(VENUES[0]! in (await leases()));
  await db.sql`select market.release_stream_venues('b')`;
  await db.sql`select market.release_stream_venues('demo')`;
});

test.serial('holders taking at once never hold a venue twice, and together hold them all', async (t) => {
  const holders = ['p', 'q', 'r', 's'];
  for (let round = 0; round < 6; round++) {
    const held = await Promise.all(holders.map((holder) => take(holder)));
    const all = held.flat();
    t.is(new Set(all).size, all.length, `round ${round}: ${held.map((venues) => venues.join('+')).join(' / ')}`);
  }
  t.deepEqual(Object.keys(await leases()).sort(), VENUES);
  const shares = Object.values(await counts()).sort();
  t.true(shares.every((n) => n <= 3), `nine venues over four holders, at most 3 each: ${shares.join(', ')}`);
});
