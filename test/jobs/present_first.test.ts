// The demo market's first start writes the present first: the current hour (every coin's price and
// rank at once), then the last day (the 24-hour figures), then the history behind it, newest first.
// Once the history is written, the bars, the aggregates and the current state are exactly those of
// a history written oldest first (as before the present came first).
import test from 'ava';
import { ensureCatalogue, tick } from '../../src/sources/simulated/index.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { withQuery } from '../helpers/query.ts';

// a short history keeps the test fast: the minute band, the 24-hour mark and pieces behind it
const HISTORY = '2 days';
// one instant for both databases, in the middle of an hour
const NOW = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000 + 37 * 60_000).toISOString();

const databases: TestDatabase[] = [];
test.after.always(() => Promise.all(databases.map((db) => db.close())));

async function freshMarket(): Promise<TestDatabase> {
  const db = await testDatabase({ optimisedWasm: true });
  databases.push(db);
  await withQuery(db, (query) => ensureCatalogue(query));
  await db.sql`update market.data_sources set settings = settings || jsonb_build_object('history', ${HISTORY}::text) where name = 'simulated'`;
  return db;
}

const bitcoin = (db: TestDatabase) =>
  db.sql`select s.price, s.rank, s.change_24h, s.volume_24h from market.coin_state s join market.coins c on c.id = s.coin_id where c.slug = 'bitcoin'`.then(
    ([row]) => row!,
  );
const historySettings = (db: TestDatabase) =>
  db.sql`select settings ->> 'history_from' as "from", settings ->> 'history_until' as "until" from market.data_sources where name = 'simulated'`.then(
    ([row]) => row!,
  );

/** What must not depend on the order the history was written in: every bar, every aggregate, the state. */
async function fingerprint(db: TestDatabase) {
  const digest = async (relation: string) =>
    (await db.sql.unsafe(`select count(*)::int as n, md5(string_agg(b::text, ',' order by b.coin_id, b.time)) as md5 from ${relation} b`))[0];
  const [state] = await db.sql`
    select md5(string_agg((to_jsonb(s) - 'refreshed_at')::text, ',' order by s.coin_id)) as md5 from market.coin_state s`;
  return {
    bars: await digest('market.coin_bars_1m'),
    bars30m: await digest('market.coin_bars_30m'),
    bars1h: await digest('market.coin_bars_1h'),
    bars1d: await digest('market.coin_bars_1d'),
    state: state!.md5 as string,
  };
}

test.serial('the present first (prices and ranks at once, then the 24-hour figures), the history behind it; then all equals a history written oldest first', async (t) => {
  const [present, oldestFirst] = [await freshMarket(), await freshMarket()];
  const [coins] = await present.sql`select count(*)::int as n from market.simulated_coins`;

  const first = await withQuery(present, (query) => tick(query, { now: NOW, history: 'none' }));
  t.true(first.bars > 0 && first.bars <= 60 * coins!.n, `the current hour only: ${first.bars} bars`);
  const now = await bitcoin(present);
  t.truthy(now.price, 'a price at once');
  t.is(now.rank, 1);
  t.is(now.change_24h, null, 'no bar 24 hours old yet');
  const gap = await historySettings(present);
  t.is(new Date(gap.until).toISOString(), new Date(Math.floor(Date.parse(NOW) / 3_600_000) * 3_600_000).toISOString(), 'the history ends where the hour begins');

  const day = await withQuery(present, (query) => tick(query, { now: NOW, history: 'day' }));
  t.true(day.historyPieces >= 4 && day.historyPieces <= 5, `${day.historyPieces} pieces of 6 hours`);
  const dayState = await bitcoin(present);
  t.not(dayState.change_24h, null, 'the 24-hour change once the last day is in');
  t.true(Number(dayState.volume_24h) > Number(now.volume_24h));
  t.truthy((await historySettings(present)).until, 'more history to write');

  const rest = await withQuery(present, (query) => tick(query, { now: NOW }));
  t.true(rest.historyPieces > 0);
  t.deepEqual(await historySettings(present), { from: null, until: null }, 'the history is complete');
  t.is((await present.sql`select count(*)::int as n from app.coin_bar_backfills`)[0]!.n, 0, 'every window refreshed');
  t.is((await withQuery(present, (query) => tick(query, { now: NOW }))).bars, 0, 'nothing written twice');

  // as before: the first tick writes the whole history forwards from its start
  await oldestFirst.sql`update market.data_sources set covered_until = ${gap.from}::timestamptz where name = 'simulated'`;
  await withQuery(oldestFirst, (query) => tick(query, { now: NOW }));

  const [a, b] = [await fingerprint(present), await fingerprint(oldestFirst)];
  t.true(a.bars!.n > 60 * 24 * coins!.n);
  t.deepEqual(a, b);
});
