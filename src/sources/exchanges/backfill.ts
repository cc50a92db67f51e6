// `mdapi backfill`: deep history from the venues through ccxt, written through the same path as
// the live minute (venue candles → price index → aggregates → coin and venue state). Per venue, in
// parallel, each behind ccxt's own rate limiter: the ranges still to read come from
// market.plan_venue_backfill (daily before 6 months ago, hourly to 8 days ago, 1-minute since;
// never overlapping), each is fetched with ccxt's own pagination, and written page by page with its
// progress (market.record_venue_backfill), so a killed backfill resumes where it stopped and a
// finished one re-run reads only what is new. A failing venue is backed off (market.record_venue_run)
// while the others go on.
import type { OHLCV } from 'ccxt';
import { type Query, serialized } from '../../db/query.ts';
import { completeCoinBarBackfills } from '../aggregates.ts';
import { ensureVenueCatalogue } from './catalogue.ts';
import { ensureCoinCatalogue } from '../catalogue/index.ts';
import { ensureVenueMarkets, type ExchangesSource, type LiveVenue } from './index.ts';
import { runOnVenue, venuesBackingOff } from './gate.ts';
import { candleRows, reading } from './answers.ts';
import type { VenueId } from './venues.ts';

export const BACKFILL_INTERVALS = ['daily', 'hourly', 'minutely'] as const;
export type BackfillInterval = (typeof BACKFILL_INTERVALS)[number];
type Timeframe = '1d' | '1h' | '1m';

const TIMEFRAME: Record<BackfillInterval, Timeframe> = { daily: '1d', hourly: '1h', minutely: '1m' };
const INTERVAL: Record<Timeframe, BackfillInterval> = { '1d': 'daily', '1h': 'hourly', '1m': 'minutely' };
const WIDTH_MS: Record<Timeframe, number> = { '1d': 86_400_000, '1h': 3_600_000, '1m': 60_000 };
const WIDTH_SQL: Record<Timeframe, string> = { '1d': '1 day', '1h': '1 hour', '1m': '1 minute' };

/**
 * Candles per request of ccxt 4.5.84's pagination of fetchOHLCV (the maxEntriesPerRequest each
 * venue's fetchOHLCV hands to fetchPaginatedCallDeterministic): how many requests a range needs.
 */
export const CANDLES_PER_REQUEST: Record<VenueId, number> = { binance: 1000, coinbase: 299, kraken: 720, okx: 200, bybit: 1000, kucoin: 1500, gate: 1000, bitget: 200, mexc: 500, htx: 1000 };
/** Venues that keep only their newest candles per timeframe: Kraken's public OHLC answers the last 720, whatever `since` asks. */
export const CANDLES_KEPT: Partial<Record<VenueId, number>> = { kraken: 720 };
/**
 * Venues whose fetchOHLCV(…, { paginate: true }) loses candles in ccxt 4.5.84: coinbase sets its
 * 300-candle limit before paginating and the result is cut to it; kucoin paginates its spot
 * method, whose name makes the final since-filter look for a `timestamp` key that candle arrays
 * lack, so every candle is dropped. For them the backfill calls ccxt's own deterministic
 * pagination as fetchOHLCV would, over fetchOHLCV itself.
 */
const PAGINATE_DIRECTLY = new Set<string>(['coinbase', 'kucoin']);
/** candles written per page: each page is one ingest, one index build and one aggregate refresh, then its progress */
const PAGE_CANDLES = 2880;

