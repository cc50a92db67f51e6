// Responses cached until their data changes (issue 16). The refresh functions bump a data version
// in SQL (app.bump_data_version, NOTIFY data_version); every API process listens and keys its
// cached bodies by the versions a route declares, so a refresh committed anywhere retires the
// older bodies in every process at once. The TTL is only a safety net. Admission runs for every
// request: in the route (mountRoutes), where only the handler's query is skipped, or in the
// shortcut, which answers a URL cached before without parsing or routing it.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Context, Next } from 'koa';
import { LRUCache } from 'lru-cache';
import { memoized } from '../memo.ts';
import type { Sql } from '../db/client.ts';
import type { Listener } from '../db/listener.ts';
import { admissionDecision, limitHeaders, presentedBearer, type AdmitRoute, type AdmitRow } from './admission.ts';
import { COMPRESS_THRESHOLD_BYTES, openHead, setHeaders, writeAnswer, writeNotModified } from './head.ts';
import type { Deps } from './admission.ts';
import { publicBase } from './base.ts';

/** The groups of served data, one row each in app.data_versions. */
export type DataGroup = 'market' | 'sentiment' | 'indicators' | 'fx' | 'content' | 'liquidations';

/** What the cache reads of a route's declaration (RouteSpec, src/http/routes.ts). */
export interface CachedRoute {
  method: string;
  path: string;
  cache?: RouteCache;
  query?: unknown;
  noStore?: boolean;
  public?: boolean;
}

export interface RouteCache {
  /** the data versions the body depends on */
  data: DataGroup[];
  /** Cache-Control max-age, and the in-process TTL: the refresh cadence of the data */
  maxAgeSeconds: number;
  /**
   * Browsers revalidate every use (no-cache, with the ETag): for answers whose permission depends on
   * the page showing them (widgets), which a browser's cache would otherwise hand to any page.
   */
  revalidate?: boolean;
}

// The declarations of src/api, by refresh cadence: market data every minute (FX rates ride along,
// being read wherever prices are converted), sentiment every 15 minutes, content on import,
// liquidations on ingest.
export const MARKET_CACHE: RouteCache = { data: ['market', 'fx'], maxAgeSeconds: 30 };
export const SENTIMENT_CACHE: RouteCache = { data: ['sentiment', 'market'], maxAgeSeconds: 60 };
export const INDICATORS_CACHE: RouteCache = { data: ['indicators'], maxAgeSeconds: 60 };
export const CONTENT_CACHE: RouteCache = { data: ['content'], maxAgeSeconds: 300 };
// the raw feed, by ingest (every minute live); coin names and logos ride on the market version
export const LIQUIDATIONS_CACHE: RouteCache = { data: ['liquidations', 'market'], maxAgeSeconds: 30 };

/** Versions are re-read this often besides the notifications, should the listening connection be lost. */
const POLL_MS = 5_000;
/**
 * Confirming by a turn of the event loop trusts the listening connection: it pings itself through
 * NOTIFY at every poll, and once nothing was heard on it for this long (lost, or the database too
 * busy to answer), requests confirm by a read again.
 */
const LISTENER_SILENT_MS = 2 * POLL_MS;
/** Request URLs remembered with the cache key they parsed to (the warm-hit shortcut), at most. */
const SHORTCUTS = 10_000;

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);
// compressed once per body and version, so a better ratio is worth the time
const ENCODERS = {
  br: (body: Buffer) => brotliAsync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 7, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  gzip: (body: Buffer) => gzipAsync(body, { level: 9 }),
};
type Encoding = keyof typeof ENCODERS;

interface Version {
  version: number;
  changedAt: Date;
}

/**
 * How a strict answer makes sure no refresh committed before its request is missed: `read`, a read
 * of the versions begun after the request arrived; `turn`, one turn of the event loop, where the
 * database delivers every NOTIFY to its listeners before it acknowledges the commit (the embedded
 * one, src/db/embedded/multiplexer.ts): a notification of such a commit is then already on the
 * listening connection, and the poll phase reads it before the turn ends.
 */
