// Where a widget may be shown: the origins listed on its key (app.widget_keys.allowed_origins),
// checked against the request's Origin, else its Referer, and sent as frame-ancestors. A key's
// origins are cached in the process until a change of the key is announced (NOTIFY api_keys,
// heard by the admission batcher, which drops the key itself too): revoking a key or editing its
// origins takes effect within a second, as a revocation of an API key does.
import { LRUCache } from 'lru-cache';
import type { Context } from 'koa';
import type { Sql } from '../db/client.ts';
import type { AdmissionBatcher } from '../http/admission-batch.ts';
import type { KeyDigest } from '../keys.ts';

/** The origin of the page that asks for a widget: Origin when sent, else Referer's; null when neither says. */
export function requestOrigin(ctx: Context): string | null {
  const origin = ctx.get('origin');
  if (origin && origin !== 'null') return origin.toLowerCase();
  const referer = ctx.get('referer');
  if (!referer) return null;
  try {
    return new URL(referer).origin;
  } catch {
    return null;
  }
}

/** A live widget key's id and allowed origins, by the key's hash, cached while no change is announced. */
export class WidgetKeys {
  private readonly cache = new LRUCache<string, { keyId: number; origins: string[] }>({ max: 10_000, ttl: 60_000 });
  /** bumped on every announcement: a lookup that began before must not cache its answer */
  private generation = 0;
  private readonly sql: Sql;
  private readonly batcher: AdmissionBatcher | null;

  constructor(sql: Sql, batcher: AdmissionBatcher | null | undefined) {
    this.sql = sql;
    this.batcher = batcher ?? null;
    this.batcher?.onForget((payload) => {
      this.generation++;
      if (payload === '*') this.cache.clear();
      else this.cache.delete(payload);
    });
  }

  /**
   * The key, or null when unknown, revoked or its account disabled. Cached only while the batcher
   * hears announcements (without it, or before its LISTEN is in place, every request asks).
   */
  lookup(digest: KeyDigest): { keyId: number; origins: string[] } | null | Promise<{ keyId: number; origins: string[] } | null> {
    const cached = this.batcher?.live ? this.cache.get(digest.hex) : undefined;
    if (cached) return cached;
    const generation = this.generation;
    return this.sql<{ key_id: string; allowed_origins: string[] }[]>`select * from app.widget_key(${digest.hash})`.then(([row]) => {
      if (!row) return null;
      const found = { keyId: Number(row.key_id), origins: row.allowed_origins };
      if (this.batcher?.live && generation === this.generation) this.cache.set(digest.hex, found);
      return found;
    });
  }
}
