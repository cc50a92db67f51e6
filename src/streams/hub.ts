// The live-price hub of one API process (issue 35), over Server-Sent Events and WebSocket alike:
// one hub, one subscriber class, and a transport (how bytes reach the client) and a wire format
// (SSE text or JSON messages) per protocol. The hub subscribes to live_prices on the process's
// listener (src/db/listener.ts; the stream holder's market.refresh_live_prices announces each new
// version) and reads what changed since the version it last saw (market.live_prices_since) — after
// the listener resynchronises too, so a missed NOTIFY costs nothing but its delay — and offers each
// change to the subscribers of that coin. It also subscribes to api_keys (as admission does) and
// closes a revoked key's streams; it keeps the streams open per key in app.stream_slots, so the
// per-plan limit holds across processes; and every minute a stream is open is admitted again as
// one request against the key's quota. A wing: src/service.ts hands it to the app, whose stream
// endpoints (src/api/stream.ts) see it as LivePrices (src/http/live-prices.ts).
import type { Context } from 'koa';
import type { ServerResponse } from 'node:http';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { TransactionSql } from 'postgres';
import type { WebSocket } from 'ws';
import type { Config } from '../config.ts';
import type { Sql } from '../db/client.ts';
import type { Listener } from '../db/listener.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { ApiError } from '../http/errors.ts';
import { closeCode, type EndReason, type LiveSession, type LivePrices, type StreamKey } from '../http/live-prices.ts';

export interface LiveRow {
  id: number;
  slug: string;
  symbol: string;
  currency: string;
  price: string;
  at: string;
  version: string;
  /** live: the live index price; minute: the latest minute price, in a snapshot before a coin has a live one */
  kind: 'live' | 'minute';
}

const END_MESSAGES: Record<EndReason, string> = {
  slow_consumer: 'The client did not read fast enough: its unsent events went over the bound.',
  revoked: 'The API key was revoked.',
  quota_exceeded: 'Monthly request quota exhausted (a stream counts one request per connection-minute).',
  rate_limited: 'Per-minute request limit reached.',
  plan_required: 'The key\'s plan no longer allows streams.',
  unauthorized: 'The API key is no longer valid.',
  shutdown: 'The server is shutting down; reconnect (with Last-Event-ID over SSE).',
};

const MINUTE_MS = 60_000;

/** A price as both protocols send it. */
const priceData = (row: LiveRow) => ({ id: row.id, slug: row.slug, symbol: row.symbol, price: row.price, currency: row.currency, at: row.at, kind: row.kind });

/** How one protocol writes to its connection. */
export interface Transport {
  /** bytes accepted and not yet sent */
  buffered(): number;
  send(message: string): void;
  /** writes the final message and closes (code: the WebSocket close code) */
  finish(message: string, code: number): void;
  destroy(): void;
  onClose(listener: () => void): void;
  /** every STREAM_HEARTBEAT_MS: a comment line (SSE) or a ping (WebSocket) */
  heartbeat(): void;
  price(row: LiveRow): string;
  snapshot(rows: LiveRow[], currency: string, newest: number): string;
  end(reason: EndReason): string;
}

export function sseTransport(res: ServerResponse): Transport {
  return {
    buffered: () => res.writableLength,
    send: (message) => void res.write(message),
    finish: (message) => void res.end(message),
    destroy: () => void res.destroy(),
    onClose: (listener) => void res.on('close', listener),
    heartbeat: () => void res.write(': heartbeat\n\n'),
    price: (row) => `id: ${row.version}\nevent: price\ndata: ${JSON.stringify(priceData(row))}\n\n`,
    snapshot: (rows, currency, newest) =>
      `${newest ? `id: ${newest}\n` : ''}event: snapshot\ndata: ${JSON.stringify({ data: rows.map(priceData), meta: { currency, count: rows.length } })}\n\n`,
    end: (reason) => `event: end\ndata: ${JSON.stringify({ reason, message: END_MESSAGES[reason] })}\n\n`,
  };
}

