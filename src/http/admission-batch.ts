// Admission without a database write per request (ADMISSION_FLUSH_MS > 0): a valid key's plan is
// cached in the process until a NOTIFY on channel api_keys (sql/functions/012_admission_batch.sql,
// heard through the process's listener, src/db/listener.ts) says the key or a plan changed; the per-minute and monthly counts are kept in memory and written
// to the shared counter rows by app.admission_flush every ADMISSION_FLUSH_MS, one statement per
// flush, in the manner of Kong's rate-limiting plugin with a sync_rate. A process judges a request
// on the shared count read at its last flush plus its own counts not yet in it, so with N
// processes a key gets at most (N − 1) × R requests over a limit, R being the most requests one
// process admits for the key between two of its flushes (docs/operations.md, "Admission across processes").
// Unknown keys, requests without a key and everything about failed attempts go to app.admit as
// before: only valid keys are ever cached. Each flush also re-reads every cached key's validity and
// limits, so a NOTIFY missed (LISTEN through a transaction pooler) costs at most one flush interval.
// Every keyed response is counted too, once written, by key, UTC day, endpoint and status class
// (record), and goes to app.usage_daily in the same flush: the console's usage page.
import type { Sql } from '../db/client.ts';
import type { Listener } from '../db/listener.ts';
import type { KeyDigest } from '../keys.ts';
import type { Logger } from '../log.ts';
import type { McpPlanName, PlanName, WidgetPlanName } from '../plans.ts';

export interface AdmitRow {
  /** wrong_scope: a live key of another scope (a Data API key on /mcp), refused like unauthorized */
  outcome: 'ok' | 'unauthorized' | 'wrong_scope' | 'auth_rate_limited' | 'plan_required' | 'per_page_exceeded' | 'rate_limited' | 'quota_exceeded';
  key_id: string | null;
  owner: string | null;
  plan: PlanName | McpPlanName | WidgetPlanName | null;
  quota_limit: string | null;
  quota_used: string | null;
  quota_reset: Date;
  rate_limit: number | null;
  rate_remaining: number | null;
  rate_reset: number | null;
  retry_after: number | null;
  per_page_cap: number | null;
  /** the highest plan the request needed (app.highest_plan), for the plan_required answer */
  required_plan?: string | null;
}

export interface AdmitRoute {
  endpoint: string;
  /** the plan the request needs, or several (all must be met: the highest by app.plans.rank counts) */
  plan: PlanName | McpPlanName | WidgetPlanName | (PlanName | McpPlanName)[];
  consume: boolean;
  perPage?: number;
  scope?: 'data-api' | 'mcp' | 'widget';
  /** a window of the query that needs a plan of its own (included in `plan`), named for the refusal: '28-day rsi' */
  window?: { label: string; plan: PlanName };
}

/** A cached key is forgotten after this long unused (its shared counts are then read afresh). */
const IDLE_MS = 60_000;

interface Counts {
  /** per-minute requests by window start (epoch ms) */
  rates: Map<number, number>;
  /** requests counted against the quota, by month (YYYY-MM-DD) */
  usage: Map<string, number>;
  /** per-endpoint requests, by month (YYYY-MM-DD) and endpoint */
  endpoints: Map<string, Map<string, number>>;
}

interface CachedKey {
  /** the key's hash (hex) and its scope: where it is cached */
  hex: string;
  keyId: number;
  /** keyId and quotaLimit as the decision's row carries them (formatted once) */
  keyIdText: string;
  quotaLimitText: string;
  owner: string;
  plan: AdmitRow['plan'] & string;
  scope: string;
  ranks: Record<string, number>;
  quotaLimit: number;
  rateLimit: number;
  perPageCap: number;
  /** the shared counts as of the last read: this window's and this month's */
  shared: { window: number; requests: number; month: string; used: number };
  /** counted here, not yet sent */
  pending: Counts;
  /** sent by the flush under way, not yet read back */
  inflight: Counts;
  lastSeen: number;
}

