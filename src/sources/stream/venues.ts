// The real venues' ticker streams through ccxt pro (the same ccxt instance per venue as the REST
// source of the process, src/sources/exchanges/index.ts sharedExchangesSource, with EXCHANGE_URLS
// rebasing the WebSocket URLs too): one watch loop per venue over the spot markets the price index
// uses. The latest price per market is kept in memory and written once a tick. A gap — a
// disconnection, a stream silent for STREAM_MAX_AGE_SECONDS (ccxt drops a message it cannot parse,
// so garbage ends as silence), a ticker that is not a positive price — takes the venue out of the
// live price at once (its live venue prices are deleted) and reconnects; once subscribed again,
// the venue's REST ticker snapshot (as the REST source reads it) resynchronises it before its
// stream counts again.
// Every REST request here passes the venue gate (src/sources/exchanges/gate.ts): none while the
// venue backs off, its markets loaded once an hour for the whole process, its failures recorded as
// the venue's REST failures and its successes never clearing them. Reconnections have their own
// back-off, recorded apart as the venue's stream health (market.record_venue_stream: 2 s doubling
// to 5 minutes, jittered; a venue not yet in the database, 2 s doubling to 30 s of the feed's own),
// and a resynchronisation comes only after a connection opened: at most one ticker request per
// back-off step.
import type { Exchange, Ticker } from 'ccxt';
import type { Config } from '../../config.ts';
import type { Logger } from '../../log.ts';
import type { Query } from '../../db/query.ts';
import { ensureVenueMarkets, exchangesSettings, sharedExchangesSource, type ExchangesSource, type LiveVenue } from '../exchanges/index.ts';
import { recordVenueStream, throughGate } from '../exchanges/gate.ts';
import { VenueBackingOff, reading, tickerRows } from '../exchanges/answers.ts';
import { streamsTickers } from '../exchanges/venues.ts';
import { CANDLE_STALL_SECONDS, CandleFeeds } from './candles.ts';
import { nextClient, prepareStreams, stallGuard } from './clients.ts';

const DECIMAL = /^\d+(\.\d+)?([eE][-+]?\d+)?$/;
/** markets per venue stream: the deepest by 24h volume */
const MAX_MARKETS = 200;
/**
 * A venue not yet in the database (the holder started before a worker's first market job added it)
 * has no row to record a back-off in: its feed waits 2 s doubling to 30 s of its own, not 0 (each
 * try a market load from the venue).
 */
const UNRECORDED_FIRST_MS = 2_000;
const UNRECORDED_MAX_MS = 30_000;

interface Latest {
  symbol: string;
  price: string;
  at: string;
}

class VenueFeed {
  private latest = new Map<string, Latest>();
  /** the ticker object of the exchange's cache last read per market: a new object is a new message */
  private readonly read = new Map<string, Ticker>();
  /** down: disconnected, stalled, or not yet resynchronised from REST after a gap */
  state: 'up' | 'down' = 'down';
  /** the venue went down since the last flush: its live prices are to be left out at once */
  gap = false;
  /** times its REST snapshot resynchronised it (after each (re)connection) */
  resyncs = 0;
  /** failures in a row that no venue row recorded (UNRECORDED_FIRST_MS) */
  private unrecorded = 0;
  private closed = false;
  private wake: (() => void) | null = null;
  readonly done: Promise<void>;

  private readonly venue: LiveVenue;
  private readonly options: { baseUrl?: string; stallMs: number };
  private readonly markets: () => Promise<string[]>;
  private readonly query: Query;
  private readonly logger: Logger | undefined;

  constructor(venue: LiveVenue, options: { baseUrl?: string; stallMs: number }, markets: () => Promise<string[]>, query: Query, logger?: Logger) {
    this.venue = venue;
    this.options = options;
    this.markets = markets;
    this.query = query;
    this.logger = logger;
    this.done = this.loop();
  }

  get id(): string {
    return this.venue.id;
  }

  /** The prices received since the last take. */
  take(): Latest[] {
    const taken = [...this.latest.values()];
    this.latest = new Map();
    return taken;
  }

