// The exchange source (MARKET_SOURCE=exchanges) on the loopback replay of the six venues' public
// REST formats: ccxt reads them exactly as it reads the real venues. A virtual clock replays the
// minutes of an hour ago, one run per minute, as the worker's cron does.
import test from 'ava';
import type { JobHelpers } from 'graphile-worker';
import { ExchangesSource, TICK_PHASES } from '../../src/sources/exchanges/index.ts';
import { Metrics } from '../../src/metrics.ts';
import { exchangeTasks } from '../../jobs/fetch_exchanges.ts';
import { runSource } from '../../src/sources/source.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { withQuery } from '../helpers/query.ts';
import { makeScenario, startVenueReplay, MINUTE, REPLAY_VENUES, type VenueReplay } from '../../dev/venues/replay.ts';

let db: TestDatabase;
let replay: VenueReplay;
let source: ExchangesSource;
/** the source's and the replay's clock: whole minutes, starting an hour ago */
let clock = Math.floor(Date.now() / MINUTE) * MINUTE - 60 * MINUTE + 30_000;
const SYMBOLS = ['BTC', 'ETH', 'USDT', 'XRP', 'BNB', 'SOL', 'USDC', 'TRX', 'DOGE', 'ADA', 'LINK', 'NEIRO', 'NEIROETH'];

const run = () => withQuery(db, (query) => runSource(query, source));
const tick = async () => {
  clock += MINUTE;
  return run();
};
const one = async <T = Record<string, unknown>>(query: TemplateStringsArray, ...values: unknown[]) =>
  (await db.sql.unsafe(query.reduce((text, part, i) => text + '$' + i + part), values as never[]))[0] as T;
const venueBars = async (venue: string, time: number) =>
  Number((await one`select count(*) as n from market.venue_bars_1m b join market.exchanges e on e.id = b.exchange_id where e.slug = ${venue} and b.time = ${new Date(time)}`).n);
const lastClosed = () => Math.floor(clock / MINUTE) * MINUTE - MINUTE;

test.before(async () => {
  db = await testDatabase();
  const scenario = makeScenario({ coins: SYMBOLS.length, symbols: SYMBOLS, now: () => clock });
  scenario.venues.binance!.markets.push('NEIRO/USDT');
  scenario.venues.kucoin!.markets.push('NEIRO/USDT');
  scenario.venues.okx!.markets.push('NEIROETH/USDT');
  replay = await startVenueReplay(scenario);
  source = new ExchangesSource({
    venues: [...REPLAY_VENUES],
    urls: Object.fromEntries(REPLAY_VENUES.map((venue) => [venue, replay.baseUrl(venue)])),
    timeoutMs: 2_000,
    marketsEveryMs: 0,
    clock: () => clock,
    // the replay answers at once: the venues' own pacing (kraken 1 s a request) would only slow the file down
    rateLimitMs: 5,
  });
});
test.after.always(async () => {
  await replay?.close();
  await db?.close();
});