interface LookupRow {
  key_id: string;
  owner: string;
  plan: NonNullable<AdmitRow['plan']>;
  ranks: Record<string, number>;
  quota_limit: string;
  rate_limit: number;
  per_page_cap: number;
  quota_used: string;
  window_requests: number;
}

interface FlushRow {
  key_id: string;
  quota_used: string;
  window_requests: number;
  key_valid: boolean;
  plan: string | null;
  quota_limit: string | null;
  rate_limit: number | null;
  per_page_cap: number | null;
}

/** The status classes app.usage_daily counts, by the index responseClass gives. */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '429', '5xx'] as const;

/** A response status's class, as an index into STATUS_CLASSES. */
export const responseClass = (status: number): number =>
  status === 429 ? 3 : status >= 500 ? 4 : status >= 400 ? 2 : status >= 300 ? 1 : 0;

/** Responses written, not yet sent: by UTC day (YYYY-MM-DD), key id and endpoint, a count per class. */
type Responses = Map<string, Map<number, Map<string, number[]>>>;

const emptyCounts = (): Counts => ({ rates: new Map(), usage: new Map(), endpoints: new Map() });
const add = <K>(map: Map<K, number>, key: K, n: number) => map.set(key, (map.get(key) ?? 0) + n);
function addEndpoint(counts: Counts, month: string, endpoint: string, n: number) {
  let endpoints = counts.endpoints.get(month);
  if (!endpoints) counts.endpoints.set(month, (endpoints = new Map()));
  add(endpoints, endpoint, n);
}

/** The minute window and the calendar month (UTC) of an instant, as app.admit reckons them. */
export function periods(now: number) {
  // the same for every request of a second: computed once per second
  const second = Math.floor(now / 1000);
  if (lastPeriods?.second !== second) lastPeriods = { second, periods: computePeriods(second * 1000) };
  return lastPeriods.periods;
}
let lastPeriods: { second: number; periods: ReturnType<typeof computePeriods> } | null = null;

function computePeriods(now: number) {
  const window = Math.floor(now / 60_000) * 60_000;
  const date = new Date(now);
  const monthStart = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  return {
    window,
    windowLeft: Math.max(1, Math.ceil((window + 60_000 - now) / 1000)),
    month: new Date(monthStart).toISOString().slice(0, 10),
    day: date.toISOString().slice(0, 10),
    monthReset: new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)),
  };
}

export class AdmissionBatcher {
  private readonly keys = new CachedKeys();
  /** lookups under way, shared by concurrent requests with the same uncached key */
  private readonly lookups = new Map<string, Promise<CachedKey | null>>();
  /** bumped whenever cached keys are dropped: a lookup that started before must not cache its answer */
  private generation = 0;
  private listening = false;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private unsubscribe: (() => void) | null = null;
  private closed = false;
  /** responses counted here, not yet sent (record) */
  private responses: Responses = new Map();

  private readonly sql: Sql;
  private readonly listener: Listener;
  private readonly flushMs: number;
  private readonly logger: Logger | undefined;

  constructor(sql: Sql, listener: Listener, flushMs: number, logger?: Logger) {
    this.sql = sql;
    this.listener = listener;
    this.flushMs = flushMs;
    this.logger = logger;
  }

  /** Starts listening for key changes and flushing; until the listener has LISTENed, app.admit admits. */
  start() {
    // a flush slower than the interval is not queued behind: the next tick after it flushes
    this.timer = setInterval(() => void (this.flushing ?? this.flush()), this.flushMs);
    this.timer.unref();
    this.unsubscribe = this.listener.subscribe('api_keys', {
      message: (payload) => this.forget(payload),
      // notifications sent while the listener was away are lost, so drop everything
      resync: () => {
        this.forget('*');
        this.listening = true;
      },
    });
  }

  /** Whether a revocation reaches this process at once (LISTEN is in place): what may be cached beside the keys. */
  get live() {
    return this.listening && !this.closed;
  }

  private readonly forgetting: ((payload: string) => void)[] = [];

