// mdapi backfill across the ten venues on the loopback replay (never the network): each venue's
// candle requests one at a time and no faster than its ccxt pacing (shortened here), the estimate
// up front against the requests the replay counted, a Gate range of more than one page with every
// minute once, a backfill stopped half-way then resumed, ending as an uninterrupted one without
// asking a finished page again, and a back-off recorded by another process stopping a venue. The
// reporter's lines off a terminal.
import test from 'ava';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { DAY, MINUTE, REPLAY_VENUES, startVenueReplay, type VenueReplay } from '../../dev/venues/replay.ts';
import { backfill, CANDLE_REQUEST_COST, CANDLES_PER_REQUEST, type BackfillEvent, type BackfillResult } from '../../src/sources/exchanges/backfill.ts';
import { backfillReporter } from '../../src/sources/exchanges/backfill-report.ts';
import { ExchangesSource } from '../../src/sources/exchanges/index.ts';
import { withReservedQuery } from '../../src/db/query.ts';
import type { VenueId } from '../../src/sources/exchanges/venues.ts';

const VENUES = [...REPLAY_VENUES];
/** the clock of the runs: two whole minutes ago */
const T = new Date(Math.floor(Date.now() / MINUTE) * MINUTE - 2 * MINUTE);
/** 2 100 minutes: more than two pages of Gate's 1 000 candles */
const MINUTES = 2100;
const SINCE = new Date(T.getTime() - MINUTES * MINUTE);
/** ccxt's rate limit of every venue in this file (ms per request cost): short, so the file runs fast, and still the bottleneck of a loopback venue */
const RATE_LIMIT_MS = 25;
/** the candle endpoints of the venues' replays */
const CANDLE_PATH = /kline|candle|OHLC/i;
const USD_QUOTED = new Set<VenueId>(['coinbase', 'kraken']);

let replay: VenueReplay;
let uninterrupted: TestDatabase;
/** every candle request the replay received: venue, start and end (ms, performance.now) */
const log: { venue: string; path: string; start: number; end: number }[] = [];
/** called at every candle request the replay receives */
let onCandleRequest: (() => void) | undefined;
/** the run without interruption, and the requests it made per venue */
let first: { result: BackfillResult; events: BackfillEvent[]; requests: Record<string, number>; costs: Record<string, number[]> };

async function prepare(database: TestDatabase) {
  await database.sql`insert into market.coins (slug, symbol, name, type, circulating_supply, source) values
    ('bitcoin', 'BTC', 'Bitcoin', 'coin', 20000000, 'exchanges'), ('ethereum', 'ETH', 'Ethereum', 'coin', 120000000, 'exchanges'),
    ('tether', 'USDT', 'Tether', 'token', 150000000000, 'exchanges')`;
}

/** a source of its own (one ccxt instance per venue, as in one process), recording the cost its limiter charges each candle request */
function source(costs?: Record<string, number[]>) {
  const created = new ExchangesSource({ venues: VENUES, urls: Object.fromEntries(VENUES.map((id) => [id, replay.baseUrl(id)])), rateLimitMs: RATE_LIMIT_MS });
  if (costs) {
    for (const id of VENUES) {
      const exchange = created.venue(id).exchange;
      const throttle = exchange.throttle.bind(exchange);
      const fetch = exchange.fetch.bind(exchange);
      let cost = 0;
      exchange.throttle = (charged: number) => ((cost = charged), throttle(charged));
      exchange.fetch = (url: string, ...rest: unknown[]) => {
        if (CANDLE_PATH.test(new URL(url).pathname)) (costs[id] ??= []).push(cost);
        return (fetch as (...args: unknown[]) => Promise<unknown>)(url, ...rest);
      };
    }
  }
  return created;
}

const candleRequests = () => Object.fromEntries(VENUES.map((id) => [id, Object.entries(replay.requests(id)).filter(([path]) => CANDLE_PATH.test(path)).reduce((sum, [, n]) => sum + n, 0)]));
const minus = (after: Record<string, number>, before: Record<string, number>) => Object.fromEntries(VENUES.map((id) => [id, after[id]! - before[id]!]));

const run = (database: TestDatabase, from: ExchangesSource, events: BackfillEvent[], signal?: AbortSignal, onEvent?: (event: BackfillEvent) => void) =>
  withReservedQuery(database.sql, (query) =>
    backfill(query, from, { since: SINCE, intervals: ['minutely'], now: T, signal, onProgress: (event) => (events.push(event), onEvent?.(event)) }));