  /**
   * Every ticker received since the last wake-up, or an error when the stream stays silent longer
   * than a price may be old. ccxt resolves one waiting watchTickers call per message; messages that
   * arrive while none waits (a burst in one write) only update the exchange's ticker cache, so the
   * cache is read after each wake-up: each ticker object it holds that was not read before is new.
   */
  private async watch(exchange: Exchange, symbols: string[], pending?: Promise<unknown>): Promise<Record<string, Ticker>> {
    const woke = (await this.stallGuard(pending ?? watchTickers(exchange, symbols))) as Record<string, Ticker>;
    const received: Record<string, Ticker> = { ...woke };
    const cache = (exchange.tickers ?? {}) as Record<string, Ticker>;
    for (const symbol of symbols) {
      const ticker = cache[symbol];
      if (ticker && this.read.get(symbol) !== ticker) received[symbol] = ticker;
    }
    for (const [symbol, ticker] of Object.entries(received)) this.read.set(symbol, ticker);
    return received;
  }

  /** The promise, or an error when it takes longer than a price may be old. */
  private stallGuard<T>(promise: Promise<T>): Promise<T> {
    return stallGuard(promise, this.options.stallMs, 'ticker');
  }

  /** Waits on the gate's clock, woken early by close(). */
  private async pause(ms: number) {
    if (this.closed || ms <= 0) return;
    await Promise.race([this.venue.clock.sleep(ms), new Promise<void>((resolve) => (this.wake = resolve))]);
    this.wake = null;
  }

  private async loop() {
    const { venue } = this;
    const exchange = venue.exchange;
    prepareStreams(exchange, this.logger, venue.id);
    while (!this.closed) {
      try {
        // no stream while the venue's REST backs off: its resynchronisation could not be had
        const held = venue.holdUntil - venue.clock.now();
        if (held > 0) {
          await this.pause(held);
          continue;
        }
        // a plain ws:// URL (a loopback replay) needs ccxt's http agent loaded first
        if (/^http:/i.test(this.options.baseUrl ?? '')) await (exchange as Exchange & { loadHttpProxyAgent(): Promise<unknown> }).loadHttpProxyAgent();
        await throughGate(this.query, venue, 'failures', () => ensureVenueMarkets(this.query, venue));
        const symbols = await this.markets();
        if (symbols.length === 0) throw new Error('no market of the index on this venue');
        // what the cache held before this connection is the gap's: the REST snapshot stands for it
        for (const [symbol, ticker] of Object.entries((exchange.tickers ?? {}) as Record<string, Ticker>)) this.read.set(symbol, ticker);
        // ccxt's own dial back-off (per instance and URL) would stack on this loop's: this one counts
        delete ((exchange.options['ws'] ?? {}) as Record<string, unknown>)['backoffState'];
        const dialled = nextClient(exchange);
        const first = watchTickers(exchange, symbols);
        first.catch(() => {});
        // subscribed first, then the REST snapshot: what the gap missed, and nothing missed after it;
        // a connection that never opens (refused, 404) costs no REST request
        await this.stallGuard(Promise.race([dialled.then((client) => client.connected), first]));
        const rest = await throughGate(this.query, venue, 'failures', async () => {
          const snapshot = tickerRows(venue, await reading(venue, 'tickers', () => exchange.fetchTickers()));
          const wanted = new Set(symbols);
          return this.parse(Object.fromEntries(snapshot.filter((ticker) => wanted.has(String(ticker.symbol))).map((ticker) => [ticker.symbol, ticker])));
        });
        if (this.closed) break;
        for (const item of rest) this.keep(item);
        this.resyncs++;
        this.state = 'up';
        await recordVenueStream(this.query, venue, null);
        for (const item of this.parse(await this.watch(exchange, symbols, first))) this.keep(item);
        while (!this.closed) {
          for (const item of this.parse(await this.watch(exchange, symbols))) this.keep(item);
        }
      } catch (error) {
        if (this.closed) break;
        this.down();
        await exchange.close().catch(() => {});
        let wait = 0;
        if (error instanceof VenueBackingOff) {
          this.logger?.warn(`live streams: ${venue.id} (${error.message}); no stream until then`);
        } else if (this.stage(error) === 'rest') {
          // a REST failure (market load, resynchronisation): recorded by the gate as the venue's, waited out above
          this.logger?.warn(`live streams: ${venue.id} (${(error as Error).message}); waiting for the venue's back-off`);
        } else {
          const recorded = await recordVenueStream(this.query, venue, error).catch(() => 60_000);
          this.unrecorded = recorded === null ? this.unrecorded + 1 : 0;
          wait = recorded ?? Math.min(UNRECORDED_FIRST_MS * 2 ** (this.unrecorded - 1), UNRECORDED_MAX_MS);
          const seconds = Math.round(wait / 100) / 10;
          this.logger?.warn(recorded === null
            ? `live streams: ${venue.id} (${(error as Error).message}); not in the database yet (a worker's market job adds its venues), trying again in ${seconds} s`
            : `live streams: ${venue.id} (${(error as Error).message}); reconnecting in ${seconds} s, then resynchronising from REST`);
        }
        await this.pause(wait);
      }
    }
  }