export type Confirmation = 'read' | 'turn';

/** The current data versions, kept by the notifications on data_version and re-read whenever the listener resynchronises. */
export class DataVersions {
  private readonly versions = new Map<string, Version>();
  private started: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private stopped = false;
  /** false until the versions were read once: nothing is cached or validated before */
  known = false;

  private readonly sql: Sql;
  private readonly listener: Listener;
  private readonly confirmation: Confirmation;
  /** when the listening connection was last (re)established or carried a notification (performance.now) */
  private heardAt = -Infinity;
  /** the next turn of the event loop, shared by the requests of this one */
  private turn: Promise<boolean> | null = null;
  /** reads of the versions made to confirm a request (not the polls) */
  confirmReads = 0;

  constructor(sql: Sql, listener: Listener, confirmation: Confirmation = 'read') {
    this.sql = sql;
    this.listener = listener;
    this.confirmation = confirmation;
  }

  start(): Promise<void> {
    this.started ??= (async () => {
      // told at the subscription and after each reconnection: notifications sent meanwhile are lost
      this.unsubscribe = this.listener.subscribe('data_version', {
        message: (payload) => this.apply(payload),
        resync: () => {
          this.heardAt = performance.now();
          void this.reread();
        },
      });
      await this.reread();
      if (this.stopped) return;
      this.timer = setInterval(() => void this.poll(), POLL_MS);
      this.timer.unref();
    })();
    return this.started;
  }

  /** Stops listening and polling (the app's close). */
  stop() {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.unsubscribe?.();
  }

  /** The versions of `groups` as one tag, and when the newest of them changed; null while unknown. */
  current(groups: DataGroup[]): { tag: string; changedAt: Date } | null {
    if (!this.known) return null;
    let changedAt = new Date(0);
    const parts: string[] = [];
    for (const group of groups) {
      const version = this.versions.get(group) ?? { version: 0, changedAt: new Date(0) };
      parts.push(`${group}:${version.version}`);
      if (version.changedAt > changedAt) changedAt = version.changedAt;
    }
    return { tag: parts.join(','), changedAt };
  }

  /** the read of the versions under way (and since when), and the one that starts when it ends */
  private reading: Promise<boolean> | null = null;
  private readingSince = 0;
  private following: Promise<boolean> | null = null;
  /** the last read handed out with its bound, shared by the requests that wait for it */
  private waitedFor: { read: Promise<boolean>; bounded: Promise<boolean> } | null = null;
  /** confirmations answered from the announced versions because the database took longer than the bound */
  waitedOut = 0;

