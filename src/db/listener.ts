// The one LISTEN connection of a process (issue 44). The response cache (data_version), admission
// (api_keys) and the live-price hub (live_prices, api_keys) subscribe here by channel; this module
// holds a connection of its own (on the embedded database through its multiplexer, which routes
// each NOTIFY to the clients that LISTENed on the channel), LISTENs on every channel subscribed,
// hands each notification to the subscriptions of its channel, and when the connection is lost
// opens it again with a growing delay. Notifications sent while it was away are lost for good:
// once the channels are listened to again, every subscription is told to resynchronise (read the
// state it keeps afresh), exactly once per reconnection.
import postgres from 'postgres';
import type { Sql } from './client.ts';
import type { Logger } from '../log.ts';

export interface Subscription {
  /** a notification on the channel, its payload */
  message(payload: string): void;
  /**
   * The channel is listened to (at the subscription's start, and again after each reconnection):
   * notifications sent before may have been missed, so whatever they would have said is read afresh.
   */
  resync(): void;
}

export interface ListenerOptions {
  logger?: Logger;
  /** the first delay before opening a lost connection again; doubled after each failure */
  firstRetryMs?: number;
  /** the longest delay between two attempts */
  maxRetryMs?: number;
}

interface Subscribed extends Subscription {
  /** the connection it last resynchronised on */
  generation: number;
}

const quoted = (channel: string) => `"${channel.replaceAll('"', '""')}"`;

export class Listener {
  private readonly sql: Sql;
  private readonly logger: Logger | undefined;
  private readonly firstRetryMs: number;
  private readonly maxRetryMs: number;
  private readonly channels = new Map<string, Set<Subscribed>>();
  /** the channels LISTENed on the current connection */
  private readonly listened = new Set<string>();
  private client: Sql | null = null;
  /** counts connections: bumped when one is lost, so each subscription resynchronises once on the next */
  private generation = 1;
  private syncing = false;
  private again = false;
  private retry: NodeJS.Timeout | null = null;
  private delay: number;
  /** an outage is logged once, and its end once */
  private failing = false;
  private closed = false;

  constructor(sql: Sql, options: ListenerOptions = {}) {
    this.sql = sql;
    this.logger = options.logger;
    this.firstRetryMs = options.firstRetryMs ?? 100;
    this.maxRetryMs = options.maxRetryMs ?? 5_000;
    this.delay = this.firstRetryMs;
  }

  /** Whether every channel subscribed is listened to now. */
  get connected(): boolean {
    return !this.failing && this.client !== null && [...this.channels.keys()].every((channel) => this.listened.has(channel));
  }

  /**
   * Subscribes to a channel: `resync` runs once the channel is listened to, `message` for each
   * notification from then on. Returns the unsubscription.
   */
  subscribe(channel: string, subscription: Subscription): () => void {
    const subscribed: Subscribed = { message: (payload) => subscription.message(payload), resync: () => subscription.resync(), generation: 0 };
    let set = this.channels.get(channel);
    if (!set) this.channels.set(channel, (set = new Set()));
    set.add(subscribed);
    void this.sync();
    return () => {
      set.delete(subscribed);
      if (set.size > 0 || this.channels.get(channel) !== set) return;
      this.channels.delete(channel);
      if (this.listened.delete(channel)) void this.client?.unsafe(`unlisten ${quoted(channel)}`).catch(() => {});
    };
  }

  /** Ends the connection; no subscription hears anything more. */
  async close() {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    await this.client?.end({ timeout: 1 }).catch(() => {});
  }

  /**
   * The connection: one, LISTEN only, never closed for idleness; the settings of the process's pool
   * (its parsed options, as postgres.js's own listen() reuses them).
   */
  private connection(): Sql {
    const options = {
      ...this.sql.options,
      max: 1,
      idle_timeout: null,
      max_lifetime: null,
      fetch_types: false,
      onnotify: (channel: string, payload: string) => this.dispatch(channel, payload),
      onclose: () => this.lost(),
    };
    return (this.client ??= postgres(options as unknown as postgres.Options<Record<string, never>>) as unknown as Sql);
  }

  private dispatch(channel: string, payload: string) {
    if (this.closed) return;
    for (const subscription of this.channels.get(channel) ?? []) {
      try {
        subscription.message(payload);
      } catch (error) {
        this.logger?.warn(`listener: a subscriber of ${channel} failed (${(error as Error).message})`);
      }
    }
  }

  /** The connection closed: nothing is listened to any more; it is opened again after the delay. */
  private lost() {
    if (this.closed) return;
    if (!this.failing) this.logger?.warn(`listener: LISTEN connection lost; opening it again in ${this.delay} ms`);
    this.failing = true;
    this.listened.clear();
    this.generation++;
    this.retryLater();
  }

  private retryLater() {
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.sync();
    }, this.delay);
    this.retry.unref();
    this.delay = Math.min(this.maxRetryMs, this.delay * 2);
  }

  /**
   * LISTENs on the channels not listened to yet (opening the connection if need be), then tells
   * the subscriptions not resynchronised on this connection. One at a time; a call meanwhile runs
   * it again after.
   */
  private async sync() {
    if (this.closed) return;
    if (this.syncing) return void (this.again = true);
    this.syncing = true;
    try {
      do {
        this.again = false;
        const generation = this.generation;
        const pending = [...this.channels.keys()].filter((channel) => !this.listened.has(channel));
        if (pending.length > 0) await this.connection().unsafe(pending.map((channel) => `listen ${quoted(channel)}`).join('; '));
        // lost while the LISTEN ran: the next connection listens again
        if (generation !== this.generation || this.closed) return;
        for (const channel of pending) this.listened.add(channel);
        if (this.failing) this.logger?.info('listener: LISTEN connection open again; subscribers resynchronise');
        this.failing = false;
        this.delay = this.firstRetryMs;
        for (const [channel, subscriptions] of this.channels) {
          if (!this.listened.has(channel)) continue;
          for (const subscription of subscriptions) {
            if (subscription.generation === generation) continue;
            subscription.generation = generation;
            try {
              subscription.resync();
            } catch (error) {
              this.logger?.warn(`listener: a subscriber of ${channel} failed to resynchronise (${(error as Error).message})`);
            }
          }
        }
      } while (this.again && !this.closed);
    } catch (error) {
      if (!this.failing && !this.closed) this.logger?.warn(`listener: LISTEN failed (${(error as Error).message}); retrying in ${this.delay} ms`);
      this.failing = true;
      this.retryLater();
    } finally {
      this.syncing = false;
    }
  }
}