test.before(async () => {
  replay = await startVenueReplay({
    coins: [
      { symbol: 'BTC', price: 60000, volumeUsd: 2e9, firstTradeAt: T.getTime() - 30 * DAY },
      { symbol: 'ETH', price: 3000, volumeUsd: 1e9, firstTradeAt: T.getTime() - 30 * DAY },
      { symbol: 'USDT', price: 1, volumeUsd: 5e9, firstTradeAt: T.getTime() - 30 * DAY, volatility: 0.01 },
    ],
    venues: Object.fromEntries(VENUES.map((id) => [id, {
      markets: USD_QUOTED.has(id) ? ['BTC/USD', 'USDT/USD'] : id === 'binance' || id === 'okx' ? ['BTC/USDT', 'ETH/USDT'] : ['BTC/USDT'],
    }])),
  });
  replay.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const [, venue = '', ...rest] = new URL(req.url ?? '/', 'http://replay').pathname.split('/');
    const path = `/${rest.join('/')}`;
    if (!CANDLE_PATH.test(path)) return;
    const entry = { venue, path, start: performance.now(), end: Infinity };
    log.push(entry);
    onCandleRequest?.();
    res.once('close', () => (entry.end = performance.now()));
  });
  uninterrupted = await testDatabase({ optimisedWasm: true });
  await prepare(uninterrupted);
  const events: BackfillEvent[] = [];
  const costs: Record<string, number[]> = {};
  const before = candleRequests();
  const started = Date.now();
  const result = await run(uninterrupted, source(costs), events);
  first = { result, events, requests: minus(candleRequests(), before), costs };
  console.log(`# uninterrupted: ${result.candles} candles, ${result.requests} requests in ${Date.now() - started} ms`);
});
test.after.always(async () => {
  await uninterrupted?.close();
  await replay?.close();
});

test.serial('every venue reads its candles one request at a time, no faster than its rate limit', async (t) => {
  t.deepEqual(Object.values(first.result.venues).map((venue) => venue.state), VENUES.map(() => 'up'), JSON.stringify(first.result.venues));
  for (const id of VENUES) {
    // the estimate counts with the dearest cost ccxt's limiter charges a candle request (OKX's recent candles cost half its history's)
    const costs = first.costs[id] ?? [];
    t.true(costs.length > 0 && costs.every((cost) => cost <= CANDLE_REQUEST_COST[id] + 1e-9) && Math.abs(Math.max(...costs) - CANDLE_REQUEST_COST[id]) < 1e-9, `${id}: ${costs}`);
    const requests = log.filter((entry) => entry.venue === id);
    t.is(requests.length, first.requests[id]!);
    // never two in flight
    for (let i = 1; i < requests.length; i++) t.true(requests[i]!.start >= requests[i - 1]!.end - 1, `${id}: request ${i} sent before ${i - 1} was answered`);
    // ccxt's leaky bucket lets a burst of up to 1 / cost + 1 requests through after a pause, then one every rateLimit × cost
    const cheapest = Math.min(...costs);
    const pacing = RATE_LIMIT_MS * cheapest;
    const burst = Math.floor(1 / cheapest) + 1;
    // arrival times: a request sent late (the event loop busy when its turn came) arrives closer to the next
    const lag = 20;
    for (let i = 0; i < requests.length; i++) {
      for (let j = i + burst; j < requests.length; j++) {
        const span = requests[j]!.start - requests[i]!.start;
        t.true(span >= (j - i - burst + 1) * pacing * 0.95 - lag, `${id}: ${j - i} requests in ${span.toFixed(1)} ms, paced ${pacing} ms`);
      }
    }
    if (requests.length > burst + 1) {
      const perSecond = ((requests.length - burst) * 1000) / (requests.at(-1)!.start - requests[0]!.start);
      t.log(`${id}: ${requests.length} candle requests, ${perSecond.toFixed(1)}/s, limit ${(1000 / pacing).toFixed(1)}/s`);
    }
  }
});

