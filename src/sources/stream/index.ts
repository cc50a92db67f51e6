// The live venue streams (issue 35), shared by every running holder (issue 46): a lease row per
// venue (market.take_stream_venues), each held by exactly one process. Every STREAM_INTERVAL_MS a
// holder renews its heartbeat and its leases, sheds the venues beyond its fair share (venues over
// live holders, rounded up) and takes free or expired ones up to it; one holder alone holds them
// all. When a holder dies, its leases expire after STREAM_LEASE_SECONDS and the others take its
// venues at their next tick. The demo market's simulated venues are written together by one SQL
// function: they are one lease, `simulated`. Each tick a holder writes the latest prices of the
// venues it holds (the simulated venues' with the demo market, ccxt pro's ticker streams with
// MARKET_SOURCE=exchanges), rebuilds the live index price from every venue's prices
// (market.refresh_live_prices, one holder at a time, which NOTIFYs every API process) and records
// the tick as a run of the source `stream`, with the state of its own venues only (the others'
// holders report theirs), so its health is read like any other source's (/status, /readyz,
// market.source_health). Between ticks, every STREAM_PUBLISH_MS, the venue prices received are
// written and the live index rebuilt, so a coin whose last publication is a second old is
// published as soon as its inputs change, not at the next tick.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config.ts';
import { createSql, withTimeout, type Sql } from '../../db/client.ts';
import type { Logger } from '../../log.ts';
import { queryOf, type Query } from '../../db/query.ts';
import { runSource, type Source } from '../source.ts';
import type { ExchangesSource } from '../exchanges/index.ts';
import { VenueFeeds } from './venues.ts';

export const STREAM_SOURCE = 'stream';
/** the demo market's simulated venues: one lease, as one SQL function writes them all */
const SIMULATED = 'simulated';
/** how long a stop waits for the venue requests and connections in flight (a supervisor's SIGKILL follows a slow stop) */
const STOP_WITHIN_MS = 5_000;

export type StreamConfig = Pick<Config, 'MARKET_SOURCE' | 'STREAM_INTERVAL_MS' | 'STREAM_LEASE_SECONDS' | 'STREAM_MAX_AGE_SECONDS' | 'STREAM_CANDLES' | 'STREAM_CANDLE_WAIT_SECONDS' | 'STREAM_CANDLE_CHECK_SECONDS' | 'STREAM_PUBLISH_MS' | 'STREAM_READMIT_SECONDS' | 'STREAM_REPLAY_SECONDS' | 'EXCHANGES' | 'EXCHANGE_URLS' | 'EXCHANGE_TIMEOUT_MS' | 'EXCHANGE_BUDGET_MS'> & { database: Config['database'] };

export interface TickResult {
  /** venue prices written this tick */
  prices: number;
  /** coins whose live price changed */
  coins: number;
  venues: Record<string, 'up' | 'down'>;
}

export class StreamHolder {
  readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly sql: Sql;
  private readonly query: Query;
  private timer: NodeJS.Timeout | null = null;
  private publishTimer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  /** one write at a time: a tick and a publication between ticks never interleave */
  private working: Promise<unknown> = Promise.resolve();
  /** until when coins held back by the once-a-second rule may still be due */
  private dueUntil = 0;
  private feeds: VenueFeeds | null = null;
  private stopped = false;
  /** the venues this process held at its last tick, in name order */
  held: string[] = [];

  private readonly config: StreamConfig;
  private readonly logger: Logger | undefined;
  private readonly ownSql: boolean;
  private readonly exchanges: ExchangesSource | undefined;

  /** exchanges: the REST source whose venue instances (and gate) the streams share; default the process's own */
  constructor(config: StreamConfig, logger?: Logger, sql?: Sql, exchanges?: ExchangesSource) {
    this.config = config;
    this.logger = logger;
    this.exchanges = exchanges;
    this.sql = sql ?? createSql(config.database, { max: 1 });
    this.query = queryOf(this.sql);
    this.ownSql = !sql;
  }

  start() {
    this.timer = setInterval(() => void (this.ticking ??= this.tick().finally(() => (this.ticking = null))), this.config.STREAM_INTERVAL_MS);
    this.timer.unref();
    void (this.ticking ??= this.tick().finally(() => (this.ticking = null)));
    if (this.config.MARKET_SOURCE === 'exchanges') {
      let publishing = false;
      this.publishTimer = setInterval(() => {
        if (publishing) return;
        publishing = true;
        void this.publish().finally(() => (publishing = false));
      }, this.config.STREAM_PUBLISH_MS);
      this.publishTimer.unref();
    }
    return this;
  }

  /** whether this process held any venue at its last tick */
  get holding(): boolean {
    return this.held.length > 0;
  }

  /** The venues this process can stream: its share of them is its to hold. */
  private venues(): string[] {
    if (this.config.MARKET_SOURCE === 'exchanges') return this.venueFeeds().venueIds;
    return [SIMULATED];
  }

  private venueFeeds(): VenueFeeds {
    return (this.feeds ??= new VenueFeeds(this.config, this.query, this.logger, this.exchanges));
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.working.then(work, work);
    this.working = run.catch(() => {});
    return run;
  }

