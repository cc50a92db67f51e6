// `mdapi backfill`: deep history from the venues through ccxt, written through the same path as
// the live minute (venue candles → price index → aggregates → coin and venue state). Per venue, in
// parallel, one request at a time behind ccxt's own rate limiter: the ranges still to read come
// from market.plan_venue_backfill (daily before 6 months ago, hourly to 8 days ago, 1-minute since;
// never overlapping), each is walked by explicit pages of the venue's candles per request (not
// ccxt's pagination, which loses Gate's candle between two pages), and written a few requests at a
// time with its progress (market.record_venue_backfill), so a killed backfill resumes at the page
// it stopped on and a finished one re-run reads only what is new. A failing venue is backed off
// (market.record_venue_run) while the others go on; a back-off another process records stops it too.
import type { OHLCV } from 'ccxt';
import { type Query, serialized } from '../../db/query.ts';
import { completeCoinBarBackfills } from '../aggregates.ts';
import { ensureVenueCatalogue } from './catalogue.ts';
import { ensureCoinCatalogue } from '../catalogue/index.ts';
import { ensureVenueMarkets, type ExchangesSource, type LiveVenue } from './index.ts';
import { runOnVenue, venuesBackingOff } from './gate.ts';
import { candleRows, reading, VenueBackingOff } from './answers.ts';
import type { VenueId } from './venues.ts';

export const BACKFILL_INTERVALS = ['daily', 'hourly', 'minutely'] as const;
export type BackfillInterval = (typeof BACKFILL_INTERVALS)[number];
type Timeframe = '1d' | '1h' | '1m';

const TIMEFRAME: Record<BackfillInterval, Timeframe> = { daily: '1d', hourly: '1h', minutely: '1m' };
const INTERVAL: Record<Timeframe, BackfillInterval> = { '1d': 'daily', '1h': 'hourly', '1m': 'minutely' };
const WIDTH_MS: Record<Timeframe, number> = { '1d': 86_400_000, '1h': 3_600_000, '1m': 60_000 };
const WIDTH_SQL: Record<Timeframe, string> = { '1d': '1 day', '1h': '1 hour', '1m': '1 minute' };

/**
 * Candles per request: what each venue's fetchOHLCV answers at most (the maxEntriesPerRequest of
 * ccxt 4.5.84's own pagination of it). A range of n candles takes ceil(n / this) requests.
 */
export const CANDLES_PER_REQUEST: Record<VenueId, number> = { binance: 1000, coinbase: 299, kraken: 720, okx: 200, bybit: 1000, kucoin: 1500, gate: 1000, bitget: 200, mexc: 500, htx: 1000 };
/** Venues that keep only their newest candles per timeframe: Kraken's public OHLC answers the last 720, whatever `since` asks. */
export const CANDLES_KEPT: Partial<Record<VenueId, number>> = { kraken: 720 };
/**
 * The cost ccxt 4.5.84's rate limiter charges a venue's candle request (its endpoint's `cost`
 * for the limit above; OKX's recent candles cost half its history's, this is the dearer): one
 * request waits rateLimit × cost after the one before. A test checks them against what the
 * instances charge.
 */
export const CANDLE_REQUEST_COST: Record<VenueId, number> = { binance: 0.4, coinbase: 3, kraken: 1.2, okx: 1, bybit: 5, kucoin: 3, gate: 1, bitget: 1, mexc: 1, htx: 1 };
/**
 * How far before a page's first candle its request asks from. Bitget answers the candles after
 * `since`, so a page is asked from one millisecond before its first candle (as ccxt's pagination
 * does); Gate asks in whole seconds from `since` rounded down, and from one millisecond before it
 * would answer from a second earlier and end one candle short (ccxt 4.5.84's pagination loses
 * that candle between every two Gate pages), so Gate is asked from the candle itself.
 */
const ASK_BEFORE_MS: Partial<Record<VenueId, number>> = { gate: 0 };
/** candles written at a time: each write is one ingest, one index build and one aggregate refresh, then its progress */
const PAGE_CANDLES = 2880;
/** how often a venue's run reads the back-off other processes may have recorded (market.venue_status) */
const BACKOFF_CHECK_MS = 5_000;