test.serial('the estimate up front: the requests the replay counted, at each venue\'s pacing', (t) => {
  const estimates = first.events.filter((event): event is Extract<BackfillEvent, { type: 'estimate' }> => event.type === 'estimate');
  t.is(estimates.length, 1);
  const [estimate] = estimates;
  let total = 0;
  for (const id of VENUES) {
    const planned = estimate!.venues[id]!;
    // at most one request per market more or less than counted (a page boundary the plan's clock placed differently)
    const markets = first.result.venues[id]!.markets;
    t.true(Math.abs(planned.requests - first.requests[id]!) <= markets, `${id}: estimated ${planned.requests}, counted ${first.requests[id]}`);
    t.is(planned.ms, planned.requests * RATE_LIMIT_MS * CANDLE_REQUEST_COST[id as VenueId]);
    total += planned.requests;
  }
  t.is(estimate!.requests, total);
  t.is(estimate!.ms, Math.max(...Object.values(estimate!.venues).map((venue) => venue.ms)));
  // the slowest venue: Bitget pages 200 minutes a request
  t.is(estimate!.venues.bitget!.requests, Math.ceil(MINUTES / CANDLES_PER_REQUEST.bitget));
  // as it goes: every venue's remaining requests reach 0 with its last page
  for (const id of VENUES) {
    const pages = first.events.filter((event): event is Extract<BackfillEvent, { type: 'page' }> => event.type === 'page' && event.venue === id);
    t.is(pages.at(-1)!.remaining, 0, id);
    t.is(pages.reduce((sum, page) => sum + page.requests, 0), first.requests[id]!);
  }
});

test.serial('a Gate range of more than 1000 one-minute candles stores every minute once', async (t) => {
  const [gate] = await uninterrupted.sql`select count(*)::int as n, count(distinct b.time)::int as minutes, min(b.time) as first, max(b.time) as last,
      (select sum(k.candles)::int from market.venue_backfills k where k.exchange_id = e.id) as written
    from market.venue_bars_1m b join market.exchanges e on e.id = b.exchange_id join market.coins c on c.id = b.coin_id
    where e.slug = 'gate' and c.slug = 'bitcoin' group by e.id`;
  t.like(gate, { n: MINUTES, minutes: MINUTES, first: SINCE, last: new Date(T.getTime() - MINUTE), written: MINUTES });
  t.is(first.requests.gate, Math.ceil(MINUTES / 1000));
});

test.serial('stopped half-way through ten venues and run again: the bars of an uninterrupted run, no finished page asked twice', async (t) => {
  const other = await testDatabase({ optimisedWasm: true });
  try {
    await prepare(other);
    const from = source();
    // stopped once half the requests are made: most venues are in the middle of a range then
    const stop = new AbortController();
    const half = Math.floor(Object.values(first.requests).reduce((sum, n) => sum + n, 0) / 2);
    let made = 0;
    onCandleRequest = () => ++made === half && stop.abort();
    const before = candleRequests();
    const stopped = await run(other, from, [], stop.signal).finally(() => (onCandleRequest = undefined));
    t.true(stopped.candles > 0 && stopped.candles < first.result.candles, `${stopped.candles} of ${first.result.candles} candles before the stop`);
    const [open] = await other.sql`select count(*) filter (where finished_at is null)::int as open from market.venue_backfills`;
    t.true(open!.open > 0, 'the stop left ranges unfinished');
    const resumed = await run(other, from, []);
    t.deepEqual(Object.values(resumed.venues).map((venue) => venue.state), VENUES.map(() => 'up'));
    const requests = minus(candleRequests(), before);
    // the request in flight at the stop was written: a finished page is never asked again (Kraken's
    // one request per market reads its newest 720 minutes, whenever it comes)
    for (const id of VENUES) t.true(requests[id]! <= first.requests[id]! + 1, `${id}: ${requests[id]} requests, ${first.requests[id]} uninterrupted`);
    t.true(Object.values(requests).reduce((sum, n) => sum + n, 0) <= Object.values(first.requests).reduce((sum, n) => sum + n, 0) + 1);
    // Kraken keeps only its newest 720 minutes, counted from when each run asked: its oldest minutes
    // (and the coin bars they price) are the ones the two runs could not both have
    const krakenFrom = new Date(T.getTime() - 690 * MINUTE);
    const krakenTo = new Date(T.getTime() - 730 * MINUTE);
    const venueBars = (database: TestDatabase) => database.sql`
      select e.slug as venue, c.slug as coin, b.quote, b.time, b.open::text, b.high::text, b.low::text, b.close::text, b.volume::text
      from market.venue_bars_1m b join market.exchanges e on e.id = b.exchange_id join market.coins c on c.id = b.coin_id
      where e.slug <> 'kraken' or b.time >= ${krakenFrom}
      order by 1, 2, 3, 4`;
    const coinBars = (database: TestDatabase) => database.sql`
      select c.slug, b.time, b.open::text, b.high::text, b.low::text, b.close::text, b.volume::text
      from market.coin_bars_1m b join market.coins c on c.id = b.coin_id
      where b.time < ${krakenTo} or b.time >= ${krakenFrom}
      order by 1, 2`;
    const [expected, actual] = [await venueBars(uninterrupted), await venueBars(other)];
    t.true(expected.length > 10 * MINUTES);
    t.is(actual.length, expected.length);
    t.deepEqual(actual, expected);
    const [expectedBars, actualBars] = [await coinBars(uninterrupted), await coinBars(other)];
    t.true(expectedBars.length > 2 * (MINUTES - 40));
    t.deepEqual(actualBars, expectedBars);
  } finally {
    await other.close();
  }
});