  /** The live index rebuilt: the coins due (inputs changed, last publication a second old) are published. */
  private async refresh(query: Query): Promise<number> {
    const [row] = await query(
      `select market.refresh_live_prices(make_interval(secs => $1::int), p_readmit_after => make_interval(secs => $2::int),
         p_replay => make_interval(secs => $3::int)) as n`,
      [this.config.STREAM_MAX_AGE_SECONDS, this.config.STREAM_READMIT_SECONDS, this.config.STREAM_REPLAY_SECONDS],
    );
    return Number(row?.n ?? 0);
  }

  /** Between ticks: what the venues sent is written, and the live index rebuilt while a coin may be due. */
  async publish(): Promise<void> {
    if (this.stopped || !this.holding || !this.feeds) return;
    const feeds = this.feeds;
    try {
      await this.serial(async () => {
        const written = await feeds.flush();
        // a change held back (its coin published under a second ago) falls due within the second
        if (written.prices > 0) this.dueUntil = Date.now() + 1_000 + this.config.STREAM_PUBLISH_MS;
        if (Date.now() <= this.dueUntil) await this.refresh(this.query);
      });
    } catch (error) {
      this.logger?.warn(`live streams: publishing failed (${(error as Error).message})`);
    }
  }

  /** One tick: renew, shed or take venue leases, and for the venues held write their prices and the live index. */
  async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      const venues = this.venues();
      // holding the venues' candle feeds too: the minute job then polls none of their candles (market.stream_candle_venues)
      const candles = this.config.MARKET_SOURCE === 'exchanges' && this.venueFeeds().candles !== null;
      const [lease] = await this.sql<{ held: string[] }[]>`
        select market.take_stream_venues(${this.holder}, ${venues}::text[], ${this.config.STREAM_LEASE_SECONDS}, ${candles}) as held`;
      const held = lease?.held ?? [];
      if (held.join() !== this.held.join()) {
        this.logger?.info(held.length ? `live streams: this process (${this.holder}) holds ${held.join(', ')} of ${venues.length}` : 'live streams: every venue held by other processes');
      }
      if (held.length && !this.holding) {
        // the demo market's venues stream made-up prices: the source says so, as the demo sources do
        await this.sql`update market.data_sources set demo = ${this.config.MARKET_SOURCE === 'simulated'} where name = ${STREAM_SOURCE}`;
      }
      this.held = held;
      if (this.config.MARKET_SOURCE === 'exchanges') {
        const feeds = this.venueFeeds();
        await this.serial(() => feeds.hold(held));
      }
      if (!held.length) return;
      await this.serial(() => runSource(this.query, this.source));
    } catch (error) {
      this.logger?.warn(`live streams: tick failed (${(error as Error).message})`);
    }
  }

  private readonly source: Source<TickResult> = {
    name: STREAM_SOURCE,
    run: async (query) => {
      const result: TickResult = { prices: 0, coins: 0, venues: {} };
      if (this.config.MARKET_SOURCE === 'simulated') {
        const [row] = await query('select market.simulate_live_venue_prices() as n');
        result.prices = Number(row?.n ?? 0);
      } else if (this.config.MARKET_SOURCE === 'exchanges') {
        const written = await this.venueFeeds().flush();
        result.prices = written.prices;
        result.venues = written.venues;
        // its own venues' states; those of the venues other processes hold are theirs to record
        await query('select market.record_stream_venues($1, $2::text::jsonb, $3::text[])', [this.holder, JSON.stringify(written.venues), this.venues()]);
        const candles = this.venueFeeds().candles;
        if (candles) await query('select market.record_venue_candle_markets($1::text::jsonb)', [JSON.stringify(candles.marketCounts())]);
      }
      result.coins = await this.refresh(query);
      return result;
    },
  };

  /** Stops ticking and closes the venue streams; `release`: gives its venues up so the others take them at once. */
  async stop(release = true) {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.publishTimer) clearInterval(this.publishTimer);
    const closing = (async () => {
      await this.working;
      await this.ticking?.catch(() => {});
      await this.feeds?.close();
    })();
    // a request or a connection attempt in flight is abandoned, not awaited to its own timeout: every
    // write is one transaction, and what a venue had not answered is REST's to fill for the next holder
    await withTimeout(closing, STOP_WITHIN_MS).catch((error: Error) => this.logger?.warn(`live streams: stopping (${error.message}); what was in flight is abandoned`));
    this.feeds = null;
    // the database away (or its connection stuck on a query in flight): the leases expire by themselves
    if (release) await withTimeout(this.sql`select market.release_stream_venues(${this.holder})`, 2_000).catch(() => {});
    this.held = [];
    if (this.ownSql) await this.sql.end({ timeout: 2 });
  }
}

/** The stream holder a worker runs beside its jobs (STREAM=on and a built-in market source). */
export function startStreamHolder(config: Config, logger?: Logger): StreamHolder | null {
  if (config.STREAM === 'off' || config.MARKET_SOURCE === 'none') return null;
  return new StreamHolder(config, logger).start();
}
