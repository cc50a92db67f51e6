// mdapi backfill on the loopback replay of the venues (never the network): daily, hourly and
// minutely bars without gaps or overlaps, a re-run that reads nothing, a venue answering 429
// skipped while the others finish, and the real command killed mid-way then resumed, ending with
// the bars of an uninterrupted run.
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { DAY, MINUTE, startVenueReplay, type VenueReplay } from '../../dev/venues/replay.ts';
import { backfill, type BackfillEvent } from '../../src/sources/exchanges/backfill.ts';
import { ExchangesSource } from '../../src/sources/exchanges/index.ts';
import { withReservedQuery } from '../../src/db/query.ts';
import type { VenueId } from '../../src/sources/exchanges/venues.ts';
import { poll } from '../../dev/wait.ts';

const VENUES: VenueId[] = ['binance', 'coinbase', 'okx'];
/** the clock of the in-process runs: two whole minutes ago, so a later run always has new minutes */
const T = new Date(Math.floor(Date.now() / MINUTE) * MINUTE - 2 * MINUTE);
/** first trading day of bitcoin; ethereum starts ten days later */
const D0 = Math.floor(T.getTime() / DAY) * DAY - 200 * DAY;

let replay: VenueReplay;
let db: TestDatabase;
let source: ExchangesSource;

async function prepare(database: TestDatabase) {
  await database.sql`insert into market.coins (slug, symbol, name, type, circulating_supply, source) values
    ('bitcoin', 'BTC', 'Bitcoin', 'coin', 20000000, 'exchanges'), ('ethereum', 'ETH', 'Ethereum', 'coin', 120000000, 'exchanges'),
    ('tether', 'USDT', 'Tether', 'token', 150000000000, 'exchanges')`;
}

const run = (options: { now?: Date; events?: BackfillEvent[] } = {}) =>
  withReservedQuery(db.sql, (query) =>
    backfill(query, source, { since: new Date(D0), intervals: ['daily', 'hourly', 'minutely'], now: options.now, onProgress: (event) => options.events?.push(event) }),
  );

/** the boundaries market.plan_venue_backfill draws for a clock */
async function boundaries(database: TestDatabase, now: Date) {
  const [row] = await database.sql`select date_trunc('day', ${now}::timestamptz - interval '6 months', 'UTC') as day,
    date_trunc('hour', ${now}::timestamptz - interval '8 days', 'UTC') as hour, date_trunc('minute', ${now}::timestamptz, 'UTC') as minute`;
  return row as { day: Date; hour: Date; minute: Date };
}

test.before(async () => {
  replay = await startVenueReplay({
    coins: [
      { symbol: 'BTC', price: 60000, volumeUsd: 2e9, firstTradeAt: D0 },
      { symbol: 'ETH', price: 3000, volumeUsd: 1e9, firstTradeAt: D0 + 10 * DAY },
      { symbol: 'USDT', price: 1, volumeUsd: 5e9, firstTradeAt: D0, volatility: 0.01 },
    ],
    venues: {
      binance: { markets: ['BTC/USDT', 'ETH/USDT'] },
      coinbase: { markets: ['BTC/USD', 'USDT/USD'] },
      okx: { markets: ['BTC/USDT'] },
    },
  });
  db = await testDatabase({ optimisedWasm: true });
  await prepare(db);
  // the replay answers at once: the venues' own pacing would only slow the file down
  source = new ExchangesSource({ venues: VENUES, urls: Object.fromEntries(VENUES.map((id) => [id, replay.baseUrl(id)])), rateLimitMs: 5 });
});
test.after.always(async () => {
  await db?.close();
  await replay?.close();
});