  /**
   * Confirming by turns (the embedded database, while the listening connection is heard): resolves
   * after this turn's poll phase, which reads every notification already on the connection.
   * Otherwise resolves once the versions were read by a query that began after this call, so a refresh
   * committed before the request arrived is seen even while its NOTIFY is still on the way (it can
   * trail the commit). Concurrent requests share the reads: one in flight, the next one starting as
   * it ends, for every request that arrived meanwhile. False when the database could not be asked.
   *
   * With `waitMs`: a database that has not answered the read in flight for that long is busy (the
   * embedded one runs one statement at a time: a backfill piece, a table's maintenance), and a
   * request goes on at once with the versions as announced, like CACHE_FRESHNESS=notify: a refresh
   * committed before sent its NOTIFY at its commit, and only one committed within the notification's
   * delivery time can be missed. A request arriving while the database answers waits at most `waitMs`.
   */
  confirm(waitMs = Infinity): Promise<boolean> {
    if (this.confirmation === 'turn' && this.known && performance.now() - this.heardAt < LISTENER_SILENT_MS) return this.nextTurn();
    this.confirmReads++;
    if (!Number.isFinite(waitMs)) return this.read();
    if (this.reading && performance.now() - this.readingSince >= waitMs) {
      this.waitedOut++;
      return Promise.resolve(this.known);
    }
    const read = this.read();
    if (this.waitedFor?.read !== read) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => {
          this.waitedOut++;
          resolve(this.known);
        }, waitMs);
      });
      this.waitedFor = { read, bounded: Promise.race([read, late]).finally(() => clearTimeout(timer)) };
    }
    return this.waitedFor.bounded;
  }

  /** Resolves in the check phase of this turn of the event loop, after its poll phase read what had arrived. */
  private nextTurn(): Promise<boolean> {
    return (this.turn ??= new Promise((resolve) => setImmediate(() => {
      this.turn = null;
      resolve(true);
    })));
  }

  /** The periodic re-read; confirming by turns, also a NOTIFY to itself that shows the listening connection alive. */
  private async poll() {
    await this.reread();
    if (this.confirmation === 'turn') await this.sql`select pg_notify('data_version', 'ping')`.catch(() => {});
  }

  /** A read begun after this call: the one starting now, or the one following the read in flight. */
  private read(): Promise<boolean> {
    if (!this.reading) {
      this.readingSince = performance.now();
      this.reading = this.reread().finally(() => (this.reading = null));
      return this.reading;
    }
    this.following ??= this.reading.then(() => {
      this.following = null;
      return this.read();
    });
    return this.following;
  }

  private async reread(): Promise<boolean> {
    try {
      const rows = await this.sql<{ name: string; version: string; changed_at: Date }[]>`
        select name, version, changed_at from app.data_versions`;
      for (const row of rows) this.set(row.name, Number(row.version), row.changed_at);
      this.known = true;
      return true;
    } catch {
      // the database is away: the next (re)connect or poll reads them again
      return false;
    }
  }

  /** A notification 'name:version:changed_at epoch ms' (app.bump_data_version), or a poll's 'ping'. */
  private apply(payload: string) {
    this.heardAt = performance.now();
    const [name, version, changedAt] = payload.split(':');
    if (!name || !version) return;
    this.set(name, Number(version), changedAt ? new Date(Number(changedAt)) : new Date());
  }

  // Versions only grow: a notification and a re-read may arrive in either order.
  private set(name: string, version: number, changedAt: Date) {
    const known = this.versions.get(name);
    if (!known || version > known.version) this.versions.set(name, { version, changedAt });
  }
}

interface Entry {
  body: Buffer;
  etag: string;
  /** compressed lazily, once */
  encoded: Partial<Record<Encoding, Promise<Buffer>>>;
}

/** The caching headers of a cached answer, flat: private, since every request carries a key and a shared cache must not answer for its quota. */
const cacheHeaders = (etag: string, changedAt: Date, { maxAgeSeconds, revalidate }: RouteCache) =>
  ['Cache-Control', revalidate ? 'private, no-cache' : `private, max-age=${maxAgeSeconds}`, 'ETag', etag, 'Last-Modified', httpDate(changedAt.getTime())];

/** HTTP-dates of the versions' change times (epoch ms), formatted once each: there are a handful at a time. */
const httpDate = memoized((time: number) => new Date(time).toUTCString(), { max: 100 });

/** The body in the encoding the request accepts, compressed once per entry; `encoding` null for identity. */
async function encodedBody(ctx: Context, entry: Entry): Promise<{ body: Buffer; encoding: Encoding | null }> {
  const accepted = entry.body.length >= COMPRESS_THRESHOLD_BYTES ? ctx.acceptsEncodings('br', 'gzip', 'identity') : 'identity';
  if (accepted !== 'br' && accepted !== 'gzip') return { body: entry.body, encoding: null };
  return { body: await (entry.encoded[accepted] ??= ENCODERS[accepted](entry.body)), encoding: accepted };
}