  /** whether a failure came from a REST read (the gate records it) or from the stream */
  private stage(error: unknown): 'rest' | 'stream' {
    return this.venue.holdUntil > this.venue.clock.now() || (error as Error)?.name === 'BadVenueAnswer' ? 'rest' : 'stream';
  }

  /** A market's newest price, by the venue's own time (a stream message may predate the REST snapshot). */
  private keep(item: Latest) {
    const kept = this.latest.get(item.symbol);
    if (!kept || kept.at <= item.at) this.latest.set(item.symbol, item);
  }

  private down() {
    if (this.state === 'up') this.gap = true;
    this.state = 'down';
    this.latest = new Map();
  }

  /** A batch of tickers as prices; one that is not a positive decimal price rejects the whole batch. */
  private parse(tickers: Record<string, Ticker>): Latest[] {
    const batch: Latest[] = [];
    for (const ticker of Object.values(tickers)) {
      // decimal strings (the shared instance reads numbers as strings), or numbers
      const value: unknown = ticker?.last ?? ticker?.close;
      const price = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : null) : typeof value === 'string' ? value : null;
      if (!price || !DECIMAL.test(price) || !(Number(price) > 0) || typeof ticker.symbol !== 'string') {
        throw new Error(`malformed ticker ${JSON.stringify(ticker?.symbol ?? null)}`);
      }
      const at = typeof ticker.timestamp === 'number' && Number.isFinite(ticker.timestamp) ? new Date(ticker.timestamp) : new Date();
      batch.push({ symbol: ticker.symbol, price, at: at.toISOString() });
    }
    return batch;
  }

  async close() {
    this.closed = true;
    this.wake?.();
    await this.venue.exchange.close().catch(() => {});
  }
}

/**
 * The venue's next tickers: ccxt pro's watchTickers, or (a venue it streams one market per
 * subscription, htx) the first of its markets' watchTicker to resolve; the others stay pending in
 * ccxt (one future per market), so each call subscribes only what is not yet subscribed.
 */
function watchTickers(exchange: Exchange, symbols: string[]): Promise<unknown> {
  if (exchange.has['watchTickers']) return exchange.watchTickers(symbols);
  return Promise.race(symbols.map(async (symbol) => ({ [symbol]: await exchange.watchTicker(symbol) })));
}

export type VenueFeedsConfig = Pick<Config, 'EXCHANGES' | 'EXCHANGE_URLS' | 'EXCHANGE_TIMEOUT_MS' | 'EXCHANGE_BUDGET_MS' | 'STREAM_MAX_AGE_SECONDS'>
  & Partial<Pick<Config, 'STREAM_CANDLES' | 'STREAM_CANDLE_WAIT_SECONDS' | 'STREAM_CANDLE_CHECK_SECONDS' | 'database'>>;

export class VenueFeeds {
  /** the venues whose tickers ccxt pro streams (mexc, an unverified venue: read through REST alone) */
  readonly venueIds: string[];
  /** the feeds of the venues this process holds (its share of the venue leases) */
  private readonly feeds = new Map<string, VenueFeed>();
  private readonly open: (id: string) => VenueFeed;
  private readonly query: Query;
  /** the venues' one-minute candles (./candles.ts), beside their tickers */
  readonly candles: CandleFeeds | null;

