// The real venues' ticker streams through ccxt pro (the same classes and EXCHANGE_URLS rebasing
// as the REST source, src/sources/exchanges/venues.ts, WebSocket URLs included): one watch loop per
// venue over the spot markets the price index uses, reconnecting with exponential back-off. The
// latest price per market is kept in memory and written once a tick; a message that does not parse
// as a positive price leaves its venue out (down) until a good one arrives — nothing of it is written.
import type { Exchange, Ticker } from 'ccxt';
import type { Config } from '../../config.ts';
import type { Logger } from '../../log.ts';
import type { Query } from '../aggregates.ts';
import { createVenue, parseExchanges, parseExchangeUrls, type VenueId } from '../exchanges/venues.ts';

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
  state: 'up' | 'down' = 'down';
  private closed = false;
  private exchange: Exchange | null = null;
  readonly done: Promise<void>;

  readonly id: VenueId;
  private readonly options: { baseUrl?: string; timeoutMs: number };
  private readonly markets: () => Promise<string[]>;
  private readonly logger: Logger | undefined;

  constructor(id: VenueId, options: { baseUrl?: string; timeoutMs: number }, markets: () => Promise<string[]>, logger?: Logger) {
    this.id = id;
    this.options = options;
    this.markets = markets;
    this.logger = logger;
    this.done = this.loop();
  }

  /** The prices received since the last take, and whether the venue is up. */
  take(): Latest[] {
    const taken = [...this.latest.values()];
    this.latest = new Map();
    return taken;
  }

  private async loop() {
    let backoff = 1_000;
    while (!this.closed) {
      try {
        this.exchange = createVenue(this.id, { baseUrl: this.options.baseUrl, timeoutMs: this.options.timeoutMs });
        websocketSchemes(this.exchange);
        // a plain ws:// URL (a loopback replay) needs ccxt's http agent loaded first
        if (/^http:/i.test(this.options.baseUrl ?? '')) await (this.exchange as Exchange & { loadHttpProxyAgent(): Promise<unknown> }).loadHttpProxyAgent();
        await this.exchange.loadMarkets();
        const symbols = await this.markets();
        if (symbols.length === 0) throw new Error('no market of the index on this venue');
        while (!this.closed) {
          const tickers = (await this.exchange.watchTickers(symbols)) as Record<string, Ticker>;
          this.receive(tickers);
          backoff = 1_000;
        }
      } catch (error) {
        if (this.closed) break;
        this.state = 'down';
        this.latest = new Map();
        this.logger?.warn(`live streams: ${this.id} (${(error as Error).message}); reconnecting in ${backoff / 1000} s`);
        await this.exchange?.close().catch(() => {});
        await new Promise((resolve) => setTimeout(resolve, backoff).unref());
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  /** A batch of tickers; one that is not a positive decimal price makes the venue down, and nothing of the batch is kept. */
  receive(tickers: Record<string, Ticker>) {
    const batch: Latest[] = [];
    for (const ticker of Object.values(tickers)) {
      const value = ticker?.last ?? ticker?.close;
      const price = typeof value === 'number' && Number.isFinite(value) && value > 0 ? String(value) : null;
      if (!price || !DECIMAL.test(price) || typeof ticker.symbol !== 'string') {
        this.state = 'down';
        throw new Error(`malformed ticker ${JSON.stringify(ticker?.symbol ?? null)}`);
      }
      const at = typeof ticker.timestamp === 'number' && Number.isFinite(ticker.timestamp) ? new Date(ticker.timestamp) : new Date();
      batch.push({ symbol: ticker.symbol, price, at: at.toISOString() });
    }
    for (const item of batch) this.latest.set(item.symbol, item);
    this.state = 'up';
  }

  async close() {
    this.closed = true;
    await this.exchange?.close().catch(() => {});
  }
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

  constructor(config: Pick<Config, 'EXCHANGES' | 'EXCHANGE_URLS' | 'EXCHANGE_TIMEOUT_MS'>, query: Query, logger?: Logger) {
    this.query = query;
    const urls = parseExchangeUrls(config.EXCHANGE_URLS);
    this.feeds = parseExchanges(config.EXCHANGES).map(
      (id) => new VenueFeed(id, { baseUrl: urls[id], timeoutMs: config.EXCHANGE_TIMEOUT_MS }, () => this.markets(id), logger),
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

  /** Writes what each venue sent since the last flush; a venue that fails to write is down. */
  async flush(): Promise<{ prices: number; venues: Record<string, 'up' | 'down'> }> {
    let prices = 0;
    const venues: Record<string, 'up' | 'down'> = {};
    for (const feed of this.feeds) {
      const batch = feed.take();
      venues[feed.id] = feed.state;
      if (batch.length === 0) continue;
      try {
        const [row] = await this.query('select market.record_live_venue_prices($1, $2::text::jsonb) as n', [feed.id, JSON.stringify(batch)]);
        prices += Number(row?.n ?? 0);
      } catch {
        venues[feed.id] = 'down';
      }
    }
    return { prices, venues };
  }

  async close() {
    await Promise.all(this.feeds.map((feed) => feed.close()));
  }
}