/** JSON with object keys sorted, so equal parsed queries give equal keys whatever their order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, item) =>
    item && typeof item === 'object' && !Array.isArray(item) && !(item instanceof Date)
      ? Object.fromEntries(Object.keys(item).sort().map((name) => [name, item[name]]))
      : item,
  );
}

/** A strong ETag of content: the one digest every cacheable answer of the service uses. */
export const strongEtag = (content: Buffer | string) => `"${createHash('sha256').update(content).digest('base64url').slice(0, 27)}"`;

/** If-None-Match (a list, or *) against the current ETag; W/ compares weakly, as RFC 9110 asks. */
function notModified(ctx: Context, etag: string) {
  const header = ctx.get('if-none-match');
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** The body's JSON text (the handler's answer, serialised once) */
export type Produce = () => Promise<string>;
/** `admission`: how the route admitted this request, to admit a later one of the same URL alike (null: never shortcut) */
export type Serve = (ctx: Context, input: { query: unknown; params: unknown }, produce: Produce, status: number, admission: AdmitRoute | null) => Promise<void>;

/** What a request URL parsed to the last time it was answered: enough to answer it again without parsing. */
interface Shortcut extends RouteCache {
  /** the cache key without the data versions */
  base: string;
  status: number;
  /** the route's admission of this URL (plan, per_page, endpoint) */
  admission: AdmitRoute;
  /** the matched route, for the request log and metrics (observe.ts) */
  matchedRoute: string;
}

/** What the shortcut needs of the app: the request's id and the headers every response carries. */
export interface ShortcutHead {
  /** the headers every API answer starts with (request id, security headers, Vary), flat: a fresh list each call */
  headers(ctx: Context): string[];
  /** a request the app's own checks (header size, body) might refuse: left to the full chain */
  ordinary(ctx: Context): boolean;
}

/**
 * The response cache of one app: `serve(route)` is the middleware of a route declaring `cache`,
 * null for the others (not GET, noStore or public routes are never cached); `shortcut` answers a
 * URL already answered from the cache before the body parser and the routers, skipping the
 * parsing and routing that gave the same key last time (admission still runs for every request).
 */
