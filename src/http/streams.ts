// The live price streams of one API process (issue 35): it LISTENs on live_prices (the stream
// holder's market.refresh_live_prices announces each new version) and reads what changed since the
// version it last saw (market.live_prices_since) — after a reconnection too, so a missed NOTIFY
// costs nothing but its delay — and pushes each change to the subscribers that selected the coin.
// It also LISTENs on api_keys (as the admission cache does) and closes a revoked key's streams;
// every minute of a stream is admitted as one request against the key's quota.
import type { Context } from 'koa';
import type { ServerResponse } from 'node:http';
import type { Config } from '../config.ts';
import type { Sql } from '../db/client.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';

export interface LiveRow {
  id: number;
  slug: string;
  symbol: string;
  currency: string;
  price: string;
  at: string;
  version: string;
}

type EndReason = 'slow_consumer' | 'revoked' | 'quota_exceeded' | 'rate_limited' | 'plan_required' | 'unauthorized' | 'shutdown';

const END_MESSAGES: Record<EndReason, string> = {
  slow_consumer: 'The client did not read fast enough: its unsent events went over the bound.',
  revoked: 'The API key was revoked.',
  quota_exceeded: 'Monthly request quota exhausted (a stream counts one request per connection-minute).',
  rate_limited: 'Per-minute request limit reached.',
  plan_required: 'The key\'s plan no longer allows streams.',
  unauthorized: 'The API key is no longer valid.',
  shutdown: 'The server is shutting down; reconnect with Last-Event-ID.',
};

export class Subscriber {
  readonly keyId: number;
  readonly keyHex: string;
  readonly coins: Set<number>;
  readonly currency: string;
  readonly res: ServerResponse;
  /** the newest version this subscriber was sent (or its snapshot covered) */
  seen = 0;
  /** rows that arrived before its snapshot was written */
  private pending: LiveRow[] | null = [];
  closed = false;
  private readonly hub: StreamHub;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(hub: StreamHub, init: { keyId: number; keyHex: string; coins: number[]; currency: string; res: ServerResponse }) {
    this.hub = hub;
    this.keyId = init.keyId;
    this.keyHex = init.keyHex;
    this.coins = new Set(init.coins);
    this.currency = init.currency;
    this.res = init.res;
    init.res.on('close', () => this.close());
  }

  every(ms: number, work: () => void) {
    const timer = setInterval(work, ms);
    timer.unref();
    this.timers.push(timer);
  }

  /** Writes an event unless the socket's unsent bytes are over the bound: then the subscriber is dropped. */
  write(text: string): boolean {
    if (this.closed) return false;
    if (this.res.writableLength > this.hub.config.STREAM_BUFFER_BYTES) {
      this.end('slow_consumer');
      return false;
    }
    this.res.write(text);
    this.hub.metrics?.streamMessages.inc();
    return true;
  }

  /** The snapshot (or the changes since Last-Event-ID) is written: later rows go out as they come. */
  opened(seen: number) {
    this.seen = Math.max(this.seen, seen);
    const pending = this.pending ?? [];
    this.pending = null;
    for (const row of pending) this.deliver(row);
  }

  deliver(row: LiveRow) {
    if (!this.coins.has(row.id) || row.currency !== this.currency) return;
    if (this.pending) return void this.pending.push(row);
    const version = Number(row.version);
    if (version <= this.seen) return;
    this.seen = version;
    this.write(priceEvent(row));
  }

  /** Ends the stream with a final event saying why (`end`), then closes the connection. */
  end(reason: EndReason) {
    if (this.closed) return;
    if (reason !== 'shutdown') this.hub.metrics?.streamDropped.inc({ reason });
    // the final event goes past the bound: it is the last thing written
    this.res.end(`event: end\ndata: ${JSON.stringify({ reason, message: END_MESSAGES[reason] })}\n\n`);
    this.hub.metrics?.streamMessages.inc();
    this.close();
    // a client that does not read it does not keep the socket either
    setTimeout(() => this.res.destroy(), 1_000).unref();
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    this.hub.remove(this);
  }
}

export const priceEvent = (row: LiveRow) =>
  `id: ${row.version}\nevent: price\ndata: ${JSON.stringify({ id: row.id, slug: row.slug, symbol: row.symbol, price: row.price, currency: row.currency, at: row.at })}\n\n`;

export class StreamHub {
  readonly config: Pick<Config, 'STREAM_BUFFER_BYTES' | 'STREAM_HEARTBEAT_MS' | 'STREAM_CONNECTIONS'>;
  readonly metrics: Metrics | undefined;
  private readonly sql: Sql;
  private readonly logger: Logger | undefined;
  private readonly subscribers = new Set<Subscriber>();
  /** subscribers by coin: a change is offered only to those who selected the coin */
  private readonly byCoin = new Map<number, Set<Subscriber>>();
  private version = 0;
  private reading: Promise<void> | null = null;
  private again = false;
  private unlisten: (() => Promise<void>)[] = [];
  private closed = false;