export interface BackfillOptions {
  /** coin slugs; undefined: every coin any configured venue lists (`--coins all`, also the default) */
  coins?: string[];
  /** first day of the daily range (and of the others, when later); default as far back as each venue has */
  since?: Date;
  intervals: BackfillInterval[];
  onProgress?: (event: BackfillEvent) => void;
  /** stops once the request in flight is written */
  signal?: AbortSignal;
  /** the clock the ranges are planned on (tests, bench); default now */
  now?: Date;
}

/** What a venue did in one timeframe, or altogether. */
export interface BackfillTally {
  markets: number;
  candles: number;
  bars: number;
  requests: number;
}

/** Requests still needed and the time they take at the venue's pacing (venues run in parallel: the total time is the slowest venue's). */
export interface BackfillEstimate {
  requests: number;
  ms: number;
}

export type BackfillEvent =
  /** a venue's plan: per timeframe, the markets, candle slots and requests still to read; `pacingMs` the venue's time per candle request */
  | { type: 'plan'; venue: string; pacingMs: number; steps: { interval: BackfillInterval; markets: number; slots: number; requests: number }[] }
  /** every venue planned (or skipped): what the whole backfill still needs, per venue and in total */
  | ({ type: 'estimate'; venues: Record<string, BackfillEstimate> } & BackfillEstimate)
  /** a page written: `slots` of the plan are done with `requests` requests; `remaining` requests still planned on the venue */
  | { type: 'page'; venue: string; interval: BackfillInterval; symbol: string; slots: number; candles: number; bars: number; requests: number; remaining: number }
  /** a venue finished one timeframe */
  | ({ type: 'step'; venue: string; interval: BackfillInterval; ms: number } & BackfillTally)
  /** a venue is skipped (backing off) or failed: the others go on */
  | { type: 'venue'; venue: string; state: 'skipped' | 'down'; error?: string };

export interface VenueBackfill extends BackfillTally {
  state: 'up' | 'down' | 'skipped';
  error?: string;
}

export interface BackfillResult {
  venues: Record<string, VenueBackfill>;
  candles: number;
  bars: number;
  requests: number;
  ms: number;
}

interface PlanRow {
  symbol: string;
  timeframe: Timeframe;
  range_from: Date;
  range_to: Date;
  done_until: Date;
  /** a quote coin's fiat market (USDT/USD): read before the markets quoted in that coin */
  prices_quotes: boolean;
}

/** A venue's time per candle request: ccxt's rate limiter waits rateLimit × the request's cost between two. */
export function candlePacingMs(venue: Pick<LiveVenue, 'id' | 'exchange'>): number {
  return (venue.exchange.rateLimit ?? 0) * (CANDLE_REQUEST_COST[venue.id as VenueId] ?? 1);
}

/**
 * Time still needed by a venue: its requests left at its pacing, or at the time each request has
 * taken so far (writes included) when that is slower.
 */
export function remainingMs(remaining: number, pacingMs: number, done = 0, elapsedMs = 0): number {
  return remaining * Math.max(pacingMs, done > 0 ? elapsedMs / done : 0);
}

