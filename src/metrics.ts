// The Prometheus metrics of one service instance, in a registry of its own (not prom-client's
// global one), so that several apps in one process (tests) never share or collide.
// What happens in this process (requests, admissions, job runs) is counted here; what all
// processes share (queues, data freshness, webhook deliveries, connections) is read from the
// database at scrape time by app.metrics_snapshot().
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Config } from './config.ts';
import type { ReplicaState } from './db/replicas.ts';
import { droppedLogLines, LOG_BUFFER_BYTES } from './log.ts';
import { memoized } from './memo.ts';

export interface SnapshotRow {
  metric: string;
  labels: Record<string, string>;
  value: number;
}

// Seconds; requests are mostly single queries, jobs run from milliseconds to a backfill's minutes.
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900];
// a phase of the minute tick: milliseconds for a few coins, up to the minute itself at scale
const TICK_PHASE_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 60];

export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'mdapi_http_requests_total',
    help: 'HTTP requests answered, by method, declared route (unmatched for unknown paths) and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'mdapi_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, declared route and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });

  /**
   * The two series a request adds to, bound to its labels once per method, route and status: a
   * labelled inc or observe sorts, hashes and checks its labels on every call.
   */
  readonly requestSeries = memoized((labels: string) => {
    const [method, route, status] = labels.split('\n') as [string, string, string];
    return { requests: this.httpRequests.labels(method, route, status), duration: this.httpDuration.labels(method, route, status) };
  }, { max: 2_000 });

  /**
   * Admission outcomes since the counter was last read, counted per keyed request in a plain map
   * (a labelled inc hashes and checks its labels on every call) and added to it when it is read.
   */
  private readonly admissionTally = new Map<string, number>();

  readonly admissions = new Counter({
    name: 'mdapi_admissions_total',
    help: 'Admission decisions on keyed requests: ok, unauthorized, auth_rate_limited, plan_required, per_page_exceeded, rate_limited, quota_exceeded.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
    collect: () => {
      for (const [outcome, count] of this.admissionTally) this.admissions.inc({ outcome }, count);
      this.admissionTally.clear();
    },
  });

  countAdmission(outcome: string) {
    this.admissionTally.set(outcome, (this.admissionTally.get(outcome) ?? 0) + 1);
  }

  /** the response cache's count of strict reads that outlasted CACHE_CONFIRM_WAIT_MS, once the app registers it */
  cacheWaitsOut: () => number = () => 0;
  /** the response cache's count of versions reads made to confirm requests, once the app registers it */
  cacheConfirmReadCount: () => number = () => 0;

  readonly cacheConfirmReads = runningTotal(
    this.registry,
    'mdapi_cache_confirm_reads_total',
    'Cached answers that confirmed the data versions by a read (CACHE_FRESHNESS=strict on a server, or read); on the embedded database strict answers confirm by a turn of the event loop instead, and this stays still while its listening connection is heard.',
    () => this.cacheConfirmReadCount(),
  );

  readonly cacheConfirmWaitsOut = runningTotal(
    this.registry,
    'mdapi_cache_confirm_waits_out_total',
    'Cached answers (CACHE_FRESHNESS=strict on a server, or read) whose read of the data versions outlasted CACHE_CONFIRM_WAIT_MS, answered from the versions announced by NOTIFY.',
    () => this.cacheWaitsOut(),
  );

  readonly logLinesDropped = runningTotal(
    this.registry,
    'mdapi_log_lines_dropped_total',
    `Log lines dropped because stderr did not take them as fast as they came (more than ${LOG_BUFFER_BYTES / 2 ** 20} MiB waiting).`,
    droppedLogLines,
  );

  readonly jobRuns = new Counter({
    name: 'mdapi_job_runs_total',
    help: 'Job runs of the worker in this process, by task and outcome (success; error: will be retried; failed: no attempts left).',
    labelNames: ['task', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly jobDuration = new Histogram({
    name: 'mdapi_job_duration_seconds',
    help: 'Duration of job runs of the worker in this process, by task.',
    labelNames: ['task'] as const,
    buckets: JOB_BUCKETS,
    registers: [this.registry],
  });

  readonly exchangeTickPhase = new Histogram({
    name: 'mdapi_exchange_tick_phase_seconds',
    help: 'Time of each phase of the exchange source\'s minute tick (MARKET_SOURCE=exchanges) run by this process\'s worker: fetch, bars, index, aggregates, coin_state, alarms, venue_state (ExchangesTickResult.phases).',
    labelNames: ['phase'] as const,
    buckets: TICK_PHASE_BUCKETS,
    registers: [this.registry],
  });

  /** One tick's phases, in milliseconds as the source returns them. */
  observeExchangeTick(phases: Record<string, number>) {
    for (const [phase, ms] of Object.entries(phases)) this.exchangeTickPhase.observe({ phase }, ms / 1000);
  }

  readonly replicaHealthy = new Gauge({
    name: 'mdapi_read_replica_healthy',
    help: 'Read replicas of DATABASE_READ_URL as this process last checked them: 1 when serving reads, 0 when skipped (status says why).',
    labelNames: ['replica', 'status'] as const,
    registers: [this.registry],
  });

  readonly replicaLag = new Gauge({
    name: 'mdapi_read_replica_lag_seconds',
    help: 'Upper bound of how far each read replica is behind the primary, as last checked (absent when unknown).',
    labelNames: ['replica'] as const,
    registers: [this.registry],
  });

  readonly streamSubscribers = new Gauge({
    name: 'mdapi_stream_subscribers',
    help: 'Live stream subscribers connected to this process.',
    registers: [this.registry],
  });

  readonly streamMessages = new Counter({
    name: 'mdapi_stream_messages_total',
    help: 'Events written to live stream subscribers (snapshots, prices, heartbeats, final events).',
    registers: [this.registry],
  });

  readonly streamDropped = new Counter({
    name: 'mdapi_stream_dropped_total',
    help: 'Live stream subscribers this process closed, by reason: slow_consumer, revoked, quota_exceeded.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  /** Gauges filled from app.metrics_snapshot() at each scrape (see its COMMENT for their meaning). */
  private readonly snapshotGauges = new Map<string, Gauge>(
    (
      [
        ['mdapi_job_queue_jobs', 'graphile-worker jobs by queue (empty for unqueued jobs) and state: ready, scheduled, locked, failed.', ['queue', 'state']],
        ['mdapi_job_queue_lock_age_seconds', 'Seconds the lock of a serial job queue has been held (0 when free).', ['queue']],
        ['mdapi_live_price_age_seconds', 'Age in seconds of the newest live price received from each venue (market.live_venue_prices).', ['venue']],
        ['mdapi_venue_candles_total', 'Venue 1-minute candles since the venue was added, per venue and outcome: rest and stream (written by each path), disagreement (a REST and a stream candle of a minute differed: REST kept), refused_future, refused_not_decimal, refused_volume_down, refused_unlisted (stream candles refused; REST stands for their minutes).', ['venue', 'outcome']],
        ['mdapi_venue_candle_markets', 'Markets of each venue whose 1-minute candles come from its stream (path stream) or from REST alone (path rest_fallback), as the venue\'s stream holder last counted them (none while no holder counted in the last 2 minutes; market.venue_health).', ['venue', 'path']],
        ['mdapi_venue_candles_per_minute', 'Venue 1-minute candles stored per minute over the last 5 closed minutes, per venue and path (stream, rest; market.venue_health).', ['venue', 'path']],
        ['mdapi_venue_index_delay_seconds', 'Seconds from a minute\'s close to its index bar (market.index_bar_delays: the minute\'s final build with the venue\'s candles), per venue over the last 5 closed minutes, at quantile 0.5 and 0.99 (market.venue_health).', ['venue', 'quantile']],
        ['mdapi_newest_bar_age_seconds', 'Age in seconds of the newest 1-minute bar, per data source (the source that created the coin).', ['source']],
        ['mdapi_webhook_deliveries_24h', 'Webhook deliveries created in the last 24 hours, by status: pending, succeeded, failed, skipped.', ['status']],
        ['mdapi_workers', 'Workers by the age of their last heartbeat: fresh (as /readyz counts them) or stale.', ['state']],
        ['mdapi_db_connections', "Client connections to the service's database, by application name and state.", ['application', 'state']],
      ] as const
    ).map(([name, help, labelNames]) => [name, new Gauge({ name, help, labelNames: [...labelNames], registers: [this.registry] })]),
  );

  constructor(config: Pick<Config, 'DATABASE_POOL_SIZE' | 'WORKER_CONCURRENCY' | 'WORKER'>) {
    const poolSize = new Gauge({
      name: 'mdapi_db_pool_size',
      help: 'Configured size of the connection pools of this process: api (DATABASE_POOL_SIZE) and worker (WORKER_CONCURRENCY + 2).',
      labelNames: ['pool'] as const,
      registers: [this.registry],
    });
    poolSize.set({ pool: 'api' }, config.DATABASE_POOL_SIZE);
    if (config.WORKER === 'inline') poolSize.set({ pool: 'worker' }, config.WORKER_CONCURRENCY + 2);
    // Process CPU, memory, event-loop lag and the like, prefixed like the rest.
    collectDefaultMetrics({ register: this.registry, prefix: 'mdapi_' });
  }

  applyReplicas(states: ReplicaState[]) {
    this.replicaHealthy.reset();
    this.replicaLag.reset();
    for (const state of states) {
      this.replicaHealthy.set({ replica: state.name, status: state.status }, state.status === 'healthy' ? 1 : 0);
      if (state.lagMs !== null) this.replicaLag.set({ replica: state.name }, state.lagMs / 1000);
    }
  }

  /** Replaces the scrape-time gauges with a fresh snapshot (label sets that disappeared go too). */
  applySnapshot(rows: SnapshotRow[]) {
    for (const gauge of this.snapshotGauges.values()) gauge.reset();
    for (const row of rows) this.snapshotGauges.get(row.metric)?.set(row.labels, row.value);
  }
}

/** A counter of a running total kept elsewhere (read at each scrape), grown by what it gained since the last one. */
function runningTotal(registry: Registry, name: string, help: string, read: () => number): Counter {
  let seen = 0;
  const counter: Counter = new Counter({
    name,
    help,
    registers: [registry],
    collect: () => {
      const now = read();
      if (now > seen) counter.inc(now - seen);
      seen = now;
    },
  });
  return counter;
}