/** WebSocket close codes: a refusal's (closeCode), 1008 a slow consumer, 1001 shutdown. */
const END_CODES: Record<EndReason, number> = {
  slow_consumer: 1008, revoked: closeCode(401), unauthorized: closeCode(401), quota_exceeded: closeCode(429), rate_limited: closeCode(429),
  plan_required: closeCode(403), shutdown: 1001,
};

export function socketTransport(ws: WebSocket): Transport {
  let alive = true;
  ws.on('pong', () => (alive = true));
  return {
    buffered: () => ws.bufferedAmount,
    send: (message) => ws.send(message),
    finish: (message, code) => {
      ws.send(message);
      ws.close(code);
    },
    destroy: () => ws.terminate(),
    onClose: (listener) => void ws.on('close', listener),
    // a peer that did not answer the last ping is gone
    heartbeat: () => {
      if (!alive) return ws.terminate();
      alive = false;
      ws.ping();
    },
    price: (row) => JSON.stringify({ type: 'price', version: row.version, data: priceData(row) }),
    snapshot: (rows, currency, newest) =>
      JSON.stringify({ type: 'snapshot', version: String(newest), data: rows.map(priceData), meta: { currency, count: rows.length } }),
    end: (reason) => JSON.stringify({ type: 'end', reason, message: END_MESSAGES[reason] }),
  };
}

export class Subscriber {
  readonly key: StreamKey;
  readonly transport: Transport;
  /** the coins selected, and in which currencies */
  readonly wants = new Map<number, Set<string>>();
  /** the newest version sent per coin and currency */
  private readonly seen = new Map<string, number>();
  /** versions up to this one were sent before (Last-Event-ID) */
  private floor = 0;
  /** rows that arrived while a snapshot was being read: sent after it */
  private pending: LiveRow[] | null = null;
  private loading = 0;
  closed = false;
  private readonly hub: StreamHub;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(hub: StreamHub, key: StreamKey, transport: Transport) {
    this.hub = hub;
    this.key = key;
    this.transport = transport;
    transport.onClose(() => this.close());
  }

  /** how many coin-currency pairs are selected */
  get size() {
    let size = 0;
    for (const currencies of this.wants.values()) size += currencies.size;
    return size;
  }

  every(ms: number, work: () => void) {
    const timer = setInterval(work, ms);
    timer.unref();
    this.timers.push(timer);
  }

  /** Writes a message unless the unsent bytes are over the bound: then the subscriber is dropped. */
  write(text: string): boolean {
    if (this.closed) return false;
    if (this.transport.buffered() > this.hub.config.STREAM_BUFFER_BYTES) {
      this.end('slow_consumer');
      return false;
    }
    this.transport.send(text);
    this.hub.metrics?.streamMessages.inc();
    return true;
  }

  deliver(row: LiveRow) {
    if (!this.wants.get(row.id)?.has(row.currency)) return;
    if (this.pending) return void this.pending.push(row);
    const version = Number(row.version);
    const pair = `${row.id}:${row.currency}`;
    if (version <= this.floor || version <= (this.seen.get(pair) ?? 0)) return;
    this.seen.set(pair, version);
    this.write(this.transport.price(row));
  }

  /** A snapshot (or the changes since Last-Event-ID) is being read: what arrives meanwhile waits for it. */
  loadingStarted() {
    this.loading++;
    this.pending ??= [];
  }

  /** The snapshot's rows were written (or not, on failure): what waited goes out now, minus what they covered. */
  loaded(rows: LiveRow[], floor = 0) {
    this.floor = Math.max(this.floor, floor);
    for (const row of rows) {
      const pair = `${row.id}:${row.currency}`;
      this.seen.set(pair, Math.max(this.seen.get(pair) ?? 0, Number(row.version)));
    }
    if (--this.loading > 0) return;
    const pending = this.pending ?? [];
    this.pending = null;
    for (const row of pending) this.deliver(row);
  }