test.serial('a backfill fills daily bars before 6 months, hourly to 8 days, then minutes: no gap, no overlap', async (t) => {
  const events: BackfillEvent[] = [];
  const result = await run({ now: T, events });
  t.log(`${result.candles} candles, ${result.bars} bars, ${result.requests} requests in ${result.ms} ms`);
  t.deepEqual(Object.values(result.venues).map((venue) => venue.state), VENUES.map(() => 'up'), JSON.stringify(result.venues));
  t.true(result.bars > 0 && result.candles > result.bars / 2);
  const { day, hour, minute } = await boundaries(db, T);
  for (const [slug, first] of [['bitcoin', D0], ['ethereum', D0 + 10 * DAY]] as const) {
    const [raw] = await db.sql`select
        count(*) filter (where b.time < ${day}) as daily,
        count(*) filter (where b.time < ${day} and b.time <> date_trunc('day', b.time, 'UTC')) as daily_unaligned,
        count(*) filter (where b.time >= ${day} and b.time < ${hour}) as hourly,
        count(*) filter (where b.time >= ${day} and b.time < ${hour} and b.time <> date_trunc('hour', b.time, 'UTC')) as hourly_unaligned,
        count(*) filter (where b.time >= ${hour} and b.time < ${minute}) as minutely,
        count(*) filter (where b.time >= ${minute}) as later,
        min(b.time) as first
      from market.coin_bars_1m b join market.coins c on c.id = b.coin_id where c.slug = ${slug}`;
    // one bar per day, hour and minute of each range: none missing, none of another width in between
    t.like(raw, {
      daily: String((day.getTime() - first) / DAY),
      daily_unaligned: '0',
      hourly: String((hour.getTime() - day.getTime()) / 3_600_000),
      hourly_unaligned: '0',
      minutely: String((minute.getTime() - hour.getTime()) / MINUTE),
      later: '0',
    }, slug);
    t.is(raw!.first.getTime(), first);
    // the aggregates have every day and every hour of the hourly range
    const [days] = await db.sql`select count(*) as n, count(*) filter (where volume > 0) as traded from market.coin_bars_1d b
      join market.coins c on c.id = b.coin_id where c.slug = ${slug} and b.time >= ${new Date(first)} and b.time < date_trunc('day', ${T}::timestamptz, 'UTC')`;
    const expectedDays = String((Math.floor(T.getTime() / DAY) * DAY - first) / DAY);
    t.like(days, { n: expectedDays, traded: expectedDays }, slug);
    const [hours] = await db.sql`select count(*) as n from market.coin_bars_1h b join market.coins c on c.id = b.coin_id
      where c.slug = ${slug} and b.time >= ${day} and b.time < ${hour}`;
    t.is(hours!.n, String((hour.getTime() - day.getTime()) / 3_600_000));
  }
  // the daily high is the highest hourly high of that day: widths met nowhere
  const [check] = await db.sql`select d.high::text as day_high, (select max(h.high) from market.coin_bars_1h h
      where h.coin_id = d.coin_id and h.time >= d.time and h.time < d.time + interval '1 day')::text as hours_high
    from market.coin_bars_1d d join market.coins c on c.id = d.coin_id
    where c.slug = 'bitcoin' and d.time = date_trunc('day', ${hour}::timestamptz - interval '3 days', 'UTC')`;
  t.is(check!.day_high, check!.hours_high);
  // every range finished, and the progress lines came venue by venue, interval by interval
  const [open] = await db.sql`select count(*) filter (where finished_at is null) as open, count(*) as ranges from market.venue_backfills`;
  t.like(open, { open: '0', ranges: String(3 * 5) }); // three intervals of five markets
  t.is(events.filter((event) => event.type === 'step').length, 3 * VENUES.length);
  const [state] = await db.sql`select count(*) as n from market.coin_state s join market.coins c on c.id = s.coin_id where c.slug in ('bitcoin', 'ethereum')`;
  t.is(state!.n, '2');
  // every BTC/USDT and ETH/USDT candle was priced at that minute's USDT rate (the quote markets were
  // read first on every venue): rebuilding the index now that every candle is there changes no bar
  const [rebuilt] = await db.sql`select bars from market.build_index_bars(${new Date(D0)}, ${T},
    (select array_agg(id) from market.coins where slug in ('bitcoin', 'ethereum')))`;
  t.is(rebuilt!.bars, 0, 'bars priced before their quote coin\'s candles were read');
});

test.serial('a finished backfill run again reads nothing and writes nothing', async (t) => {
  const before = await db.sql`select * from market.venue_backfills order by exchange_id, symbol, timeframe`;
  const bars = await db.sql`select count(*) as n, sum(close) as sum from market.coin_bars_1m`;
  const result = await run({ now: T });
  t.like(result, { requests: 0, candles: 0, bars: 0 });
  t.deepEqual(await db.sql`select * from market.venue_backfills order by exchange_id, symbol, timeframe`, before);
  t.deepEqual(await db.sql`select count(*) as n, sum(close) as sum from market.coin_bars_1m`, bars);
});

test.serial('a venue answering 429 is backed off and skipped while the others finish', async (t) => {
  replay.faults.set('okx', { status: 429, retryAfterSeconds: 120 });
  try {
    const result = await run();
    t.like(result.venues.okx, { state: 'down' });
    t.regex(result.venues.okx!.error ?? '', /RateLimitExceeded|DDoSProtection/);
    for (const id of ['binance', 'coinbase']) t.true(result.venues[id]!.state === 'up' && result.venues[id]!.candles > 0, id);
    // Retry-After counts from the failure (recorded in the same statement as the back-off), not from
    // this check: the other venues' pages go on after okx failed, 28 s of them on a loaded server
    const [okx] = await db.sql`select state, backoff_until - last_error_at >= interval '120 seconds' as honours_retry_after from market.venue_health where exchange = 'okx'`;
    t.like(okx, { state: 'down', honours_retry_after: true });
    // okx's minutes stay where they were; the others moved on
    const ranges = await db.sql`select e.slug, max(b.range_to) as range_to, bool_and(b.finished_at is not null) as finished from market.venue_backfills b
      join market.exchanges e on e.id = b.exchange_id where b.timeframe = '1m' group by e.slug order by e.slug`;
    const minute = (await boundaries(db, T)).minute.getTime();
    for (const row of ranges) {
      if (row.slug === 'okx') t.true(row.range_to.getTime() > minute && row.finished === false, 'okx planned, not read');
      else t.true(row.range_to.getTime() > minute && row.finished === true, row.slug);
    }
    // backing off: the next run does not even ask
    const requests = replay.requests('okx');
    t.like((await run()).venues.okx, { state: 'skipped' });
    t.deepEqual(replay.requests('okx'), requests);
  } finally {
    replay.faults.clear('okx');
  }
});