test.serial('a normal minute across six venues: markets, tickers, candles, one index bar per coin and minute', async (t) => {
  const result = await run();
  t.deepEqual(Object.values(result.venues).map((venue) => venue.state), REPLAY_VENUES.map(() => 'up'));
  t.true(result.requests >= REPLAY_VENUES.length * 3, `${result.requests} requests`);
  t.true(result.bars > 0);
  // every venue's tickers are in, in USD
  const tickers = await db.sql`select e.slug, count(*)::int as n, min(t.price_usd) > 0 as priced from market.tickers t
    join market.exchanges e on e.id = t.exchange_id group by e.slug order by e.slug`;
  t.deepEqual(tickers.map((row) => row.slug), [...REPLAY_VENUES].sort());
  t.true(tickers.every((row) => row.priced && (row.n as number) > 0));
  // Kraken's XXBTZUSD is BTC/USD of the catalogue's bitcoin
  const kraken = await one`select m.exchange_symbol, c.slug from market.venue_markets m join market.exchanges e on e.id = m.exchange_id
    join market.coins c on c.id = m.base_coin_id where e.slug = 'kraken' and m.symbol = 'BTC/USD'`;
  t.like(kraken, { slug: 'bitcoin' });
  // the newest closed minute: bitcoin's bar has the extremes of the venues' candles (USD and stablecoin quotes)
  const minute = lastClosed();
  const btc = await one<{ high: string; low: string; close: string; n: number }>`
    select b.high::text, b.low::text, b.close::text, (select count(*)::int from market.venue_bars_1m v where v.coin_id = b.coin_id and v.time = b.time) as n
    from market.coin_bars_1m b join market.coins c on c.id = b.coin_id where c.slug = 'bitcoin' and b.time = ${new Date(minute)}`;
  t.true(btc.n >= 6, `${btc.n} venue candles`);
  t.true(Number(btc.low) <= Number(btc.close) && Number(btc.close) <= Number(btc.high));
  const [coin] = await db.sql`select s.price::text, c.status from market.coin_state s join market.coins c on c.id = s.coin_id where c.slug = 'bitcoin'`;
  t.is(coin!.price, btc.close);
  t.is(coin!.status, 'active');
  // venue state from the real inputs
  const venues = await db.sql`select e.slug, s.rank, s.trust_score from market.exchange_state s join market.exchanges e on e.id = s.exchange_id where s.rank is not null`;
  t.is(venues.length, REPLAY_VENUES.length);
  t.true(venues.every((venue) => typeof venue.trust_score === 'number'));
  // health: the source and every venue up
  t.like(await one`select status, demo, venues from market.source_health where name = 'exchanges'`, {
    status: 'ok', demo: false, venues: Object.fromEntries(REPLAY_VENUES.map((venue) => [venue, 'up'])),
  });
});

test.serial('one ticker, several assets: per-venue overrides map it, and an override can say "not ours"', async (t) => {
  await db.sql`insert into market.venue_symbol_overrides (exchange, symbol, coin_id) values ('kucoin', 'NEIRO', null)`;
  await tick();
  const coin = async (venue: string, symbol: string) =>
    (await one<{ coin: string | null }>`select c.slug as coin from market.venue_markets m join market.exchanges e on e.id = m.exchange_id
      left join market.coins c on c.id = m.base_coin_id where e.slug = ${venue} and m.symbol = ${symbol}`).coin;
  // two catalogue coins are NEIRO: binance's override names one, elsewhere the better-ranked one wins…
  t.is(await coin('binance', 'NEIRO/USDT'), 'first-neiro-on-ethereum');
  if (await one`select 1 as x from market.venue_markets m join market.exchanges e on e.id = m.exchange_id where e.slug = 'bybit' and m.symbol = 'NEIRO/USDT'`) {
    t.is(await coin('bybit', 'NEIRO/USDT'), 'first-neiro-on-ethereum');
  }
  // …okx's NEIROETH is the other one, kucoin's NEIRO is no coin (the override says so, and no coin is
  // discovered for it), and binance's NEIROETH, known to no catalogue entry, is a coin of its own named by the venue
  t.is(await coin('okx', 'NEIROETH/USDT'), 'neiro-eth');
  t.is(await coin('kucoin', 'NEIRO/USDT'), null);
  t.is(await coin('binance', 'NEIROETH/USDT'), 'neiroeth-binance');
  // unmapped markets get no ticker and no candles
  t.is(Number((await one`select count(*) as n from market.tickers t join market.exchanges e on e.id = t.exchange_id where e.slug = 'kucoin' and t.exchange_symbol like 'NEIRO-%'`).n), 0);
});