  /** Ends the stream with a final message saying why, then closes the connection. */
  end(reason: EndReason) {
    if (this.closed) return;
    if (reason !== 'shutdown') this.hub.metrics?.streamDropped.inc({ reason });
    // the final message goes past the bound: it is the last thing written
    this.transport.finish(this.transport.end(reason), END_CODES[reason]);
    this.hub.metrics?.streamMessages.inc();
    this.close();
    // a client that does not read it does not keep the connection either
    setTimeout(() => this.transport.destroy(), 1_000).unref();
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    this.hub.remove(this);
  }
}

export class StreamHub implements LivePrices {
  readonly config: Pick<Config, 'STREAM_BUFFER_BYTES' | 'STREAM_HEARTBEAT_MS' | 'STREAM_CONNECTIONS' | 'STREAM_LEASE_SECONDS'>;
  readonly metrics: Metrics | undefined;
  /** this process in app.stream_slots */
  readonly process = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly sql: Sql;
  private readonly logger: Logger | undefined;
  private readonly subscribers = new Set<Subscriber>();
  /** subscribers by coin: a change is offered only to those who selected the coin */
  private readonly byCoin = new Map<number, Set<Subscriber>>();
  /** open streams by key id, as counted in app.stream_slots */
  private readonly perKey = new Map<number, number>();
  private version = 0;
  private reading: Promise<void> | null = null;
  private again = false;
  private readonly listener: Listener;
  private readonly unsubscriptions: (() => void)[] = [];
  private renewal: NodeJS.Timeout | null = null;
  private closed = false;
  /** how often an open stream is admitted again: each minute is one request (a test shortens it) */
  readmitMs = MINUTE_MS;

  constructor(sql: Sql, listener: Listener, config: StreamHub['config'], metrics?: Metrics, logger?: Logger) {
    this.sql = sql;
    this.listener = listener;
    this.config = config;
    this.metrics = metrics;
    this.logger = logger;
  }

  start() {
    // told again after a reconnection: whatever changed meanwhile is read from the versions
    this.unsubscriptions.push(
      this.listener.subscribe('live_prices', { message: () => this.read(), resync: () => this.read() }),
      this.listener.subscribe('api_keys', { message: (payload) => void this.checkKeys(payload), resync: () => void this.checkKeys('*') }),
    );
    // this process's claims on stream slots stay valid while it runs
    this.renewal = setInterval(() => void this.renew(), (this.config.STREAM_LEASE_SECONDS * 1000) / 3);
    this.renewal.unref();
    return this;
  }

  /** Streams open for a key in this process. */
  openFor(keyId: number) {
    return this.perKey.get(keyId) ?? 0;
  }

  limitFor(plan: string) {
    return this.config.STREAM_CONNECTIONS[plan] ?? 1;
  }

  /** GET /api/v1/stream/prices: the SSE stream of a request admitted for `key`. */
  async serveEvents(ctx: Context, key: StreamKey, coins: number[], currency: string, since?: number) {
    const subscriber = new Subscriber(this, key, sseTransport(ctx.res));
    await this.open(subscriber);
    try {
      await this.subscribe(subscriber, coins, currency, since, () => openStream(ctx));
    } catch (error) {
      subscriber.close();
      throw error;
    }
  }

  /** /api/v1/ws: the stream of an accepted WebSocket, its coins added and taken off by its messages. */
  async openSocket(ws: WebSocket, key: StreamKey): Promise<LiveSession> {
    const subscriber = new Subscriber(this, key, socketTransport(ws));
    await this.open(subscriber);
    return {
      get size() {
        return subscriber.size;
      },
      selects: (coin, currency) => subscriber.wants.get(coin)?.has(currency) ?? false,
      subscribe: (coins, currency) => this.subscribe(subscriber, coins, currency),
      unsubscribe: (coins, currency) => this.unsubscribe(subscriber, coins, currency),
      close: () => subscriber.close(),
    };
  }