export async function backfill(connection: Query, source: ExchangesSource, options: BackfillOptions): Promise<BackfillResult> {
  // the venues run in parallel over one connection
  const query = serialized(connection);
  const started = Date.now();
  const timeframes = [...new Set(options.intervals)].map((interval) => TIMEFRAME[interval]);
  const emit = options.onProgress ?? (() => {});
  const ids = source.venueIds;
  await ensureCoinCatalogue(query);
  await ensureVenueCatalogue(query, ids, (id) => source.venue(id).exchange);
  const skipped = await venuesBackingOff(query, ids.map((id) => source.venue(id)), source.clock);
  // the estimate up front, once every venue has its plan (or none: skipped, down)
  const estimates: Record<string, BackfillEstimate> = {};
  let unplanned = ids.length;
  const planned = (id: string, estimate: BackfillEstimate) => {
    estimates[id] = estimate;
    if (--unplanned > 0) return;
    const all = Object.values(estimates);
    emit({ type: 'estimate', venues: estimates, requests: all.reduce((sum, one) => sum + one.requests, 0), ms: Math.max(0, ...all.map((one) => one.ms)) });
  };
  // Every venue reads the quote coins' fiat markets (USDT/USD …) before the markets quoted in them:
  // a BTC/USDT minute is then priced at that minute's USDT rate, not at the peg, whichever venue
  // answers first, and a resumed backfill ends with the bars of an uninterrupted one.
  let quotesPending = ids.length;
  let allQuotesRead!: () => void;
  const quotesRead = new Promise<void>((resolve) => (allQuotesRead = resolve));
  const quoteMarketsDone = () => --quotesPending === 0 && allQuotesRead();
  const runs = await Promise.all(
    ids.map(async (id): Promise<[string, VenueBackfill]> => {
      if (skipped.has(id)) {
        quoteMarketsDone();
        planned(id, { requests: 0, ms: 0 });
        emit({ type: 'venue', venue: id, state: 'skipped' });
        return [id, { state: 'skipped', markets: 0, candles: 0, bars: 0, requests: 0 }];
      }
      let estimated = false;
      const onPlan = (estimate: BackfillEstimate) => ((estimated = true), planned(id, estimate));
      const run = await backfillVenue(query, source.venue(id), timeframes, options, emit, { done: quoteMarketsDone, all: quotesRead }, onPlan);
      if (!estimated) planned(id, { requests: 0, ms: 0 });
      return [id, run];
    }),
  );
  // the windows a failed page left open, then the state every reader sees
  await completeCoinBarBackfills(query);
  await query('select market.refresh_coin_state(now(), true)');
  await query('select market.refresh_exchange_state(now())');
  const total = (key: keyof BackfillTally) => runs.reduce((sum, [, run]) => sum + run[key], 0);
  return { venues: Object.fromEntries(runs), candles: total('candles'), bars: total('bars'), requests: total('requests'), ms: Date.now() - started };
}