function mdapi(database: TestDatabase, args: string[]): { child: ChildProcess; output: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, ['bin/cli.ts', 'backfill', ...args], {
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      EXCHANGES: VENUES.join(','),
      EXCHANGE_URLS: VENUES.map((id) => `${id}=${replay.baseUrl(id)}`).join(','),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, output: new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr }))) };
}

test.serial('mdapi backfill killed mid-way resumes where it stopped and ends with the bars of an uninterrupted run', async (t) => {
  const other = await testDatabase({ optimisedWasm: true });
  try {
    await prepare(other);
    // the minutes since yesterday: the command's later clock reads the same ones
    // every coin the venues list, named
    const args = ['--coins', 'all', '--interval', 'minutely', '--since', new Date(T.getTime() - DAY).toISOString().slice(0, 10)];
    const killed = mdapi(other, args);
    // killed once some progress is durable, long before the end
    const progress = await poll(
      async () => (await other.sql<{ n: number }[]>`select count(*)::int as n from market.venue_backfills where done_until > range_from`)[0]!.n,
      (n) => n > 0,
      { timeoutMs: 30_000, everyMs: 50 },
    );
    t.true(progress > 0, 'progress recorded before the kill');
    killed.child.kill('SIGKILL');
    await killed.output;
    const [left] = await other.sql`select count(*) filter (where finished_at is null)::int as open from market.venue_backfills`;
    t.true(left!.open > 0, 'the kill left ranges unfinished');

    const resumed = await mdapi(other, args).output;
    t.is(resumed.code, 0, resumed.stderr);
    // not a terminal: the estimate first, then plain lines, one per venue and interval step, and the summary
    t.regex(resumed.stdout.split('\n')[0]!, /^backfill: about \d+ requests, ~\d+ minutes? at the venues' pacing \((binance|coinbase|okx) \d+ requests ~\d+ minutes?(, |\))/);
    t.regex(resumed.stdout, /^binance (daily|hourly|minutely): \d+ markets, \d+ candles, \d+ bars, \d+ requests, [\d.]+ s$/m);
    t.regex(resumed.stdout, /^backfill: \d+ bars, \d+ candles, \d+ requests, [\d.]+ s, \d+ bars\/s$/m);
    const [open] = await other.sql`select count(*) filter (where finished_at is null)::int as open from market.venue_backfills`;
    t.is(open!.open, 0);

    // the same bars as the uninterrupted run above over the minutes both read
    const from = new Date(Math.floor(T.getTime() / DAY) * DAY - DAY);
    const bars = (database: TestDatabase) => database.sql`
      select c.slug, b.time, b.open::text, b.high::text, b.low::text, b.close::text, b.volume::text, b.marketcap::text
      from market.coin_bars_1m b join market.coins c on c.id = b.coin_id
      where b.time >= ${from} and b.time < ${T}
      order by c.slug, b.time`;
    const [expected, actual] = [await bars(db), await bars(other)];
    t.is(expected.length, (3 * (T.getTime() - from.getTime())) / MINUTE);
    t.is(actual.length, expected.length);
    t.deepEqual(actual, expected);
  } finally {
    await other.close();
  }
});

test('bad arguments: a clear message and exit code 2', async (t) => {
  for (const [args, message] of [
    [['--interval', 'weekly'], /--interval must be daily, hourly or minutely/],
    [['--since', '2024-13-01'], /--since must be a date \(YYYY-MM-DD\)/],
    [['--coins', 'Bit Coin'], /--coins must be comma-separated coin slugs/],
    [['--coins', 'all,bitcoin'], /--coins must be all or a list of coin slugs, not both/],
    [['--coins', 'bitcoin,nocoin,ethereum,gone'], /unknown coins: nocoin, gone \(coin slugs as in \/coins, or --coins all\)/],
    [['--sinse', '2024-01-01'], /Unknown option '--sinse'/],
  ] as const) {
    const { code, stderr } = await mdapi(db, [...args]).output;
    t.is(code, 2, args.join(' '));
    t.regex(stderr, message);
  }
});