test.serial('a back-off another process records stops the venue within seconds: no request while it holds', async (t) => {
  const other = await testDatabase({ optimisedWasm: true });
  try {
    await prepare(other);
    // Bitget alone at 700 ms a request: its 11 pages of one range take longer than the gate's re-read of the back-off
    const slow = new ExchangesSource({ venues: ['bitget'], urls: { bitget: replay.baseUrl('bitget') }, rateLimitMs: 700 });
    let made = 0;
    let recordedAt = 0;
    let after = 0;
    onCandleRequest = () => {
      if (recordedAt) after++;
      if (++made !== 2) return;
      recordedAt = performance.now();
      // the minute job of a worker failed on the venue meanwhile: held for a minute
      void other.sql`select market.record_venue_run('bitget', 1, 'RequestTimeout: bitget GET /api/v2/spot/market/candles', 60)`.then(() => undefined);
    };
    const started = performance.now();
    const result = await withReservedQuery(other.sql, (query) =>
      backfill(query, slow, { since: SINCE, intervals: ['minutely'], now: T })).finally(() => (onCandleRequest = undefined));
    t.like(result.venues.bitget, { state: 'skipped' });
    // re-read every 5 s: at 700 ms a request, at most 8 more went out before the venue stopped, and none after
    t.true(after <= 8, `${after} requests after the back-off`);
    t.true(made < Math.ceil(MINUTES / CANDLES_PER_REQUEST.bitget), `${made} requests`);
    t.true(performance.now() - started < 30_000);
    // what it read before is kept: the rerun (after the back-off) goes on from there
    const [range] = await other.sql`select done_until > range_from as progressed, finished_at is null as open from market.venue_backfills`;
    t.like(range, { progressed: true, open: true });
  } finally {
    onCandleRequest = undefined;
    await other.close();
  }
});

test('off a terminal: the estimate first, then every few seconds each venue\'s progress and time left', async (t) => {
  const lines: string[] = [];
  const stream = { isTTY: false, write: (text: string) => lines.push(...text.trimEnd().split('\n')) } as unknown as NodeJS.WriteStream;
  const reporter = backfillReporter(stream, { everyMs: 30 });
  reporter.onProgress({ type: 'plan', venue: 'binance', pacingMs: 600, steps: [{ interval: 'minutely', markets: 2, slots: 4000, requests: 200 }] });
  reporter.onProgress({ type: 'plan', venue: 'kraken', pacingMs: 1200, steps: [{ interval: 'minutely', markets: 2, slots: 1440, requests: 2 }] });
  reporter.onProgress({ type: 'estimate', venues: { binance: { requests: 200, ms: 120_000 }, kraken: { requests: 2, ms: 2400 }, okx: { requests: 0, ms: 0 } }, requests: 202, ms: 120_000 });
  reporter.onProgress({ type: 'page', venue: 'binance', interval: 'minutely', symbol: 'BTC/USDT', slots: 1000, candles: 1000, bars: 1000, requests: 50, remaining: 150 });
  await new Promise((resolve) => setTimeout(resolve, 100));
  reporter.finish({ venues: {}, candles: 1000, bars: 1000, requests: 50, ms: 2000 });
  t.is(lines[0], "backfill: about 202 requests, ~2 minutes at the venues' pacing (binance 200 requests ~2 minutes, kraken 2 requests ~1 minute)");
  // 150 requests at 600 ms each (the pace; this test's requests came faster)
  t.true(lines.includes('binance: 25 % (1000/4000 candles), 150 requests left, ~2 minutes left'), lines.join('\n'));
  t.is(lines.filter((line) => line.startsWith('kraken:')).length > 0, true);
  t.regex(lines.at(-1)!, /^backfill: 1000 bars, 1000 candles, 50 requests/);
});