  /** Also called with every key change announced (a hash in hex, or `*`): what others cache per key (widget origins). */
  onForget(listener: (payload: string) => void) {
    this.forgetting.push(listener);
  }

  /** Drops one cached key (its hash in hex) or, with `*`, every one. Counts not yet flushed are kept. */
  forget(payload: string) {
    this.generation++;
    for (const listener of this.forgetting) listener(payload);
    for (const entry of this.keys.values()) {
      if (payload !== '*' && entry.hex !== payload) continue;
      this.keys.delete(entry);
      if (hasCounts(entry)) this.orphans.push(entry);
    }
  }

  /** Entries dropped with counts not yet written: the next flush still writes them. */
  private orphans: CachedKey[] = [];

  /**
   * Admits a request with a key: from the cache, or after looking the key up; an unknown or revoked
   * key (and so every failed attempt) is answered by `inDatabase`, today's app.admit.
   */
  admit({ hash: keyHash, hex }: KeyDigest, route: AdmitRoute, inDatabase: () => Promise<AdmitRow>): AdmitRow | Promise<AdmitRow> {
    // until LISTEN is in place a revocation could go unheard: app.admit, as with ADMISSION_FLUSH_MS=0
    if (!this.listening || this.closed) return inDatabase();
    const scope = route.scope ?? 'data-api';
    const entry = this.keys.get(scope, hex);
    // a cached key is decided at once, without a promise: this is every request but a key's first
    if (entry) return this.decide(entry, route, Date.now());
    const cacheKey = `${hex}:${scope}`;
    let lookup = this.lookups.get(cacheKey);
    if (!lookup) {
      lookup = this.lookup(hex, keyHash, scope).finally(() => this.lookups.delete(cacheKey));
      this.lookups.set(cacheKey, lookup);
    }
    return lookup.then((found) => (found ? this.decide(found, route, Date.now()) : inDatabase()));
  }

  private async lookup(hex: string, keyHash: Buffer, scope: string): Promise<CachedKey | null> {
    const generation = this.generation;
    const now = Date.now();
    const { window, month } = periods(now);
    const [row] = await this.sql<LookupRow[]>`
      select * from app.admission_key(${keyHash}, ${scope}, ${new Date(window)}, ${month})`;
    if (!row) return null;
    const entry: CachedKey = {
      hex, keyId: Number(row.key_id), keyIdText: String(Number(row.key_id)), quotaLimitText: String(Number(row.quota_limit)),
      owner: row.owner, plan: row.plan, scope, ranks: row.ranks,
      quotaLimit: Number(row.quota_limit), rateLimit: row.rate_limit, perPageCap: row.per_page_cap,
      shared: { window, requests: row.window_requests, month, used: Number(row.quota_used) },
      pending: emptyCounts(), inflight: emptyCounts(), lastSeen: now,
    };
    // Cached only if no change was announced meanwhile; either way the answer serves the requests
    // that waited for it.
    if (generation === this.generation && !this.closed) this.keys.set(entry);
    else this.orphans.push(entry); // its counts are still written by the next flush
    return entry;
  }

