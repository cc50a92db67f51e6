// The real venues' ticker streams through ccxt pro (the same classes and EXCHANGE_URLS rebasing
// as the REST source, src/sources/exchanges/venues.ts, WebSocket URLs included): one watch loop per
// venue over the spot markets the price index uses, reconnecting with exponential back-off. The
// latest price per market is kept in memory and written once a tick. A gap — a disconnection, a
// stream silent for STREAM_MAX_AGE_SECONDS (ccxt drops a message it cannot parse, so garbage ends
// as silence), a ticker that is not a positive price — takes the venue out of the live price at
// once (its live venue prices are deleted) and reconnects; once subscribed again, the venue's REST
// ticker snapshot (as the REST source reads it) resynchronises it before its stream counts again.
import type { Exchange, Ticker } from 'ccxt';
import type { Config } from '../../config.ts';
import type { Logger } from '../../log.ts';
import type { Query } from '../aggregates.ts';
import { createVenue, parseExchanges, parseExchangeUrls, type VenueId } from '../exchanges/venues.ts';
import { reading, tickerRows } from '../exchanges/answers.ts';

const DECIMAL = /^\d+(\.\d+)?([eE][-+]?\d+)?$/;
const MAX_BACKOFF_MS = 60_000;
/** markets per venue stream: the deepest by 24h volume */
const MAX_MARKETS = 200;

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
  private closed = false;
  private exchange: Exchange | null = null;
  readonly done: Promise<void>;

  readonly id: VenueId;
  private readonly options: { baseUrl?: string; timeoutMs: number; stallMs: number };
  private readonly markets: () => Promise<string[]>;
  private readonly logger: Logger | undefined;

  constructor(id: VenueId, options: { baseUrl?: string; timeoutMs: number; stallMs: number }, markets: () => Promise<string[]>, logger?: Logger) {
    this.id = id;
    this.options = options;
    this.markets = markets;
    this.logger = logger;
    this.done = this.loop();
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
  private async watch(exchange: Exchange, symbols: string[]): Promise<Record<string, Ticker>> {
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no ticker for ${this.options.stallMs / 1000} s`)), this.options.stallMs);
    });
    try {
      const woke = (await Promise.race([exchange.watchTickers(symbols), stalled])) as Record<string, Ticker>;
      const received: Record<string, Ticker> = { ...woke };
      const cache = (exchange.tickers ?? {}) as Record<string, Ticker>;
      for (const symbol of symbols) {
        const ticker = cache[symbol];
        if (ticker && this.read.get(symbol) !== ticker) received[symbol] = ticker;
      }
      for (const [symbol, ticker] of Object.entries(received)) this.read.set(symbol, ticker);
      return received;
    } finally {
      clearTimeout(timer);
    }
  }

  private async loop() {
    let backoff = 1_000;
    while (!this.closed) {
      try {
        const exchange = (this.exchange = createVenue(this.id, { baseUrl: this.options.baseUrl, timeoutMs: this.options.timeoutMs }));
        websocketSchemes(exchange);
        quietClients(exchange, this.logger, this.id);
        // a plain ws:// URL (a loopback replay) needs ccxt's http agent loaded first
        if (/^http:/i.test(this.options.baseUrl ?? '')) await (exchange as Exchange & { loadHttpProxyAgent(): Promise<unknown> }).loadHttpProxyAgent();
        await exchange.loadMarkets();
        const symbols = await this.markets();
        if (symbols.length === 0) throw new Error('no market of the index on this venue');
        // subscribed first, then the REST snapshot: what the gap missed, and nothing missed after it
        const first = this.watch(exchange, symbols);
        first.catch(() => {});
        const venue = { id: this.id };
        const wanted = new Set(symbols);
        const snapshot = tickerRows(venue, await reading(venue, 'tickers', () => exchange.fetchTickers()));
        const rest = this.parse(Object.fromEntries(snapshot.filter((ticker) => wanted.has(String(ticker.symbol))).map((ticker) => [ticker.symbol, ticker])));
        if (this.closed) break;
        for (const item of rest) this.keep(item);
        this.resyncs++;
        this.state = 'up';
        backoff = 1_000;
        for (const item of this.parse(await first)) this.keep(item);
        while (!this.closed) {
          for (const item of this.parse(await this.watch(exchange, symbols))) this.keep(item);
        }
      } catch (error) {
        if (this.closed) break;
        this.down();
        this.logger?.warn(`live streams: ${this.id} (${(error as Error).message}); reconnecting in ${backoff / 1000} s, then resynchronising from REST`);
        await this.exchange?.close().catch(() => {});
        await new Promise((resolve) => setTimeout(resolve, backoff).unref());
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
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
      const value = ticker?.last ?? ticker?.close;
      const price = typeof value === 'number' && Number.isFinite(value) && value > 0 ? String(value) : null;
      if (!price || !DECIMAL.test(price) || typeof ticker.symbol !== 'string') {
        throw new Error(`malformed ticker ${JSON.stringify(ticker?.symbol ?? null)}`);
      }
      const at = typeof ticker.timestamp === 'number' && Number.isFinite(ticker.timestamp) ? new Date(ticker.timestamp) : new Date();
      batch.push({ symbol: ticker.symbol, price, at: at.toISOString() });
    }
    return batch;
  }

  async close() {
    this.closed = true;
    await this.exchange?.close().catch(() => {});
  }
}

/** ccxt's WebSocket clients print what they cannot parse with console.log: into the log, as a debug line, instead of stdout. */
function quietClients(exchange: Exchange, logger: Logger | undefined, id: string) {
  const client = exchange.client.bind(exchange);
  exchange.client = (url: string) => {
    const made = client(url);
    (made as unknown as { log: (...args: unknown[]) => void }).log = (...args) => logger?.debug(`live streams: ${id}: ${args.slice(1).map(String).join(' ').slice(0, 300)}`);
    return made;
  };
}

/** ccxt's WebSocket client takes ws(s) URLs: EXCHANGE_URLS' http(s) base becomes ws(s) for them. */
function websocketSchemes(exchange: Exchange) {
  const api = exchange.urls['api'] as Record<string, unknown>;
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return node.replace(/^http(s?):\/\//i, 'ws$1://');
    if (node && typeof node === 'object') for (const [key, value] of Object.entries(node)) (node as Record<string, unknown>)[key] = walk(value);
    return node;
  };
  if (api?.['ws']) api['ws'] = walk(api['ws']);
}

export class VenueFeeds {
  private readonly feeds: VenueFeed[];
  private readonly query: Query;

  constructor(config: Pick<Config, 'EXCHANGES' | 'EXCHANGE_URLS' | 'EXCHANGE_TIMEOUT_MS' | 'STREAM_MAX_AGE_SECONDS'>, query: Query, logger?: Logger) {
    this.query = query;
    const urls = parseExchangeUrls(config.EXCHANGE_URLS);
    this.feeds = parseExchanges(config.EXCHANGES).map(
      (id) => new VenueFeed(id, { baseUrl: urls[id], timeoutMs: config.EXCHANGE_TIMEOUT_MS, stallMs: config.STREAM_MAX_AGE_SECONDS * 1000 }, () => this.markets(id), logger),
    );
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
    for (const feed of this.feeds) {
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
    return Object.fromEntries(this.feeds.map((feed) => [feed.id, feed.resyncs]));
  }

  async close() {
    await Promise.all(this.feeds.map((feed) => feed.close()));
  }
}
