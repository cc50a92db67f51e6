// Live market data from real venues through ccxt. One run is one minute of work: per venue (in
// parallel, each behind ccxt's own rate limiter) the markets (hourly), the ticker snapshot and the
// newest closed 1-minute candles of each coin's best market there (but for the venues whose candles a
// live stream holder brings, market.stream_candle_venues: src/sources/stream/candles.ts), written through
// sql/functions/415_exchange_venues.sql; then the price index rebuilds the coin bars the new
// candles touch (sql/functions/140_price_index.sql), and the bars flow on: aggregates, coin
// state, alarms, venue state, each phase timed (ExchangesTickResult.phases). Every request passes the venue gate (./gate.ts): a venue that fails
// is backed off (market.venue_status) while the others go on; everything a venue sent arrives in
// whole calls, so nothing is half-written.
import type { Exchange, MarketInterface, Ticker } from 'ccxt';
import { type Query, type SerializedQuery, serialized } from '../../db/query.ts';
import { completeCoinBarBackfills } from '../aggregates.ts';
import type { Source } from '../source.ts';
import { ensureCoinCatalogue } from '../catalogue/index.ts';
import type { Config } from '../../config.ts';
import { createVenue, parseExchangeUrls, parseExchanges } from './venues.ts';
import { ensureVenueCatalogue } from './catalogue.ts';
import { BadVenueAnswer, candleRows, guardAnswers, reading, tickerRows } from './answers.ts';
import { gateRequests, REAL_CLOCK, runOnVenue, venuesBackingOff, type GatedVenue, type VenueClock } from './gate.ts';

export const SOURCE_NAME = 'exchanges';
const MINUTE = 60_000;
/** a market seen for the first time gets this much recent history from the live tick; `mdapi backfill` does the rest */
const FIRST_LOOK_BACK_MS = 10 * MINUTE;
/** the live tick never reaches back beyond the raw retention */
const MAX_LOOK_BACK_MS = 8 * 24 * 60 * MINUTE;

export interface ExchangesSettings {
  venues: string[];
  urls?: Record<string, string>;
  timeoutMs?: number;
  /** how long one venue may spend on candles in a run (its rate limit decides how many markets fit) */
  budgetMs?: number;
  /** how often markets are reloaded (listings and delistings); default hourly */
  marketsEveryMs?: number;
  /** the clock deciding which candles are closed (tests and benchmarks replay a past hour) */
  clock?: () => number;
  /** ccxt's pacing instead of each venue's own (tests on the loopback replay) */
  rateLimitMs?: number;
  /** the venue gate's clock (back-off, Retry-After, hourly markets): tests run it fast */
  venueClock?: VenueClock;
}

export interface VenueRun {
  state: 'up' | 'down' | 'skipped';
  requests: number;
  markets?: { markets: number; listed: number; delisted: number; mapped: number };
  tickers: number;
  candles: number;
  /** markets whose candles were fetched this run */
  candleMarkets: number;
  /** a live stream holder brings the venue's candles (market.stream_candle_venues): this run polled none */
  candlesStreamed?: boolean;
  error?: string;
}

/** The phases of a minute tick, in order: the names of `phases` and of the metric's label. */
export const TICK_PHASES = ['fetch', 'bars', 'index', 'aggregates', 'coin_state', 'alarms', 'venue_state'] as const;
export type TickPhase = (typeof TICK_PHASES)[number];

export interface ExchangesTickResult {
  venues: Record<string, VenueRun>;
  requests: number;
  candles: number;
  bars: number;
  excluded: number;
  coins: number;
  /**
   * Milliseconds per phase. fetch: the venues' part (catalogues, markets, tickers, candles, written
   * as they come) but for bars: the candles' writes (market.ingest_venue_candles), which run on the
   * one connection while other venues are still fetching; index: market.build_index_bars;
   * aggregates: the aggregates over bars written into the past (completeCoinBarBackfills; the
   * every-minute refresh is TimescaleDB's job); coin_state and alarms: the two parts of
   * market.refresh_coin_state; venue_state: market.refresh_exchange_state. Together: the run.
   */
  phases: Record<TickPhase, number>;
}

export interface LiveVenue extends GatedVenue {
  /** the path of the venue's newest request, for the error an unreadable answer raises */
  endpoint?: string;
  /** when its markets were last loaded (the gate's clock); 0: never */
  marketsLoadedAt: number;
  /** the market load in flight: concurrent callers share it */
  marketsLoading?: Promise<VenueRun['markets']>;
}