async function backfillVenue(
  query: Query,
  venue: LiveVenue,
  timeframes: Timeframe[],
  options: BackfillOptions,
  emit: (event: BackfillEvent) => void,
  quoteMarkets: { done: () => void; all: Promise<void> },
  onPlan: (estimate: BackfillEstimate) => void,
): Promise<VenueBackfill> {
  const run: VenueBackfill = { state: 'up', markets: 0, candles: 0, bars: 0, requests: 0 };
  let quotesDone = false;
  const quoteMarketsDone = () => quotesDone || ((quotesDone = true), quoteMarkets.done());
  await runOnVenue(query, venue, run, async () => {
    // the markets the plan is made of: loaded again when the database's copy is an hour old
    const [loaded] = await query(
      `select coalesce(s.markets_loaded_at > now() - interval '1 hour', false) as fresh
       from market.venue_status s where s.exchange_id in (select i from market.exchange_ids(array[$1]) i)`,
      [venue.id],
    );
    if (!loaded?.fresh) await ensureVenueMarkets(query, venue, 0);
    const plan = (await query(
      `select p.symbol, p.timeframe, p.range_from, p.range_to, p.done_until,
         coalesce(m.quote_coin_id is null and exists (select from market.venue_markets q
           where q.quote_coin_id = m.base_coin_id and q.active and q.instrument = 'spot'), false) as prices_quotes
       from market.plan_venue_backfill($1, $2::text[], $3::text[], $4::timestamptz, $5::timestamptz) p
       left join market.venue_markets m on m.exchange_id in (select i from market.exchange_ids(array[$1]) i) and m.symbol = p.symbol`,
      // never past the present: a range ending in the future would be closed before its candles exist
      [venue.id, timeframes, options.coins ?? null, options.since ?? null, new Date(Math.min(options.now?.getTime() ?? Infinity, Date.now()))],
    )) as unknown as PlanRow[];
    const now = Date.now();
    const steps = timeframes.map((timeframe) => {
      const rows = plan.filter((row) => row.timeframe === timeframe);
      const tally: BackfillTally = { markets: 0, candles: 0, bars: 0, requests: 0 };
      return {
        timeframe,
        rows,
        slots: rows.reduce((sum, row) => sum + slots(row, row.done_until), 0),
        requests: rows.reduce((sum, row) => sum + rangeRequests(venue.id, row, now), 0),
        tally,
        ms: 0,
      };
    });
    const pacingMs = candlePacingMs(venue);
    let remaining = steps.reduce((sum, step) => sum + step.requests, 0);
    emit({ type: 'plan', venue: venue.id, pacingMs, steps: steps.map((step) => ({ interval: INTERVAL[step.timeframe], markets: step.rows.length, slots: step.slots, requests: step.requests })) });
    onPlan({ requests: remaining, ms: remaining * pacingMs });
    const readBackOff = backOffReader(query, venue);
    const page = (event: Extract<BackfillEvent, { type: 'page' }>) => emit({ ...event, remaining: (remaining = Math.max(0, remaining - event.requests)) });
    for (const quotes of [true, false]) {
      if (!quotes) {
        quoteMarketsDone();
        await quoteMarkets.all;
      }
      for (const step of steps) {
        if (step.rows.length === 0) continue;
        const started = Date.now();
        const before = venue.requests;
        for (const row of step.rows.filter((candidate) => candidate.prices_quotes === quotes)) {
          if (options.signal?.aborted) break;
          const walked = await backfillRange(query, venue, row, step.tally, options.signal, page, readBackOff);
          // the requests the plan counted and a finished range did not need (a venue answering
          // from a later listing on) are no longer remaining
          if (walked.finished) remaining = Math.max(0, remaining - Math.max(0, rangeRequests(venue.id, row, now) - walked.requests));
          step.tally.markets++;
        }
        step.tally.requests += venue.requests - before;
        step.ms += Date.now() - started;
        if (quotes) continue;
        run.markets += step.tally.markets;
        run.candles += step.tally.candles;
        run.bars += step.tally.bars;
        emit({ type: 'step', venue: venue.id, interval: INTERVAL[step.timeframe], ms: step.ms, ...step.tally });
      }
    }
  }).finally(quoteMarketsDone);
  if (run.state !== 'up') emit({ type: 'venue', venue: venue.id, state: run.state, error: run.error });
  return run;
}

/**
 * Reads, at most every few seconds, the back-off any process recorded for the venue into its
 * instance (venue.holdUntil, which the gate's fetch refuses to pass).
 */
function backOffReader(query: Query, venue: LiveVenue): () => Promise<void> {
  let readAt = venue.clock.now();
  return async () => {
    if (venue.clock.now() - readAt < BACKOFF_CHECK_MS) return;
    readAt = venue.clock.now();
    await venuesBackingOff(query, [venue], venue.clock);
  };
}

/** candle slots of a range from `from` on: the unit of the progress bar */
function slots(row: PlanRow, from: Date | number): number {
  return Math.max(0, Math.round((row.range_to.getTime() - new Date(from).getTime()) / WIDTH_MS[row.timeframe]));
}

/** where reading a range starts: where it was left, or the oldest candle a venue that keeps only its newest still has */
function rangeStart(venueId: string, row: PlanRow, now: number): number {
  const width = WIDTH_MS[row.timeframe];
  const kept = CANDLES_KEPT[venueId as VenueId];
  return Math.max(row.done_until.getTime(), kept ? Math.floor(now / width) * width - (kept - 1) * width : -Infinity);
}

/** the requests a range still needs: its slots left in pages of the venue's candles per request */
function rangeRequests(venueId: string, row: PlanRow, now: number): number {
  return Math.ceil(slots(row, rangeStart(venueId, row, now)) / (CANDLES_PER_REQUEST[venueId as VenueId] ?? 1000));
}

