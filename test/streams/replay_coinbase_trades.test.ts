// End to end on `make venues-replay`'s streams (modelPrices): the stream holder builds a Coinbase
// market's minutes from the trades the replay streams, and writes them as its REST candles, path 'stream'.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { num, type VenueReplay } from '../../dev/venues/replay.ts';
import type { VenueStreams } from '../../dev/venues/streams.ts';
import { closeStreamVenues, coinStreamVenues } from '../helpers/venue-streams.ts';
import { StreamHolder } from '../../src/sources/stream/index.ts';
import { ExchangesSource, exchangesSettings } from '../../src/sources/exchanges/index.ts';
import { until } from '../../dev/wait.ts';

const MINUTE = 60_000;
const M = Math.floor(Date.now() / MINUTE) * MINUTE - 30 * MINUTE;
let now = M + 5_000;
let [db, replay, streams, holder] = [null, null, null, null] as unknown as [TestDatabase, VenueReplay, VenueStreams, StreamHolder];

test.before(async () => {
  db = await testDatabase();
  const seeded = await coinStreamVenues(db, { markets: { coinbase: 2 }, now: () => now, storedUntil: M });
  ({ replay, streams } = seeded);
  holder = new StreamHolder(seeded.config, undefined, undefined, new ExchangesSource({ ...exchangesSettings(seeded.config), clock: () => now })).start();
  await until('coinbase\'s markets subscribed to their trades', async () => new Set(streams.subscriptions('coinbase', 'trades')).size === 2, { timeoutMs: 30_000 });
});
test.after.always(() => closeStreamVenues({ holder, streams, replay, db }));

test('coinbase\'s minute built from the replay\'s streamed trades: its REST candle, written from the stream', async (t) => {
  // M+1 from its start, then M+2 begins, then M+2's first trade (M+1's last trades had their time)
  for (const to of [M + MINUTE + 1_000, M + MINUTE + 40_000, M + 2 * MINUTE + 500, M + 2 * MINUTE + 4_000]) {
    now = to;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  const bars = async () => db.sql`select c.symbol, b.open::text, b.high::text, b.low::text, b.close::text, b.volume::text, b.path
    from market.venue_bars_1m b join market.coins c on c.id = b.coin_id join market.exchanges e on e.id = b.exchange_id
    where e.slug = 'coinbase' and b.time = ${new Date(M + MINUTE).toISOString()} order by c.symbol`;
  await until('coinbase\'s M+1 of both markets', async () => (await bars()).length === 2, { timeoutMs: 15_000 });
  for (const bar of await bars()) {
    const rest = replay.model.minute(replay.market('coinbase', `${bar.symbol}/USDT`)!, M + MINUTE)!;
    t.deepEqual([bar.open, bar.high, bar.low, bar.close, bar.volume].map(Number), [rest.o, rest.h, rest.l, rest.c, rest.v].map((value) => Number(num(value))), bar.symbol);
    t.is(bar.path, 'stream', bar.symbol);
  }
});