export class ExchangesSource implements Source<ExchangesTickResult> {
  readonly name = SOURCE_NAME;
  readonly #venues = new Map<string, LiveVenue>();
  readonly #settings: ExchangesSettings;

  constructor(settings: ExchangesSettings) {
    this.#settings = settings;
  }

  #now(): number {
    return this.#settings.clock?.() ?? Date.now();
  }

  /** the clock deciding which candles are closed (the stream holder's candles share it) */
  now(): number {
    return this.#now();
  }

  /** the settings a venue's instances are made with (the stream holder's candle connections make their own) */
  get settings(): Readonly<ExchangesSettings> {
    return this.#settings;
  }

  /** the venue gate's clock */
  get clock(): VenueClock {
    return this.#settings.venueClock ?? REAL_CLOCK;
  }

  /** the configured venue ids, in order */
  get venueIds(): string[] {
    return [...this.#settings.venues];
  }

  /** the ccxt instance of a venue, created once per process so that its markets and rate limiter carry over */
  venue(id: string): LiveVenue {
    let venue = this.#venues.get(id);
    if (!venue) {
      const exchange = createVenue(id, { baseUrl: this.#settings.urls?.[id], timeoutMs: this.#settings.timeoutMs, rateLimitMs: this.#settings.rateLimitMs });
      // decimal strings end to end: ccxt hands the venues' numbers on as strings instead of floats
      (exchange as unknown as { number: (value: string) => string }).number = String;
      const created: LiveVenue = { id, exchange, requests: 0, marketsLoadedAt: 0, holdUntil: 0, clock: this.clock };
      // every request counted (the bench and venue_status report it) and every answer read as JSON or refused
      guardAnswers(id, exchange, created);
      // and none while the venue backs off
      gateRequests(created);
      this.#venues.set(id, (venue = created));
    }
    return venue;
  }

  async run(connection: Query, { signal }: { signal?: AbortSignal } = {}): Promise<ExchangesTickResult> {
    const query = serialized(connection);
    const phases = Object.fromEntries(TICK_PHASES.map((phase) => [phase, 0])) as Record<TickPhase, number>;
    const timed = async <T>(phase: TickPhase, work: () => Promise<T>): Promise<T> => {
      const started = performance.now();
      try {
        return await work();
      } finally {
        phases[phase] += performance.now() - started;
      }
    };
    const fetchStarted = performance.now();
    await ensureCoinCatalogue(query);
    await ensureVenueCatalogue(query, this.#settings.venues, (id) => this.venue(id).exchange);
    const skipped = await venuesBackingOff(query, this.#settings.venues.map((id) => this.venue(id)), this.clock);
    // the candles a live stream holder brings are its own: polled here too they would be read twice
    const [held] = await query('select market.stream_candle_venues() as venues');
    const streamed = new Set<string>((held?.venues as string[] | undefined) ?? []);
    const runs = await Promise.all(
      this.#settings.venues.map(async (id): Promise<[string, VenueRun]> => {
        if (skipped.has(id)) return [id, { state: 'skipped', requests: 0, tickers: 0, candles: 0, candleMarkets: 0 }];
        return [id, await this.#runVenue(query, this.venue(id), signal, (ms) => (phases.bars += ms), streamed.has(id))];
      }),
    );
    phases.fetch = performance.now() - fetchStarted - phases.bars;
    const venues = Object.fromEntries(runs);
    const polled = runs.filter((entry): entry is [string, VenueRun & { first: string; last: string }] => {
      const run = entry[1] as VenueRun & { first?: string; last?: string };
      return !!(run.first && run.last);
    });
    const window = polled.map(([, run]) => run);
    let bars = 0;
    let excluded = 0;
    let full = false;
    if (window.length > 0) {
      const from = window.map((run) => run.first!).sort()[0]!;
      const to = window.map((run) => run.last!).sort().at(-1)!;
      const [built] = await timed('index', async () => {
        const rows = await query(`select bars, coins, excluded from market.build_index_bars($1::timestamptz, $2::timestamptz + interval '1 minute')`, [from, to]);
        await query('select market.record_index_bar_delays($1::text[], $2::timestamptz[], $3::timestamptz[], $4::timestamptz)', [
          polled.map(([id]) => id),
          window.map((run) => run.first),
          window.map((run) => run.last),
          new Date(this.#now()).toISOString(),
        ]);
        return rows;
      });
      bars = Number(built?.bars ?? 0);
      excluded = Number(built?.excluded ?? 0);
      const { calls } = await timed('aggregates', () => completeCoinBarBackfills(query));
      full = calls > 0;
    }
    // one statement, one transaction (alarms commit with the prices they saw): the function times its two parts
    const [state] = await query('select coins, coin_state_ms, alarms_ms from market.refresh_coin_state_timed(now(), $1::boolean)', [full]);
    phases.coin_state = Number(state?.coin_state_ms ?? 0);
    phases.alarms = Number(state?.alarms_ms ?? 0);
    await timed('venue_state', () => query('select market.refresh_exchange_state(now())'));
    return {
      phases,
      venues,
      requests: runs.reduce((sum, [, run]) => sum + run.requests, 0),
      candles: runs.reduce((sum, [, run]) => sum + run.candles, 0),
      bars,
      excluded,
      coins: Number(state?.coins ?? 0),
    };
  }

  venues(result: ExchangesTickResult): Record<string, 'up' | 'down'> {
    return Object.fromEntries(Object.entries(result.venues).map(([id, run]) => [id, run.state === 'up' ? 'up' : 'down']));
  }

  /** streamed: a live stream holder brings the venue's candles (market.stream_candle_venues): none polled */
  async #runVenue(query: SerializedQuery, venue: LiveVenue, signal: AbortSignal | undefined, addBars: (ms: number) => void, streamed: boolean): Promise<VenueRun & { first?: string; last?: string }> {
    const run: VenueRun & { first?: string; last?: string } = { state: 'up', requests: 0, tickers: 0, candles: 0, candleMarkets: 0, ...(streamed ? { candlesStreamed: true } : {}) };
    return runOnVenue(query, venue, run, async () => {
      run.markets = await ensureVenueMarkets(query, venue, this.#settings.marketsEveryMs);
      const tickers = tickerRows(venue, await reading(venue, 'tickers', () => venue.exchange.fetchTickers()));
      const [written] = await query('select market.ingest_venue_tickers($1, $2::text::jsonb) as n', [
        venue.id,
        JSON.stringify(tickers.map(tickerRow)),
      ]);
      run.tickers = Number(written?.n ?? 0);
      if (!streamed) await this.#fetchCandles(query, query.timed(addBars), venue, run, signal);
    });
  }

  /**
   * The newest closed 1-minute candles of each coin's most traded market on the venue, oldest
   * coverage first, for as long as the venue's budget lasts: a venue with a tight rate limit
   * covers its markets over several runs, each request bringing every minute since the last.
   */
  async #fetchCandles(query: Query, writeBars: Query, venue: LiveVenue, run: VenueRun & { first?: string; last?: string }, signal?: AbortSignal) {
    const deadline = Date.now() + (this.#settings.budgetMs ?? 40_000);
    const due = await query(
      `select symbol, (extract(epoch from candles_until) * 1000)::bigint as until
       from market.venue_candle_markets($1) order by candles_until nulls first, symbol`,
      [venue.id],
    );
    let batch: (string | number)[][] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const [written] = await writeBars('select * from market.ingest_venue_candles($1, $2::text::jsonb)', [venue.id, JSON.stringify(batch)]);
      batch = [];
      run.candles += Number(written?.candles ?? 0);
      const first = written?.first_time ? new Date(written.first_time as string).toISOString() : undefined;
      const last = written?.last_time ? new Date(written.last_time as string).toISOString() : undefined;
      if (first && (!run.first || first < run.first)) run.first = first;
      if (last && (!run.last || last > run.last)) run.last = last;
    };
    try {
      for (const market of due) {
        if (Date.now() >= deadline || signal?.aborted) break;
        const now = this.#now();
        const since = Math.max(market.until ? Number(market.until) : now - FIRST_LOOK_BACK_MS, now - MAX_LOOK_BACK_MS);
        if (since >= Math.floor(now / MINUTE) * MINUTE) continue; // its newest closed minute is already stored
        const symbol = market.symbol as string;
        const candles = candleRows(venue, symbol, await reading(venue, 'candles', () => venue.exchange.fetchOHLCV(symbol, '1m', since)));
        run.candleMarkets++;
        const closedBefore = Math.floor(this.#now() / MINUTE) * MINUTE;
        for (const [time, open, high, low, close, volume] of candles) {
          if (time! >= closedBefore || time! < since) continue;
          batch.push([symbol, time!, String(open), String(high), String(low), String(close), String(volume ?? '0')]);
        }
        // written in pieces, so that a failure later in the run keeps what whole markets brought
        if (batch.length >= 5000) await flush();
      }
    } finally {
      await flush();
    }
  }
}

/** Reloads a venue's markets through ccxt and records listings and delistings (market.ingest_venue_markets). */
export async function loadVenueMarkets(query: Query, venue: LiveVenue): Promise<VenueRun['markets']> {
  const markets = await reading(venue, 'markets', () => venue.exchange.loadMarkets(true));
  // an answer that reads as no markets must not delist the venue's every market
  if (Object.keys(markets).length === 0) throw new BadVenueAnswer(`${venue.id} ${venue.endpoint ?? 'markets'}: no markets in the answer`);
  let loaded: VenueRun['markets'];
  try {
    [loaded] = await query<NonNullable<VenueRun['markets']>>('select * from market.ingest_venue_markets($1, $2::text::jsonb)', [
      venue.id,
      JSON.stringify(Object.values(markets).map(marketRow).filter(Boolean)),
    ]);
  } catch (error) {
    // a list that lost more than half the venue's markets at once: refused whole by the database
    if ((error as { code?: string }).code === 'MDV01') throw new BadVenueAnswer(`${venue.id} ${venue.endpoint ?? 'markets'}: ${(error as Error).message}`);
    throw error;
  }
  venue.marketsLoadedAt = venue.clock.now();
  return loaded;
}

/**
 * The venue's one market list, shared by everything the process does with the venue: loaded
 * when it is older than `everyMs` (hourly), by one load at a time; undefined when it was fresh.
 */
export async function ensureVenueMarkets(query: Query, venue: LiveVenue, everyMs = 60 * MINUTE): Promise<VenueRun['markets'] | undefined> {
  if (venue.marketsLoadedAt > 0 && venue.clock.now() - venue.marketsLoadedAt < everyMs) return undefined;
  return (venue.marketsLoading ??= loadVenueMarkets(query, venue).finally(() => (venue.marketsLoading = undefined)));
}

/** The exchange source's settings from the service's configuration. */
export function exchangesSettings(config: Pick<Config, 'EXCHANGES' | 'EXCHANGE_URLS' | 'EXCHANGE_TIMEOUT_MS' | 'EXCHANGE_BUDGET_MS'>): ExchangesSettings {
  return {
    venues: parseExchanges(config.EXCHANGES),
    urls: parseExchangeUrls(config.EXCHANGE_URLS),
    timeoutMs: config.EXCHANGE_TIMEOUT_MS,
    budgetMs: config.EXCHANGE_BUDGET_MS,
  };
}

const shared = new Map<string, ExchangesSource>();
/**
 * The process's one exchange source for these settings: the minute job, liquidations and the
 * stream holder of a worker share each venue's ccxt instance (markets, rate limiter, hold).
 */
export function sharedExchangesSource(settings: ExchangesSettings): ExchangesSource {
  const key = JSON.stringify(settings);
  let source = shared.get(key);
  if (!source) shared.set(key, (source = new ExchangesSource(settings)));
  return source;
}

/** the fields of a ccxt market the database keeps */
function marketRow(market: MarketInterface | undefined) {
  if (!market) return null;
  return {
    symbol: market.symbol,
    id: market.id,
    base: market.base,
    quote: market.quote,
    type: market.type,
    contractSize: market.contractSize === undefined ? null : String(market.contractSize),
    active: market.active !== false,
  };
}

/** the fields of a ccxt ticker the database keeps, as decimal strings */
function tickerRow(ticker: Ticker) {
  const text = (value: unknown) => (value === undefined || value === null ? null : String(value));
  return {
    symbol: ticker.symbol,
    last: text(ticker.last ?? ticker.close),
    bid: text(ticker.bid),
    ask: text(ticker.ask),
    baseVolume: text(ticker.baseVolume),
    quoteVolume: text(ticker.quoteVolume),
    percentage: text(ticker.percentage),
    timestamp: text(ticker.timestamp),
  };
}