export interface BackfillOptions {
  /** coin slugs; default every coin the venues list */
  coins?: string[];
  /** first day of the daily range (and of the others, when later); default as far back as each venue has */
  since?: Date;
  intervals: BackfillInterval[];
  onProgress?: (event: BackfillEvent) => void;
  /** stops after the page in flight */
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

export type BackfillEvent =
  /** a venue's plan: per timeframe, the markets and candle slots still to read */
  | { type: 'plan'; venue: string; steps: { interval: BackfillInterval; markets: number; slots: number }[] }
  /** a page written: `slots` of the plan are done */
  | { type: 'page'; venue: string; interval: BackfillInterval; symbol: string; slots: number; candles: number; bars: number }
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
        emit({ type: 'venue', venue: id, state: 'skipped' });
        return [id, { state: 'skipped', markets: 0, candles: 0, bars: 0, requests: 0 }];
      }
      return [id, await backfillVenue(query, source.venue(id), timeframes, options, emit, { done: quoteMarketsDone, all: quotesRead })];
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
    const steps = timeframes.map((timeframe) => {
      const rows = plan.filter((row) => row.timeframe === timeframe);
      const tally: BackfillTally = { markets: 0, candles: 0, bars: 0, requests: 0 };
      return { timeframe, rows, slots: rows.reduce((sum, row) => sum + slots(row, row.done_until), 0), tally, ms: 0 };
    });
    emit({ type: 'plan', venue: venue.id, steps: steps.map((step) => ({ interval: INTERVAL[step.timeframe], markets: step.rows.length, slots: step.slots })) });
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
          await backfillRange(query, venue, row, step.tally, options.signal, emit);
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
  if (run.state === 'down') emit({ type: 'venue', venue: venue.id, state: 'down', error: run.error });
  return run;
}

/** candle slots of a range from `from` on: the unit of the progress bar */
function slots(row: PlanRow, from: Date): number {
  return Math.max(0, Math.round((row.range_to.getTime() - from.getTime()) / WIDTH_MS[row.timeframe]));
}

/**
 * One range of one market: the venue's candles from where the range was left, in one call of
 * ccxt's pagination (it has no upper bound every venue honours, so it reads to the present and
 * the candles past the range are dropped), then written page by page with the progress.
 */
async function backfillRange(
  query: Query,
  venue: LiveVenue,
  row: PlanRow,
  tally: BackfillTally,
  signal: AbortSignal | undefined,
  emit: (event: BackfillEvent) => void,
): Promise<void> {
  const width = WIDTH_MS[row.timeframe];
  const end = row.range_to.getTime();
  let since = row.done_until.getTime();
  const now = Date.now();
  const kept = CANDLES_KEPT[venue.id as VenueId];
  // older candles than the venue keeps cannot be had: the range starts at its oldest one
  if (kept) since = Math.max(since, Math.floor(now / width) * width - (kept - 1) * width);
  const before = venue.requests;
  let candles: (number | string | undefined)[][] = [];
  if (since < end) {
    const perRequest = CANDLES_PER_REQUEST[venue.id as VenueId] ?? 1000;
    // enough calls to reach the present from `since` (ccxt starts later when given fewer)
    const paginationCalls = Math.ceil((now - since) / (perRequest * width)) + 1;
    const fetched = await reading(venue, 'candles', (): Promise<OHLCV[]> => PAGINATE_DIRECTLY.has(venue.id)
      ? venue.exchange.fetchPaginatedCallDeterministic('fetchOHLCV', row.symbol, since, undefined, row.timeframe, { paginationCalls }, perRequest)
      : venue.exchange.fetchOHLCV(row.symbol, row.timeframe, since, undefined, { paginate: true, paginationCalls }));
    const seen = new Set<number>();
    candles = candleRows(venue, row.symbol, fetched)
      .filter(([time]) => time! >= since && time! + width <= end && time! + width <= now && !seen.has(time!) && seen.add(time!))
      .sort((a, b) => Number(a[0]) - Number(b[0]));
  }
  let requests = venue.requests - before;
  let done = row.done_until.getTime();
  for (let at = 0; at < candles.length || done < end; at += PAGE_CANDLES) {
    if (signal?.aborted) return;
    const page = candles.slice(at, at + PAGE_CANDLES);
    const last = at + PAGE_CANDLES >= candles.length;
    // the last page closes the range: what the venue did not have is a gap, not a debt
    const until = last ? end : Number(page.at(-1)![0]) + width;
    let written = 0;
    let bars = 0;
    if (page.length > 0) {
      const rows = page.map(([time, open, high, low, close, volume]) => [row.symbol, time, String(open), String(high), String(low), String(close), String(volume ?? '0')]);
      const [ingested] = await query('select * from market.ingest_venue_candles($1, $2::text::jsonb, $3::interval)', [
        venue.id,
        JSON.stringify(rows),
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
      requests,
    ]);
    requests = 0;
    tally.candles += written;
    tally.bars += bars;
    emit({ type: 'page', venue: venue.id, interval: INTERVAL[row.timeframe], symbol: row.symbol, slots: slots(row, new Date(done)) - slots(row, new Date(until)), candles: written, bars });
    done = until;
    if (last) break;
  }
}