/**
 * One range of one market, walked from where it was left by explicit pages of the venue's
 * candles per request, one request at a time (ccxt's limiter paces them), up to the range's end
 * and no further; written every PAGE_CANDLES candles with the progress, which is the start of the
 * next page to ask. Stopped (signal) or held (a back-off any process recorded), it writes what it
 * read and records how far; held, it then throws VenueBackingOff (the venue's run is skipped).
 * Returns the requests made and whether the range is finished.
 */
async function backfillRange(
  query: Query,
  venue: LiveVenue,
  row: PlanRow,
  tally: BackfillTally,
  signal: AbortSignal | undefined,
  emit: (event: Extract<BackfillEvent, { type: 'page' }>) => void,
  readBackOff: () => Promise<void>,
): Promise<{ requests: number; finished: boolean }> {
  const width = WIDTH_MS[row.timeframe];
  const end = row.range_to.getTime();
  const perRequest = CANDLES_PER_REQUEST[venue.id as VenueId] ?? 1000;
  const askBefore = ASK_BEFORE_MS[venue.id as VenueId] ?? 1;
  const first = venue.requests;
  let done = row.done_until.getTime();
  // older candles than the venue keeps cannot be had: the range starts at its oldest one
  let since = rangeStart(venue.id, row, Date.now());
  let page: (string | number)[][] = [];
  let pageRequests = 0;
  const seen = new Set<number>();
  const write = async (until: number) => {
    let written = 0;
    let bars = 0;
    if (page.length > 0) {
      const [ingested] = await query('select * from market.ingest_venue_candles($1, $2::text::jsonb, $3::interval)', [
        venue.id,
        JSON.stringify(page),
        WIDTH_SQL[row.timeframe],
      ]);
      written = Number(ingested?.candles ?? 0);
      if (written > 0) {
        // only this page's coin: rebuilding every coin of the window would make a backfill quadratic
        const [built] = await query('select bars from market.build_index_bars($1::timestamptz, $2::timestamptz, $3::int[])', [
          ingested!.first_time,
          new Date(new Date(ingested!.last_time as string).getTime() + width),
          ingested!.coins,
        ]);
        bars = Number(built?.bars ?? 0);
        await completeCoinBarBackfills(query);
      }
    }
    await query('select market.record_venue_backfill($1, $2, $3, $4, $5, $6, $7)', [
      venue.id,
      row.symbol,
      row.timeframe,
      row.range_from,
      new Date(until),
      written,
      pageRequests,
    ]);
    tally.candles += written;
    tally.bars += bars;
    emit({ type: 'page', venue: venue.id, interval: INTERVAL[row.timeframe], symbol: row.symbol, slots: slots(row, done) - slots(row, until), candles: written, bars, requests: pageRequests, remaining: 0 });
    done = until;
    page = [];
    pageRequests = 0;
  };
  let held = false;
  while (since < end && !signal?.aborted) {
    await readBackOff();
    if ((held = venue.clock.now() < venue.holdUntil)) break;
    const from = since;
    const fetched = await reading(venue, 'candles', (): Promise<OHLCV[]> => venue.exchange.fetchOHLCV(row.symbol, row.timeframe, from - askBefore, perRequest));
    pageRequests++;
    const closedBefore = Date.now();
    // the next page starts after this one, or after the last candle answered when a venue
    // answered further on (from a later listing: the pages before it are empty)
    since = from + perRequest * width;
    for (const [time, open, high, low, close, volume] of candleRows(venue, row.symbol, fetched)) {
      if (time! < from || time! + width > end || time! + width > closedBefore || seen.has(time!)) continue;
      seen.add(time!);
      page.push([row.symbol, time!, String(open), String(high), String(low), String(close), String(volume ?? '0')]);
      since = Math.max(since, time! + width);
    }
    if (page.length >= PAGE_CANDLES && since < end) await write(since);
  }
  const finished = since >= end;
  // the last page closes the range (what the venue did not have is a gap, not a debt); a stopped one records how far it got
  if (finished || since > done) await write(Math.min(since, end));
  if (held) throw new VenueBackingOff(venue.id, venue.holdUntil);
  return { requests: venue.requests - first, finished };
}