  /**
   * Opens a stream for its key: refused (429 too_many_streams) when the key has its plan's limit of
   * streams open over all API processes; then heartbeats, and admission again each minute.
   */
  async open(subscriber: Subscriber) {
    const { key } = subscriber;
    const limit = this.limitFor(key.plan);
    const refused = () => new ApiError(429, 'too_many_streams', `At most ${limit} concurrent streams per key on the ${key.plan} plan.`, { limit });
    if (this.openFor(key.id) >= limit) throw refused();
    // counted here before the database answers: two opening at once in this process are not both let through
    this.perKey.set(key.id, this.openFor(key.id) + 1);
    let claimed = false;
    try {
      const [row] = await this.sql<{ ok: boolean }[]>`
        select app.claim_stream_slot(${key.id}, ${this.process}, ${limit}, ${this.config.STREAM_LEASE_SECONDS}) as ok`;
      claimed = row?.ok === true;
    } finally {
      if (!claimed) this.uncount(key.id);
    }
    if (!claimed) throw refused();
    if (subscriber.closed) {
      // the client went while its slot was claimed
      this.uncount(key.id);
      void this.renew();
      return;
    }
    this.subscribers.add(subscriber);
    this.metrics?.streamSubscribers.set(this.subscribers.size);
    subscriber.every(this.config.STREAM_HEARTBEAT_MS, () => {
      if (subscriber.transport.buffered() > this.config.STREAM_BUFFER_BYTES) return subscriber.end('slow_consumer');
      subscriber.transport.heartbeat();
      this.metrics?.streamMessages.inc();
    });
    subscriber.every(this.readmitMs, () => void subscriber.key.again().then((reason) => reason && subscriber.end(reason), () => {}));
  }

  /**
   * Adds coins (in a currency) to a subscriber and sends what it needs first: the snapshot of those
   * coins, or with `since` (Last-Event-ID) the changes after that version. `beforeWrite`: once
   * they are read (an SSE response's head, written only when nothing can fail any more).
   */
  async subscribe(subscriber: Subscriber, coins: number[], currency: string, since?: number, beforeWrite?: () => void) {
    // registered before the snapshot is read: nothing that changes meanwhile is missed
    subscriber.loadingStarted();
    for (const coin of coins) {
      let currencies = subscriber.wants.get(coin);
      if (!currencies) subscriber.wants.set(coin, (currencies = new Set()));
      currencies.add(currency);
      let set = this.byCoin.get(coin);
      if (!set) this.byCoin.set(coin, (set = new Set()));
      set.add(subscriber);
    }
    let rows: LiveRow[] = [];
    let replayed = false;
    try {
      // resuming (Last-Event-ID): every change missed while the replay buffer reaches back to it,
      // else a snapshot — read in one snapshot of the database, so the buffer is not trimmed between
      if (since !== undefined) {
        [replayed, rows] = await this.sql.begin('isolation level repeatable read read only', async (tx) => {
          const [cover] = await tx<{ covered: boolean }[]>`select market.live_replay_covers(${since}) as covered`;
          if (!cover?.covered) return [false, [...await this.snapshot(tx, coins, currency)]] as const;
          return [true, [...await tx<LiveRow[]>`select * from market.live_price_changes_since(${since}, ${coins}::int[], ${[currency]}::text[])`]] as const;
        }) as [boolean, LiveRow[]];
      } else {
        rows = [...await this.snapshot(this.sql, coins, currency)];
      }
      const newest = rows.reduce((max, row) => Math.max(max, Number(row.version)), replayed ? since! : 0);
      beforeWrite?.();
      if (replayed) for (const row of rows) subscriber.write(subscriber.transport.price(row));
      else subscriber.write(subscriber.transport.snapshot(rows, currency, newest));
    } finally {
      subscriber.loaded(rows, replayed ? since : undefined);
    }
  }

  /** A snapshot never starts empty for a priced coin: its minute price until it has a live one. */
  private snapshot(sql: Sql | TransactionSql, coins: number[], currency: string) {
    return sql<LiveRow[]>`select * from market.live_price_snapshot(${coins}::int[], ${[currency]}::text[])`;
  }