  /**
   * app.admit's rules, on the shared counts of the last flush plus this process's own. Run for every
   * keyed request: no allocation but the row it answers with.
   */
  private decide(entry: CachedKey, route: AdmitRoute, now: number): AdmitRow {
    entry.lastSeen = now;
    const { window, windowLeft, month, monthReset } = periods(now);
    const { pending, inflight, shared } = entry;
    const used = (shared.month === month ? shared.used : 0) + (pending.usage.get(month) ?? 0) + (inflight.usage.get(month) ?? 0);
    const row: AdmitRow = {
      outcome: 'ok', key_id: entry.keyIdText, owner: entry.owner, plan: entry.plan,
      quota_limit: entry.quotaLimitText, quota_used: null, quota_reset: monthReset,
      rate_limit: entry.rateLimit, rate_remaining: null, rate_reset: null, retry_after: null, per_page_cap: entry.perPageCap,
      required_plan: requiredPlan(entry.ranks, route.plan),
    };
    const required = row.required_plan;
    if (required != null && entry.ranks[entry.plan]! < entry.ranks[required]!) return { ...row, quota_used: String(used), outcome: 'plan_required' };
    if (route.perPage !== undefined && route.perPage > entry.perPageCap) return { ...row, quota_used: String(used), outcome: 'per_page_exceeded' };
    if (!route.consume) return { ...row, quota_used: String(used) };

    // Counted even when refused, as app.admit's counter row is.
    add(pending.rates, window, 1);
    const requests = (shared.window === window ? shared.requests : 0) + pending.rates.get(window)! + (inflight.rates.get(window) ?? 0);
    row.rate_remaining = Math.max(0, entry.rateLimit - requests);
    row.rate_reset = windowLeft;
    if (requests > entry.rateLimit) return { ...row, quota_used: String(used), outcome: 'rate_limited', retry_after: windowLeft };

    if (used >= entry.quotaLimit) {
      return {
        ...row, outcome: 'quota_exceeded', quota_used: entry.quotaLimitText,
        retry_after: Math.max(1, Math.ceil((monthReset.getTime() - now) / 1000)),
      };
    }
    add(pending.usage, month, 1);
    addEndpoint(pending, month, route.endpoint, 1);
    row.quota_used = String(used + 1);
    return row;
  }

  /**
   * Counts a response written to a key: its endpoint and status class, today (UTC). Every keyed
   * response: a few Map lookups and an increment, nothing more; the next flush writes them.
   */
  record(keyId: number, endpoint: string, status: number) {
    countResponse(this.responses, periods(Date.now()).day, keyId, endpoint, responseClass(status), 1);
  }

  /**
   * Writes every pending count and reads back the shared counts of every cached key, in one
   * statement; forgets keys unused for a minute. One flush at a time: a call during a flush waits
   * for it and then flushes again (so what was counted before the call is written when it returns).
   */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    this.flushing = this.flushOnce().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async flushOnce() {
    const now = Date.now();
    const { window, month } = periods(now);
    const entries = [...this.keys.values(), ...this.orphans.splice(0)];
    const rates = [], usage = [], endpoints = [], reads = [];
    const sent: CachedKey[] = [];
    for (const entry of entries) {
      const cached = this.keys.has(entry);
      if (cached && !hasCounts(entry) && now - entry.lastSeen > IDLE_MS) {
        this.keys.delete(entry);
        continue;
      }
      const counts = entry.pending;
      entry.pending = emptyCounts();
      entry.inflight = counts;
      sent.push(entry);
      const keyId = entry.keyId;
      for (const [start, requests] of counts.rates) rates.push({ key_id: keyId, window_start: new Date(start).toISOString(), requests });
      for (const [m, used] of counts.usage) usage.push({ key_id: keyId, month: m, used });
      for (const [m, byEndpoint] of counts.endpoints) {
        for (const [endpoint, requests] of byEndpoint) endpoints.push({ key_id: keyId, month: m, endpoint, requests });
      }
      if (cached) reads.push({ key_id: keyId, window_start: new Date(window).toISOString(), month });
    }
    const answered = this.responses;
    this.responses = new Map();
    const responses: { key_id: number; day: string; endpoint: string; status_class: string; requests: number }[] = [];
    for (const [day, byKey] of answered) {
      for (const [keyId, byEndpoint] of byKey) {
        for (const [endpoint, counts] of byEndpoint) {
          counts.forEach((requests, i) => requests > 0 && responses.push({ key_id: keyId, day, endpoint, status_class: STATUS_CLASSES[i]!, requests }));
        }
      }
    }
    if (sent.length === 0 && responses.length === 0) return;
    try {
      const rows = await this.sql<FlushRow[]>`
        select * from app.admission_flush(${this.sql.json({ rates, usage, endpoints, reads, responses } as never)})`;
      const byId = new Map(rows.map((row) => [Number(row.key_id), row]));
      for (const entry of sent) {
        entry.inflight = emptyCounts();
        const row = byId.get(entry.keyId);
        // an entry dropped meanwhile (NOTIFY) is no longer used: only cached ones matter
        if (!row || !this.keys.has(entry)) continue;
        const unchanged = row.key_valid && row.plan === entry.plan && Number(row.quota_limit) === entry.quotaLimit
          && row.rate_limit === entry.rateLimit && row.per_page_cap === entry.perPageCap;
        // a change whose NOTIFY did not reach this process: the next request looks the key up again
        if (!unchanged) this.keys.delete(entry);
        else entry.shared = { window, requests: row.window_requests, month, used: Number(row.quota_used) };
      }
    } catch (error) {
      // Kept for the next flush: counts are never lost to a failed write.
      for (const [day, byKey] of answered) {
        for (const [keyId, byEndpoint] of byKey) {
          for (const [endpoint, counts] of byEndpoint) {
            counts.forEach((n, i) => n > 0 && countResponse(this.responses, day, keyId, endpoint, i, n));
          }
        }
      }
      for (const entry of sent) {
        merge(entry.pending, entry.inflight);
        entry.inflight = emptyCounts();
        if (!this.keys.has(entry)) this.orphans.push(entry);
      }
      if (!this.closed) this.logger?.warn(`admission: flushing counters failed (${(error as Error).message}); retrying`);
    }
  }