  constructor(sql: Sql, config: StreamHub['config'], metrics?: Metrics, logger?: Logger) {
    this.sql = sql;
    this.config = config;
    this.metrics = metrics;
    this.logger = logger;
  }

  start() {
    const listen = (channel: string, onMessage: (payload: string) => void, onConnect: () => void) =>
      this.sql.listen(channel, onMessage, onConnect)
        .then(({ unlisten }) => {
          if (this.closed) void unlisten().catch(() => {});
          else this.unlisten.push(unlisten);
        })
        .catch((error) => this.logger?.warn(`streams: LISTEN ${channel} failed (${error})`));
    // (re)connected: whatever changed meanwhile is read from the versions
    void listen('live_prices', () => this.read(), () => this.read());
    void listen('api_keys', (payload) => void this.checkKeys(payload), () => void this.checkKeys('*'));
    return this;
  }

  /** Streams open for a key in this process. */
  openFor(keyId: number) {
    let count = 0;
    for (const subscriber of this.subscribers) if (subscriber.keyId === keyId) count++;
    return count;
  }

  limitFor(plan: string) {
    return this.config.STREAM_CONNECTIONS[plan] ?? 1;
  }

  add(subscriber: Subscriber) {
    this.subscribers.add(subscriber);
    for (const coin of subscriber.coins) {
      let set = this.byCoin.get(coin);
      if (!set) this.byCoin.set(coin, (set = new Set()));
      set.add(subscriber);
    }
    this.metrics?.streamSubscribers.set(this.subscribers.size);
    subscriber.every(this.config.STREAM_HEARTBEAT_MS, () => subscriber.write(': heartbeat\n\n'));
  }

  remove(subscriber: Subscriber) {
    if (!this.subscribers.delete(subscriber)) return;
    for (const coin of subscriber.coins) {
      const set = this.byCoin.get(coin);
      set?.delete(subscriber);
      if (set?.size === 0) this.byCoin.delete(coin);
    }
    this.metrics?.streamSubscribers.set(this.subscribers.size);
  }

  /** Reads the changes since the last version seen, once at a time (a NOTIFY meanwhile reads again). */
  read() {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = (async () => {
      do {
        this.again = false;
        const currencies = [...new Set([...this.subscribers].map((subscriber) => subscriber.currency))];
        if (currencies.length === 0) {
          // nobody to tell: only where the versions are (a subscriber's snapshot covers the past)
          const [row] = await this.sql<{ version: string | null }[]>`select max(version)::text as version from market.live_prices`;
          this.version = Math.max(this.version, Number(row?.version ?? 0));
          continue;
        }
        const rows = await this.sql<LiveRow[]>`select * from market.live_prices_since(${this.version}, ${currencies}::text[])`;
        for (const row of rows) {
          this.version = Math.max(this.version, Number(row.version));
          for (const subscriber of this.byCoin.get(row.id) ?? []) subscriber.deliver(row);
        }
      } while (this.again && !this.closed);
    })()
      .catch((error) => this.logger?.warn(`streams: reading live prices failed (${(error as Error).message})`))
      .finally(() => (this.reading = null));
  }

  /** A key changed (its hash in hex, or `*`): the streams of keys no longer valid end. */
  async checkKeys(payload: string) {
    const affected = [...this.subscribers].filter((subscriber) => payload === '*' || subscriber.keyHex === payload);
    if (affected.length === 0) return;
    const hexes = [...new Set(affected.map((subscriber) => subscriber.keyHex))];
    try {
      const valid = await this.sql<{ hex: string }[]>`
        select encode(key_hash, 'hex') as hex from app.api_keys where key_hash = any (select decode(x, 'hex') from unnest(${hexes}::text[]) x) and app.key_live(revoked_at) and app.owner_enabled(owner)`;
      const still = new Set(valid.map((row) => row.hex));
      for (const subscriber of affected) if (!still.has(subscriber.keyHex)) subscriber.end('revoked');
    } catch (error) {
      this.logger?.warn(`streams: checking keys failed (${(error as Error).message})`);
    }
  }

  async close() {
    this.closed = true;
    for (const subscriber of [...this.subscribers]) subscriber.end('shutdown');
    await Promise.all(this.unlisten.map((unlisten) => unlisten().catch(() => {})));
    await this.reading;
  }
}

/** The response head of a stream, written at once: the quota headers admission set, then the event-stream ones. */
export function openStream(ctx: Context) {
  const list = (ctx.state.head as string[] | undefined) ?? [];
  ctx.state.head = undefined;
  list.push('Content-Type', 'text/event-stream; charset=utf-8', 'Cache-Control', 'no-store', 'X-Accel-Buffering', 'no');
  ctx.respond = false;
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.res.writeHead(200, list);
}
