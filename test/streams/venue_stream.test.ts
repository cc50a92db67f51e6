// The streaming source on two venues' documented stream formats, binance's and okx's, as ccxt pro
// speaks them (dev/venues/streams.ts) beside their REST answers (dev/venues/replay.ts), with
// EXCHANGE_URLS rebasing both, end to end: a venue's price change reaches the live index and an
// SSE and a WebSocket subscriber with the documented value; each (re)connection is resynchronised
// from the venue's REST tickers; a venue that sends garbage (then stalls) is left out at once while
// the other goes on, nothing of the garbage written; a cut stream reconnects and resynchronises.
import test from 'ava';
import { WebSocket } from 'ws';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import type { VenueReplay } from '../../dev/venues/replay.ts';
import type { VenueStreams } from '../../dev/venues/streams.ts';
import { btcStreamVenues, streamReadings } from '../helpers/venue-streams.ts';
import { StreamHolder } from '../../src/sources/stream/index.ts';
import { createLogger } from '../../src/log.ts';
import { sleep, until } from '../../dev/wait.ts';

let db: TestDatabase;
let api: TestApi;
let replay: VenueReplay;
let streams: VenueStreams;
let holder: StreamHolder;

test.before(async () => {
  db = await testDatabase();
  const seeded = await btcStreamVenues(db);
  ({ replay, streams } = seeded);
  const { config } = seeded;
  // the API first: loading its modules holds the event loop for seconds on a busy machine, which a
  // running holder would take for its venues' streams stalling
  api = await testApi(db);
  // its own connection, ended by stop(): none is left open when the database closes
  holder = new StreamHolder(config, process.env.DEBUG_STREAM ? createLogger(config) : undefined).start();
});
test.after.always(async () => {
  await holder?.stop();
  await api?.close();
  streams?.close();
  await replay?.close();
  await db?.close();
});

const btc = () => streamReadings(db).btc();
const venuePrice = (venue: string) => streamReadings(db).venuePrice(venue);
/** whether the venue's stream broke off and has not written since (market.live_venue_streams) */
const cut = async (venue: string) =>
  (await db.sql`select s.clean_since is null as cut from market.live_venue_streams s join market.exchanges e on e.id = s.exchange_id where e.slug = ${venue}`)[0]?.cut as boolean | undefined;
const health = () => streamReadings(db).health();
const restTickers = () => (replay.requests('binance')['/api/v3/ticker/24hr'] ?? 0) + (replay.requests('okx')['/api/v5/market/tickers'] ?? 0);

test.serial('both venues\' streams, resynchronised from REST first, make the live price; a change reaches an SSE and a WebSocket subscriber', async (t) => {
  // the plain mean (no 24h volumes here) of 60000.5 and 60001.5
  await until('the live price of both venues', async () => (await btc()) === '60001');
  // the source's health is recorded when the flush that wrote the price ends (a statement later)
  await until('both venues up in the source health', async () => (await health())?.binance === 'up' && (await health())?.okx === 'up', { timeoutMs: 5_000 });
  t.deepEqual(await health(), { binance: 'up', okx: 'up' });
  t.true((replay.requests('binance')['/api/v3/ticker/24hr'] ?? 0) >= 1, 'binance resynchronised from its REST tickers');
  t.true((replay.requests('okx')['/api/v5/market/tickers'] ?? 0) >= 1, 'okx resynchronised from its REST tickers');

  const key = await api.key({ plan: 'starter' });
  const sse = await fetch(`${api.base}/api/v1/stream/prices?slugs=btc`, { headers: { authorization: `Bearer ${key}` } });
  const reader = sse.body!.pipeThrough(new TextDecoderStream()).getReader();
  let sseText = '';
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) break;
      sseText += value;
    }
  })();
  const ws = new WebSocket(`${api.base.replace('http', 'ws')}/api/v1/ws`, { headers: { authorization: `Bearer ${key}` } });
  const messages: Record<string, any>[] = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data))));
  await new Promise((resolve) => ws.once('open', resolve));
  ws.send(JSON.stringify({ type: 'subscribe', slugs: ['btc'] }));
  await until('the WebSocket snapshot', async () => messages.some((message) => message.type === 'snapshot'), { timeoutMs: 3_000 });
  t.is(messages.find((message) => message.type === 'snapshot')!.data[0].price, '60001');

  streams.setPrice('binance', 'BTC/USDT', '60002.5');
  await until('the SSE price event', async () => /event: price\ndata: \{[^\n]*"price":"60002"/.test(sseText), { timeoutMs: 5_000 });
  await until('the WebSocket price', async () => messages.some((message) => message.type === 'price' && message.data.price === '60002'), { timeoutMs: 5_000 });
  t.like(messages.find((message) => message.type === 'price')!.data, { slug: 'btc', symbol: 'BTC', price: '60002', currency: 'USD' });
  ws.close();
  await reader.cancel();
});

test.serial('a venue sending garbage is left out at once (nothing of it written), the other goes on; restored, it is resynchronised from REST first', async (t) => {
  const rest = restTickers();
  streams.setMode('okx', 'garbage');
  // ccxt drops what does not parse: silence, then the stall after STREAM_MAX_AGE_SECONDS
  await until('okx left out', async () => (await cut('okx')) === true, { timeoutMs: 6_000 });
  // the source's health is recorded when the flush that left it out ends (a statement later)
  await until('okx down in the source health', async () => (await health())?.okx === 'down', { timeoutMs: 3_000 });
  t.is((await health())?.okx, 'down');
  await until('the live price of binance alone', async () => (await btc()) === '60002.5');
  t.is(await venuePrice('binance'), '60002.5');

  streams.setMode('okx', 'normal');
  await until('okx back', async () => (await btc()) === '60002', { timeoutMs: 10_000 });
  t.true(restTickers() > rest, 'okx resynchronised from REST before its stream counted again');
  t.is((await health())?.okx, 'up');
});

test.serial('a cut stream reconnects, and the REST snapshot sets the venue\'s price before its stream resumes', async (t) => {
  const seen = streams.connections('binance');
  const rest = replay.requests('binance')['/api/v3/ticker/24hr'] ?? 0;
  // reconnected but silent: only the REST snapshot can set binance's price
  streams.setMode('binance', 'silent');
  streams.cut('binance');
  const expected = replay.model.ticker(replay.market('binance', 'BTC/USDT')!)!.last;
  let resynced: string | undefined;
  await until('binance resynchronised from REST', async () => {
    const price = await venuePrice('binance');
    if (price && price !== '60002.5') resynced = price;
    return resynced !== undefined;
  }, { timeoutMs: 10_000 });
  t.true(streams.connections('binance') > seen);
  t.true((replay.requests('binance')['/api/v3/ticker/24hr'] ?? 0) > rest);
  t.true(Math.abs(Number(resynced) / expected - 1) < 0.001, `the REST ticker's last price: ${resynced} ≈ ${expected}`);

  streams.setMode('binance', 'normal');
  await until('the stream price again', async () => (await venuePrice('binance')) === '60002.5', { timeoutMs: 10_000 });
  t.pass();
});