  /** Stops flushing and listening, after writing what is pending (the service's shutdown). */
  async close() {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.flush();
    this.unsubscribe?.();
  }
}

/**
 * The cached keys by scope, then by key hash (hex): looked up on every keyed request by the digest's
 * own hex string, whose hash V8 keeps, rather than by a string built per request.
 */
class CachedKeys {
  private readonly byScope = new Map<string, Map<string, CachedKey>>();
  get(scope: string, hex: string) {
    return this.byScope.get(scope)?.get(hex);
  }
  set(entry: CachedKey) {
    let keys = this.byScope.get(entry.scope);
    if (!keys) this.byScope.set(entry.scope, (keys = new Map()));
    keys.set(entry.hex, entry);
  }
  /** whether this very entry is the one cached (not one dropped and looked up again since) */
  has(entry: CachedKey) {
    return this.get(entry.scope, entry.hex) === entry;
  }
  delete(entry: CachedKey) {
    if (this.has(entry)) this.byScope.get(entry.scope)!.delete(entry.hex);
  }
  /** every cached entry (one may be deleted while they are walked: a Map's iterator allows it) */
  *values() {
    for (const keys of this.byScope.values()) yield* keys.values();
  }
}

/**
 * The highest of the route's required plans by the key's scope's ranks (a required plan of another
 * scope has no rank here, and app.admit does not refuse it either); null when none counts.
 */
function requiredPlan(ranks: Record<string, number>, plan: AdmitRoute['plan']): string | null {
  if (typeof plan === 'string') return ranks[plan] !== undefined ? plan : null;
  let required: string | null = null;
  for (const one of plan) if (ranks[one] !== undefined && (required === null || ranks[one]! > ranks[required]!)) required = one;
  return required;
}

function countResponse(responses: Responses, day: string, keyId: number, endpoint: string, statusClass: number, n: number) {
  let byKey = responses.get(day);
  if (!byKey) responses.set(day, (byKey = new Map()));
  let byEndpoint = byKey.get(keyId);
  if (!byEndpoint) byKey.set(keyId, (byEndpoint = new Map()));
  let counts = byEndpoint.get(endpoint);
  if (!counts) byEndpoint.set(endpoint, (counts = [0, 0, 0, 0, 0]));
  counts[statusClass]! += n;
}

function hasCounts(entry: CachedKey) {
  return entry.pending.rates.size + entry.pending.usage.size + entry.pending.endpoints.size + entry.inflight.rates.size > 0;
}

function merge(into: Counts, from: Counts) {
  for (const [k, n] of from.rates) add(into.rates, k, n);
  for (const [k, n] of from.usage) add(into.usage, k, n);
  for (const [month, byEndpoint] of from.endpoints) for (const [endpoint, n] of byEndpoint) addEndpoint(into, month, endpoint, n);
}