  /** exchanges: the REST source whose venue instances the streams share; default the process's own */
  constructor(config: VenueFeedsConfig, query: Query, logger?: Logger, exchanges?: ExchangesSource) {
    this.query = query;
    const settings = exchangesSettings(config);
    const source = exchanges ?? sharedExchangesSource(settings);
    this.candles = (config.STREAM_CANDLES ?? 'on') === 'on'
      // a candle channel pushes only when its market trades (binance's every 2 s): a connection of quiet
      // markets is silent for a while without having stalled
      ? new CandleFeeds(source, { stallMs: Math.max(config.STREAM_MAX_AGE_SECONDS, CANDLE_STALL_SECONDS) * 1000, waitMs: (config.STREAM_CANDLE_WAIT_SECONDS ?? 10) * 1000, checkMs: (config.STREAM_CANDLE_CHECK_SECONDS ?? 60) * 1000 }, (id) => this.markets(id), query, logger, config.database)
      : null;
    // a venue whose tickers ccxt pro cannot stream (mexc, an unverified venue) is read through REST
    // alone; with the candle feeds on it is held all the same, for its candles filled from REST at each minute
    this.venueIds = source.venueIds.filter((id) => streamsTickers(id) || this.candles !== null);
    this.open = (id) => new VenueFeed(source.venue(id), { baseUrl: settings.urls?.[id], stallMs: config.STREAM_MAX_AGE_SECONDS * 1000 }, () => this.markets(id), query, logger);
  }

  /** Streams exactly the venues held: a feed (tickers, candles) opened for each newly held, closed for each given up. */
  async hold(venues: readonly string[]): Promise<void> {
    const held = new Set(venues.filter((id) => this.venueIds.includes(id)));
    const dropped = [...this.feeds.values()].filter((feed) => !held.has(feed.id));
    for (const feed of dropped) this.feeds.delete(feed.id);
    await Promise.all([...dropped.map((feed) => feed.close()), this.candles?.hold([...held])]);
    for (const id of held) if (streamsTickers(id) && !this.feeds.has(id)) this.feeds.set(id, this.open(id));
  }

  /** The spot markets of the venue mapped to a coin, deepest first: what the index is made of. */
  private async markets(venue: string): Promise<string[]> {
    const rows = await this.query(
      `select m.symbol from market.venue_markets m
       join market.exchanges e on e.id = m.exchange_id and e.slug = $1
       left join market.pair_keys k on k.base_coin_id = m.base_coin_id and k.quote_symbol = m.quote
       left join market.tickers t on t.pair_id = k.id and t.exchange_id = m.exchange_id and t.instrument = 'spot'
       where m.instrument = 'spot' and m.active and m.base_coin_id is not null
       order by t.volume_usd desc nulls last, m.symbol limit $2`,
      [venue, MAX_MARKETS],
    );
    return rows.map((row) => row.symbol as string);
  }

  /** Writes what each venue sent since the last flush; a venue that went down is left out of the live price at once. */
  async flush(): Promise<{ prices: number; venues: Record<string, 'up' | 'down'> }> {
    let prices = 0;
    const venues: Record<string, 'up' | 'down'> = {};
    for (const feed of this.feeds.values()) {
      if (feed.gap) {
        feed.gap = false;
        await this.query('select market.forget_live_venue_prices($1)', [feed.id]);
      }
      const batch = feed.take();
      venues[feed.id] = feed.state;
      // only a resynchronised venue's prices count
      if (batch.length === 0 || feed.state === 'down') continue;
      try {
        const [row] = await this.query('select market.record_live_venue_prices($1, $2::text::jsonb) as n', [feed.id, JSON.stringify(batch)]);
        prices += Number(row?.n ?? 0);
      } catch {
        venues[feed.id] = 'down';
      }
    }
    return { prices, venues };
  }

  /** How often each venue was resynchronised from REST (after its first connection and each gap). */
  resyncs(): Record<string, number> {
    return Object.fromEntries([...this.feeds.values()].map((feed) => [feed.id, feed.resyncs]));
  }

  async close() {
    await this.hold([]);
    await this.candles?.close();
  }
}