export function responseCache(deps: Deps & { listener: Listener }, routes: CachedRoute[]) {
  const maxSize = deps.config.RESPONSE_CACHE_MB * 1024 * 1024;
  const store = maxSize > 0
    ? new LRUCache<string, Entry>({ maxSize, sizeCalculation: (entry) => Math.max(1, entry.body.length * 2) })
    : null;
  const shortcuts = store ? new LRUCache<string, Shortcut>({ max: SHORTCUTS }) : null;
  const versions = new DataVersions(deps.sql, deps.listener, deps.config.CACHE_FRESHNESS === 'strict' && deps.config.database.embedded ? 'turn' : 'read');
  const cached = routes.filter(cacheable);
  if (cached.length > 0) void versions.start();
  // without a store every answer is computed afresh (its ETag is its digest): the versions then
  // only give Last-Modified, not worth a read per request
  const strict = deps.config.CACHE_FRESHNESS !== 'notify' && store !== null;
  /** The versions of `data` as a request must see them: re-read after its arrival (strict), or as last announced. */
  const wait = deps.config.CACHE_CONFIRM_WAIT_MS;
  const currentFor = async (data: DataGroup[]) => (!strict || (await versions.confirm(wait)) ? versions.current(data) : null);
  // links in the bodies are absolute, on the service's base (PUBLIC_URL, else the request's Host): part of
  // every key. (Koa's ctx.origin is the browser's Origin header: keyed on it, one host's links went to another.)
  const origin = (ctx: Context) => publicBase(ctx, deps.config);

  /**
   * 304 when the request holds the ETag, else the body: a kept entry's in the encoding the client
   * accepts (compressed once; koa-compress leaves a body that has its Content-Encoding already), a
   * text as it is (koa-compress compresses it: there is nothing to keep the encoding in).
   */
  async function send(ctx: Context, status: number, etag: string, body: Entry | string) {
    if (notModified(ctx, etag)) return writeNotModified(ctx);
    if (typeof body === 'string') return writeAnswer(ctx, status, body);
    const encoded = await encodedBody(ctx, body);
    await writeAnswer(ctx, status, encoded.body, encoded.encoding);
  }

  /** `matchedRoute`: the route's Koa path under the prefix, as the router would leave it for the request log */
  function serve(route: CachedRoute, matchedRoute: string): Serve | null {
    if (!cacheable(route)) return null;
    const { data, maxAgeSeconds } = route.cache!;
    // pagination links repeat the request's own query string, in its order
    const rawQuery = 'page' in ((route.query as unknown as { shape?: object } | undefined)?.shape ?? {});
    return async (ctx, input, produce, status, admission) => {
      const current = await currentFor(data);
      // versions not read yet: answer as without a cache
      if (!current) return writeAnswer(ctx, status, await produce());
      // without a store nothing is kept, so no key is built: the text's ETag is its digest
      if (!store) {
        const text = await produce();
        const etag = strongEtag(text);
        setHeaders(ctx, cacheHeaders(etag, current.changedAt, route.cache!));
        return send(ctx, status, etag, text);
      }
      const base = [
        route.method, route.path, origin(ctx), rawQuery ? ctx.querystring : '', canonical(input.query), canonical(input.params),
      ].join('\n');
      const key = `${base}\n${current.tag}`;
      let entry = store.get(key);
      if (!entry) {
        const body = Buffer.from(await produce());
        entry = { body, etag: strongEtag(body), encoded: {} };
        store.set(key, entry, { ttl: maxAgeSeconds * 1000 });
      }
      if (admission) shortcuts?.set(`${origin(ctx)}\n${ctx.url}`, { ...route.cache!, base, status, admission, matchedRoute });
      setHeaders(ctx, cacheHeaders(entry.etag, current.changedAt, route.cache!));
      await send(ctx, status, entry.etag, entry);
    };
  }

  /**
   * Middleware, first after the error envelope: a GET of a URL answered before whose body is still
   * current is admitted and answered here, its headers written in one call (setting some thirty
   * headers one by one cost as much as the rest of the answer). Anything else, and a refusal
   * (whose decision the route then reuses, uncounted), goes on down the chain.
   */
  function shortcut(head: ShortcutHead) {
    return async (ctx: Context, next: Next) => {
      const hit = ctx.method === 'GET' ? shortcuts?.get(`${origin(ctx)}\n${ctx.url}`) : undefined;
      if (!hit || !head.ordinary(ctx)) return next();
      const current = await currentFor(hit.data);
      const entry = current ? store!.get(`${hit.base}\n${current.tag}`) : undefined;
      if (!current || !entry) return next();
      (ctx as { _matchedRoute?: string })._matchedRoute = hit.matchedRoute;
      let row: AdmitRow;
      try {
        row = await admissionDecision(ctx, deps, presentedBearer(ctx.get('authorization')), hit.admission);
      } catch {
        return next();
      }
      if (row.outcome !== 'ok') {
        ctx.state.decided = row;
        return next();
      }
      const headers = head.headers(ctx);
      headers.push(...limitHeaders(row), ...cacheHeaders(entry.etag, current.changedAt, hit));
      openHead(ctx, headers);
      await send(ctx, hit.status, entry.etag, entry);
    };
  }

  return { serve, shortcut, versions };
}

/** The response cache of one app (createApp's), handed to the routers mounted beside the API. */
export type ResponseCache = ReturnType<typeof responseCache>;

/** Only a GET of shared data that depends on some data version: never per-key state, never public routes. */
export function cacheable(route: CachedRoute): boolean {
  return route.method === 'get' && !!route.cache && route.cache.data.length > 0 && !route.noStore && !route.public;
}