test.serial('a venue far from the others is left out of the index and flagged', async (t) => {
  // kraken's market whose candles stand for bitcoin there
  const { symbol, quote } = await one<{ symbol: string; quote: string }>`select m.symbol, m.quote from market.venue_candle_markets('kraken') c
    join market.venue_markets m on m.symbol = c.symbol join market.exchanges e on e.id = m.exchange_id and e.slug = 'kraken'
    join market.coins k on k.id = c.coin_id where k.slug = 'bitcoin'`;
  replay.market('kraken', symbol)!.bias = 0.25;
  await tick();
  const minute = lastClosed();
  const flagged = await db.sql`select e.slug, x.quote, x.reason from market.price_index_exclusions x join market.exchanges e on e.id = x.exchange_id
    join market.coins c on c.id = x.coin_id where c.slug = 'bitcoin' and x.time = ${new Date(minute)}`;
  t.deepEqual(flagged.map((row) => [row.slug, row.quote, row.reason]), [['kraken', quote, 'outlier']]);
  const bar = await one<{ high: string }>`select b.high::text from market.coin_bars_1m b join market.coins c on c.id = b.coin_id where c.slug = 'bitcoin' and b.time = ${new Date(minute)}`;
  const kraken = await one<{ high: string }>`select v.high::text from market.venue_bars_1m v join market.exchanges e on e.id = v.exchange_id
    join market.coins c on c.id = v.coin_id where c.slug = 'bitcoin' and e.slug = 'kraken' and v.quote = ${quote} and v.time = ${new Date(minute)}`;
  t.true(Number(bar.high) < Number(kraken.high), 'kraken\'s high did not get in');
  replay.market('kraken', symbol)!.bias = 0;
});

test.serial('429 and 418 back the venue off (Retry-After honoured) while the others go on; the next run skips it', async (t) => {
  replay.faults.set('binance', { status: 418, retryAfterSeconds: 120 });
  replay.faults.set('bybit', { status: 429, retryAfterSeconds: 5 });
  const result = await tick();
  t.like(result.venues, { binance: { state: 'down' }, bybit: { state: 'down' }, okx: { state: 'up' }, coinbase: { state: 'up' } });
  const binance = await one<{ wait: number; failures: number; last_error: string }>`
    select extract(epoch from backoff_until - last_error_at)::int as wait, failures, last_error from market.venue_status s join market.exchanges e on e.id = s.exchange_id where e.slug = 'binance'`;
  t.is(binance.wait, 120, 'binance waits its Retry-After');
  t.regex(binance.last_error, /DDoSProtection/);
  const bybit = await one<{ wait: number }>`select extract(epoch from backoff_until - last_error_at)::int as wait from market.venue_status s join market.exchanges e on e.id = s.exchange_id where e.slug = 'bybit'`;
  t.is(bybit.wait, 30, 'bybit waits the first back-off step, longer than its Retry-After of 5 s');
  // the minute was built from the others
  t.true((await venueBars('okx', lastClosed())) > 0);
  t.is(await venueBars('binance', lastClosed()), 0);
  const requests = Object.values(replay.requests('binance')).reduce((sum, n) => sum + n, 0);
  const skipped = await tick();
  t.is(skipped.venues.binance!.state, 'skipped');
  t.is(Object.values(replay.requests('binance')).reduce((sum, n) => sum + n, 0), requests, 'no request to a venue backing off');
  t.like(await one`select venues from market.source_health where name = 'exchanges'`, { venues: { binance: 'down', okx: 'up' } });
});

test.serial('malformed and truncated answers write nothing of that venue; the venue is backed off', async (t) => {
  replay.faults.set('okx', { malformed: true });
  replay.faults.set('kucoin', { truncated: true });
  const before = Number((await one`select count(*) as n from market.venue_markets m join market.exchanges e on e.id = m.exchange_id where e.slug = 'okx' and m.active`).n);
  const result = await tick();
  t.like(result.venues, { okx: { state: 'down' }, kucoin: { state: 'down' }, coinbase: { state: 'up' } });
  t.regex(result.venues.okx!.error!, /BadVenueAnswer/);
  t.is(await venueBars('okx', lastClosed()), 0);
  t.is(await venueBars('kucoin', lastClosed()), 0);
  // an unreadable market list delisted nothing
  t.is(Number((await one`select count(*) as n from market.venue_markets m join market.exchanges e on e.id = m.exchange_id where e.slug = 'okx' and m.active`).n), before);
  t.true((await venueBars('coinbase', lastClosed())) > 0);
});

