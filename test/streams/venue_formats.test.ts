// The stream holder on the ticker streams of gate (spot v4 spot.tickers), bitget (v2 public ticker),
// htx (gzip-compressed market.<id>.detail, one subscription per market, the venue's pings
// answered), coinbase (advanced trade ticker_batch), bybit (v5 public spot tickers) and kucoin (/market/ticker after
// its REST token handshake), as ccxt pro speaks them (dev/venues/streams.ts) beside their REST answers
// (dev/venues/replay.ts), with EXCHANGE_URLS rebasing both: each venue's streamed price reaches the
// live price; a cut stream reconnects and is resynchronised from REST. MEXC, configured beside them,
// gets no stream (ccxt pro cannot stream its spot last prices) and is read through REST alone.
import test from 'ava';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import type { VenueReplay } from '../../dev/venues/replay.ts';
import type { StreamVenue, VenueStreams } from '../../dev/venues/streams.ts';
import { btcStreamVenues, streamReadings } from '../helpers/venue-streams.ts';
import { StreamHolder } from '../../src/sources/stream/index.ts';
import { createLogger } from '../../src/log.ts';
import { until } from '../../dev/wait.ts';

const VENUES = ['gate', 'bitget', 'htx', 'coinbase', 'bybit', 'kucoin'] as const satisfies readonly StreamVenue[];
const REST_TICKERS: Record<(typeof VENUES)[number], string> = {
  gate: '/api/v4/spot/tickers', bitget: '/api/v2/spot/market/tickers', htx: '/market/tickers', coinbase: '/api/v3/brokerage/market/products', bybit: '/v5/market/tickers',
  kucoin: '/api/v1/market/allTickers',
};

let [db, replay, streams, holder] = [null, null, null, null] as unknown as [TestDatabase, VenueReplay, VenueStreams, StreamHolder];
let { btc, venuePrice, health } = {} as ReturnType<typeof streamReadings>;

test.before(async () => {
  db = await testDatabase();
  ({ btc, venuePrice, health } = streamReadings(db));
  const seeded = await btcStreamVenues(db, { prices: { gate: '60000.5', bitget: '60001.5', htx: '60002.5', coinbase: '60003.5', bybit: '60004.5', kucoin: '60005.5' }, pingMs: 300 });
  ({ replay, streams } = seeded);
  const config = { ...seeded.config, EXCHANGES: `${VENUES.join(',')},mexc`, EXCHANGE_URLS: `${seeded.config.EXCHANGE_URLS},mexc=${replay.baseUrl('mexc')}` };
  holder = new StreamHolder(config, process.env.DEBUG_STREAM ? createLogger(config) : undefined).start();
});
test.after.always(async () => {
  await holder?.stop();
  streams?.close();
  await replay?.close();
  await db?.close();
});


test.serial('each venue\'s streamed price makes the live price; htx\'s pings are answered; mexc is read through REST alone', async (t) => {
  // the plain mean (no 24h volumes here) of 60000.5 … 60005.5
  await until('the live price of the six venues', async () => (await btc()) === '60003', { timeoutMs: 15_000 });
  await until('the six venues up in the source health', async () => {
    const venues = await health();
    return VENUES.every((venue) => venues?.[venue] === 'up');
  }, { timeoutMs: 5_000 });
  t.deepEqual(await health(), { gate: 'up', bitget: 'up', htx: 'up', coinbase: 'up', bybit: 'up', kucoin: 'up' }, 'no stream for mexc');
  for (const venue of VENUES) t.true((replay.requests(venue)[REST_TICKERS[venue]] ?? 0) >= 1, `${venue} resynchronised from its REST tickers`);
  t.true((replay.requests('kucoin')['/api/v1/bullet-public'] ?? 0) >= 1, 'kucoin\'s stream endpoint from its REST token handshake');
  t.is(streams.attempts('binance'), 0);

  // what only the streams can bring: a new price on each venue
  const next = { gate: '60010.25', bitget: '60011.25', htx: '60012.25', coinbase: '60013.25', bybit: '60014.25', kucoin: '60015.25' };
  for (const venue of VENUES) streams.setPrice(venue, 'BTC/USDT', next[venue]);
  for (const venue of VENUES) await until(`${venue}'s streamed price`, async () => (await venuePrice(venue)) === next[venue], { timeoutMs: 5_000 });
  await until('the live price of the new prices', async () => (await btc()) === '60012.75', { timeoutMs: 5_000 });
  await until('htx\'s pings answered', async () => streams.pongs('htx') >= 2, { timeoutMs: 3_000 });
  t.pass();
});

for (const venue of VENUES) {
  test.serial(`${venue}: a cut stream reconnects, resynchronised from REST before its stream counts again`, async (t) => {
    const seen = streams.connections(venue);
    const rest = replay.requests(venue)[REST_TICKERS[venue]] ?? 0;
    streams.cut(venue);
    await until(`${venue} reconnected and resynchronised`, async () => streams.connections(venue) > seen && (replay.requests(venue)[REST_TICKERS[venue]] ?? 0) > rest, { timeoutMs: 10_000 });
    const price = `6002${VENUES.indexOf(venue)}.75`;
    streams.setPrice(venue, 'BTC/USDT', price);
    await until(`${venue}'s stream price again`, async () => (await venuePrice(venue)) === price, { timeoutMs: 10_000 });
    // the source's health is recorded when the flush that wrote the price ends (a statement later)
    await until(`${venue} up in the source health`, async () => (await health())?.[venue] === 'up', { timeoutMs: 3_000 });
    t.is((await health())?.[venue], 'up');
  });
}
