// Publication latency of the live index price (issue 43): between the holder's ticks, a coin whose
// inputs changed is published as soon as its last publication is a second old, not at the next
// tick. The tick is made slow here (5 s) so only the publication between ticks can be fast; the
// assertions compare timestamps (when the venue's price was set, when the live price was computed).
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import type { VenueReplay } from '../../dev/venues/replay.ts';
import type { VenueStreams } from '../../dev/venues/streams.ts';
import type { Config } from '../../src/config.ts';
import { btcStreamVenues } from '../helpers/venue-streams.ts';
import { StreamHolder } from '../../src/sources/stream/index.ts';
import { sleep, until } from '../../dev/wait.ts';

let db: TestDatabase;
let replay: VenueReplay;
let streams: VenueStreams;
let holder: StreamHolder;

test.before(async () => {
  db = await testDatabase();
  let config: Config;
  ({ replay, streams, config } = await btcStreamVenues(db, {
    prices: { binance: '60000' }, intervalMs: 50,
    env: { STREAM_INTERVAL_MS: '5000', STREAM_PUBLISH_MS: '50', STREAM_LEASE_SECONDS: '30', STREAM_MAX_AGE_SECONDS: '30', STREAM_READMIT_SECONDS: '10' },
  }));
  holder = new StreamHolder(config).start();
});
test.after.always(async () => {
  await holder?.stop();
  streams?.close();
  await replay?.close();
  await db?.close();
});

const published = async () =>
  (await db.sql<{ price: string; at: Date }[]>`select l.price::text, l.at from market.live_prices l join market.coins c on c.id = l.coin_id where c.slug = 'btc'`)[0];
const publishedAt = (price: string) => until(`the live price ${price}`, async () => {
  const row = await published();
  return row?.price === price ? row.at.getTime() : undefined;
});

test.serial('a change is published well within a second once the last publication is a second old; sooner, at that second', async (t) => {
  await publishedAt('60000');
  for (const price of ['60010', '60020', '60030']) {
    // the last publication over a second ago
    await sleep(1_200);
    const set = Date.now();
    streams.setPrice('binance', 'BTC/USDT', price);
    const at = await publishedAt(price);
    t.true(at - set < 500, `${price}: published ${at - set} ms after the venue's change (ticks are 5 s apart)`);
  }
  // a change 200 ms after a publication waits for that publication to be a second old, not for the next tick
  const previous = await publishedAt('60030');
  await sleep(Math.max(0, previous + 200 - Date.now()));
  streams.setPrice('binance', 'BTC/USDT', '60040');
  const at = await publishedAt('60040');
  t.true(at - previous >= 1_000 && at - previous < 1_500, `published ${at - previous} ms after the previous one`);
});