test.serial('a 200 cut at 55 %, candles and tickers of Binance and Kraken: BadVenueAnswer naming venue and endpoint, backed off, recorded, nothing of it written', async (t) => {
  const cases = [
    { venue: 'binance', path: '/api/v3/klines', writes: 'candles' },
    { venue: 'kraken', path: '/0/public/OHLC', writes: 'candles' },
    { venue: 'binance', path: '/api/v3/ticker/24hr', writes: 'tickers' },
    { venue: 'kraken', path: '/0/public/Ticker', writes: 'tickers' },
  ] as const;
  const tickersAt = async (venue: string) =>
    (await one<{ at: Date }>`select max(t.updated_at) as at from market.tickers t join market.exchanges e on e.id = t.exchange_id where e.slug = ${venue}`).at.getTime();
  for (const { venue, path, writes } of cases) {
    replay.faults.clear();
    await db.sql`update market.venue_status set backoff_until = null, failures = 0`;
    replay.faults.set(venue, { cutAt: 0.55, path });
    const tickersBefore = await tickersAt(venue);
    const asked = replay.requests(venue)[path] ?? 0;
    const result = await tick();
    const label = `${venue} ${path}`;
    t.true((replay.requests(venue)[path] ?? 0) > asked, `${label} was asked`);
    t.is(result.venues[venue]!.state, 'down', label);
    // the replay serves each venue under a path prefix of its own
    t.true(result.venues[venue]!.error!.startsWith(`BadVenueAnswer: ${venue} /${venue}${path}: JSON cut short`), result.venues[venue]!.error);
    const health = await one<{ state: string; failures: number; last_error: string; backing_off: boolean }>`
      select state, failures, last_error, backoff_until > now() + interval '10 seconds' as backing_off from market.venue_health where exchange = ${venue}`;
    t.like(health, { state: 'down', failures: 1, backing_off: true, last_error: result.venues[venue]!.error }, label);
    // nothing of the cut answer: no candle of the venue for the minute, its tickers as they were
    t.is(await venueBars(venue, lastClosed()), 0, label);
    if (writes === 'tickers') t.is(await tickersAt(venue), tickersBefore, `${label}: tickers untouched`);
    // the others built the minute
    t.true((await venueBars('coinbase', lastClosed())) > 0, label);
    t.is(result.venues.coinbase!.state, 'up');
  }
  replay.faults.clear();
  await db.sql`update market.venue_status set backoff_until = null`;
});

test.serial('every venue down: the run ends, and the source is failing with each venue down; one back makes it degraded', async (t) => {
  for (const venue of REPLAY_VENUES) replay.faults.set(venue, { down: true });
  await tick();
  t.like(await one`select status, venues from market.source_health where name = 'exchanges'`, {
    status: 'failing', venues: Object.fromEntries(REPLAY_VENUES.map((venue) => [venue, 'down'])),
  });
  replay.faults.clear('coinbase');
  await db.sql`update market.venue_status set backoff_until = null`;
  await tick();
  t.like(await one`select status, venues from market.source_health where name = 'exchanges'`, { status: 'degraded', venues: { coinbase: 'up', okx: 'down' } });
  replay.faults.clear();
  await db.sql`update market.venue_status set backoff_until = null`;
});

test.serial('venues down for several minutes catch up when back: the missed minutes are rebuilt with them', async (t) => {
  const downSince = lastClosed();
  replay.faults.set('okx', { down: true });
  for (let i = 0; i < 3; i++) {
    await db.sql`update market.venue_status set backoff_until = null`; // the back-off expiring, three minutes later
    await tick();
  }
  t.is(await venueBars('okx', lastClosed()), 0);
  replay.faults.clear();
  await db.sql`update market.venue_status set backoff_until = null`;
  const back = await tick();
  t.true(Object.values(back.venues).every((venue) => venue.state === 'up'));
  for (let minute = downSince; minute <= lastClosed(); minute += MINUTE) {
    t.true((await venueBars('okx', minute)) > 0, `okx candles at ${new Date(minute).toISOString()}`);
    t.true((await venueBars('binance', minute)) > 0, `binance candles at ${new Date(minute).toISOString()}`);
  }
  // no minute of bitcoin is missing from the first run on
  const gaps = await one<{ n: number }>`
    select count(*)::int as n from generate_series(${new Date(downSince)}::timestamptz, ${new Date(lastClosed())}::timestamptz, interval '1 minute') m
    where not exists (select from market.coin_bars_1m b join market.coins c on c.id = b.coin_id where c.slug = 'bitcoin' and b.time = m)`;
  t.is(gaps.n, 0);
});