  /** Takes coins (in a currency) off a subscriber. */
  unsubscribe(subscriber: Subscriber, coins: number[], currency: string) {
    for (const coin of coins) {
      const currencies = subscriber.wants.get(coin);
      currencies?.delete(currency);
      if (currencies?.size) continue;
      subscriber.wants.delete(coin);
      this.offCoin(subscriber, coin);
    }
  }

  private offCoin(subscriber: Subscriber, coin: number) {
    const set = this.byCoin.get(coin);
    set?.delete(subscriber);
    if (set?.size === 0) this.byCoin.delete(coin);
  }

  remove(subscriber: Subscriber) {
    for (const coin of subscriber.wants.keys()) this.offCoin(subscriber, coin);
    if (!this.subscribers.delete(subscriber)) return;
    this.uncount(subscriber.key.id);
    this.metrics?.streamSubscribers.set(this.subscribers.size);
    void this.renew();
  }

  private uncount(keyId: number) {
    const left = this.openFor(keyId) - 1;
    if (left > 0) this.perKey.set(keyId, left);
    else this.perKey.delete(keyId);
  }

  /** Writes this process's open streams per key to app.stream_slots, renewing them. */
  private async renew() {
    try {
      await this.sql`select app.renew_stream_slots(${this.process}, ${JSON.stringify(Object.fromEntries(this.perKey))}::text::jsonb, ${this.config.STREAM_LEASE_SECONDS})`;
    } catch (error) {
      this.logger?.warn(`streams: renewing the stream slots failed (${(error as Error).message})`);
    }
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
        const currencies = new Set<string>();
        for (const subscriber of this.subscribers) for (const set of subscriber.wants.values()) for (const currency of set) currencies.add(currency);
        if (currencies.size === 0) {
          // nobody to tell: only where the versions are (a subscriber's snapshot covers the past)
          const [row] = await this.sql<{ version: string | null }[]>`select max(version)::text as version from market.live_prices`;
          this.version = Math.max(this.version, Number(row?.version ?? 0));
          continue;
        }
        const rows = await this.sql<LiveRow[]>`select *, 'live' as kind from market.live_prices_since(${this.version}, ${[...currencies]}::text[])`;
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
    const affected = [...this.subscribers].filter((subscriber) => payload === '*' || subscriber.key.hex === payload);
    if (affected.length === 0) return;
    const hexes = [...new Set(affected.map((subscriber) => subscriber.key.hex))];
    try {
      const valid = await this.sql<{ hex: string }[]>`
        select encode(key_hash, 'hex') as hex from app.api_keys where key_hash = any (select decode(x, 'hex') from unnest(${hexes}::text[]) x) and app.key_live(revoked_at) and app.owner_enabled(owner)`;
      const still = new Set(valid.map((row) => row.hex));
      for (const subscriber of affected) if (!still.has(subscriber.key.hex)) subscriber.end('revoked');
    } catch (error) {
      this.logger?.warn(`streams: checking keys failed (${(error as Error).message})`);
    }
  }

  async close() {
    this.closed = true;
    if (this.renewal) clearInterval(this.renewal);
    for (const subscriber of [...this.subscribers]) subscriber.end('shutdown');
    for (const unsubscribe of this.unsubscriptions) unsubscribe();
    await this.reading;
    await this.renew();
  }
}

/** The response head of an SSE stream, written at once: the quota headers admission set, then the event-stream ones. */
function openStream(ctx: Context) {
  const list = (ctx.state.head as string[] | undefined) ?? [];
  ctx.state.head = undefined;
  // Connection: close: a stream ends for a reason of the server's (a slow consumer, a revoked key, shutdown), so its
  // connection goes with it rather than idling for another request; an EventSource reconnects on a new one anyway
  list.push('Content-Type', 'text/event-stream; charset=utf-8', 'Cache-Control', 'no-store', 'X-Accel-Buffering', 'no', 'Connection', 'close');
  ctx.respond = false;
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.res.writeHead(200, list);
}