test.serial('a delisting everywhere makes the coin delisted; a new listing makes it active again', async (t) => {
  const markets = await db.sql`select e.slug, m.symbol from market.venue_markets m join market.exchanges e on e.id = m.exchange_id
    join market.coins c on c.id = m.base_coin_id where c.slug = 'chainlink' and m.active and m.instrument = 'spot'`;
  t.true(markets.length > 0);
  for (const market of markets) replay.delist(market.slug as never, market.symbol as string);
  await tick();
  t.like(await one`select status from market.coins where slug = 'chainlink'`, { status: 'delisted' });
  t.is(Number((await one`select count(*) as n from market.tickers t join market.coins c on c.id = t.base_coin_id where c.slug = 'chainlink'`).n), 0);
  replay.list('coinbase', 'LINK/USD');
  const result = await tick();
  t.is(result.venues.coinbase!.markets!.listed, 1);
  t.like(await one`select status from market.coins where slug = 'chainlink'`, { status: 'active' });
  t.like(await one`select m.active, m.delisted_at from market.venue_markets m join market.exchanges e on e.id = m.exchange_id
    where e.slug = 'coinbase' and m.symbol = 'LINK/USD'`, { active: true, delisted_at: null });
});

test.serial('a tick times each of its phases, and the minute job logs them and observes them in the metrics', async (t) => {
  const result = await tick();
  t.deepEqual(Object.keys(result.phases), [...TICK_PHASES]);
  for (const phase of TICK_PHASES) t.true(Number.isFinite(result.phases[phase]) && result.phases[phase] >= 0, `${phase}: ${result.phases[phase]}`);
  // a minute with candles on every venue: each phase that writes them did work
  for (const phase of ['fetch', 'bars', 'index', 'coin_state'] as const) t.true(result.phases[phase] > 0, `${phase}: ${result.phases[phase]}`);

  // the minute job (fetch_exchanges) on one venue of the replay, as the worker runs it
  const config = db.config({ MARKET_SOURCE: 'exchanges', EXCHANGES: 'binance', EXCHANGE_URLS: `binance=${replay.baseUrl('binance')}`, EXCHANGE_BUDGET_MS: '3000' });
  const metrics = new Metrics(config);
  const lines: { message: string; meta?: Record<string, unknown> }[] = [];
  const reserved = await db.sql.reserve();
  const helpers = {
    withPgClient: (work: (client: unknown) => Promise<unknown>) => work(reserved),
    logger: { info: (message: string, meta?: Record<string, unknown>) => lines.push({ message, meta }) },
    abortSignal: undefined,
  } as unknown as JobHelpers;
  try {
    await exchangeTasks(config, metrics).fetch_exchanges({}, helpers);
  } finally {
    reserved.release();
  }
  t.is(lines.length, 1);
  t.regex(lines[0]!.message, /fetch \d+ ms, bars \d+ ms, index \d+ ms, aggregates \d+ ms, coin_state \d+ ms, alarms \d+ ms, venue_state \d+ ms/);
  t.deepEqual(Object.keys(lines[0]!.meta!.phasesMs as object), [...TICK_PHASES]);
  const exposition = await metrics.registry.metrics();
  for (const phase of TICK_PHASES) t.true(exposition.includes(`mdapi_exchange_tick_phase_seconds_count{phase="${phase}"} 1`), phase);
});
