// API keys: `mdk_` and 43 base64url characters (32 random bytes). Only the SHA-256 of a key is
// stored; the key itself is printed once, at creation.
import { hash, randomBytes } from 'node:crypto';
import type { Sql } from './db/client.ts';
import { memoized } from './memo.ts';
import type { McpPlanName, PlanName, WidgetPlanName } from './plans.ts';
import { email as emailRule } from './validators.ts';

export const hashKey = (key: string) => hash('sha256', key, 'buffer') as unknown as Buffer;

export interface KeyDigest {
  hash: Buffer;
  /** the hash in hex: how the admission cache and the api_keys notifications name a key */
  hex: string;
}

/**
 * The SHA-256 of a presented key (and its hex), computed once per key while a client keeps sending
 * it; a real key is 47 characters, so a longer made-up one is hashed every time rather than kept.
 */
export const keyDigest = memoized((key: string): KeyDigest => {
  const hashed = hashKey(key);
  return { hash: hashed, hex: hashed.toString('hex') };
}, { max: 10_000, maxKeyLength: 100 });

export interface NewKey {
  plan: PlanName | McpPlanName;
  owner: string;
  scope: 'data-api' | 'mcp';
  /** the name its owner gives it in the console */
  name?: string | null;
}

export async function createKey(sql: Sql, { plan, owner, scope, name = null }: NewKey): Promise<{ id: number; key: string }> {
  const key = `mdk_${randomBytes(32).toString('base64url')}`;
  const [row] = await sql<{ id: string }[]>`
    insert into app.api_keys (key_hash, prefix, owner, plan, scope, name)
    values (${hashKey(key)}, ${key.slice(0, 12)}, ${owner}, ${plan}, ${scope}, ${name})
    returning id`;
  return { id: Number(row!.id), key };
}

/** Whose keys a console section acts on: one owner's, of one scope (a section never touches another's keys). */
export interface KeyHolder {
  owner: string;
  scope: NewKey['scope'];
}

/**
 * Revokes by id or by the key's printed prefix, of one owner and scope only when given (the
 * console); returns how many keys it revoked.
 */
export async function revokeKey(sql: Sql, idOrPrefix: string, of?: KeyHolder): Promise<number> {
  const which = /^\d+$/.test(idOrPrefix) ? sql`id = ${idOrPrefix}` : sql`prefix = ${idOrPrefix}`;
  // a rotated key in its grace period is revoked at once too
  const rows = await sql`
    update app.api_keys set revoked_at = now()
    where ${which} and app.key_live(revoked_at) ${of === undefined ? sql`` : sql`and owner = ${of.owner} and scope = ${of.scope}`} returning id`;
  return rows.length;
}

/** The longest a rotated key keeps working beside its successor. */
export const MAX_ROTATION_GRACE_HOURS = 7 * 24;

/**
 * Rotates a key of `owner` in `scope` (not revoked, not already rotated): a new key with the same owner, plan, scope and name, while the
 * old one keeps working for `graceHours` (0: refused at once) and is then refused as revoked.
 * Null when the owner has no such key in that scope.
 */
export async function rotateKey(sql: Sql, id: string, { owner, scope }: KeyHolder, graceHours: number): Promise<{ id: number; key: string; retiresAt: Date } | null> {
  if (!(graceHours >= 0 && graceHours <= MAX_ROTATION_GRACE_HOURS)) throw new RangeError(`grace must be 0 to ${MAX_ROTATION_GRACE_HOURS} hours`);
  return sql.begin(async (tx) => {
    const [old] = await tx<{ plan: PlanName | McpPlanName; name: string | null }[]>`
      select plan, name from app.api_keys where id = ${id} and owner = ${owner} and scope = ${scope} and revoked_at is null for update`;
    // not a key already rotated (retiring): its successor exists
    if (!old) return null;
    const created = await createKey(tx as unknown as Sql, { plan: old.plan, owner, scope, name: old.name });
    const [retired] = await tx<{ revoked_at: Date }[]>`
      update app.api_keys set revoked_at = now() + make_interval(hours => ${graceHours}) where id = ${id} returning revoked_at`;
    return { ...created, retiresAt: retired!.revoked_at };
  }) as Promise<{ id: number; key: string; retiresAt: Date } | null>;
}

export async function listKeys(sql: Sql) {
  return sql<{ id: string; prefix: string; owner: string; plan: string; scope: string; created_at: Date; last_used_at: Date | null; revoked_at: Date | null }[]>`
    select id, prefix, owner, plan, scope, created_at, last_used_at, revoked_at from app.api_keys order by id`;
}

/** An address the one e-mail rule (src/validators.ts) refuses. */
export class InvalidEmailError extends Error {}

/**
 * Sets the e-mail address of a key owner (app.owners), unverified unless `verified`: alarm e-mails
 * and deprecation notices go there. A changed address loses its verification. The address is
 * stored in its canonical form; InvalidEmailError when the e-mail rule refuses it.
 */
export async function setOwnerEmail(sql: Sql, owner: string, given: string, verified = false): Promise<void> {
  const parsed = emailRule.safeParse(given);
  if (!parsed.success) throw new InvalidEmailError(given);
  // the table's check (one @, no white space) is looser than the rule: never met from here
  await sql`
    insert into app.owners as o (owner, email, email_verified_at)
    values (${owner}, ${parsed.data}, ${verified ? sql`now()` : null})
    on conflict (owner) do update set
      email = excluded.email,
      email_verified_at = coalesce(excluded.email_verified_at, case when o.email = excluded.email then o.email_verified_at end),
      updated_at = now()`;
}

// Widget keys: publishable (mdw_ and 32 base64url characters, 24 random bytes), made in the console.
// Admitted by their SHA-256 in app.api_keys (scope widget), so revocation, quotas and counting are the
// API keys' own; stored as they are in app.widget_keys too, since every embedding page carries the key
// and the widget builder shows it in each snippet.
export interface NewWidgetKey {
  owner: string;
  plan: WidgetPlanName;
  name: string;
  /** canonical origins (canonicalOrigin, src/widget-options.ts), 1 to 20 */
  origins: string[];
}

export async function createWidgetKey(sql: Sql, { owner, plan, name, origins }: NewWidgetKey): Promise<{ id: number; key: string }> {
  const key = `mdw_${randomBytes(24).toString('base64url')}`;
  const [row] = await sql<{ id: string }[]>`
    select app.console_create_widget_key(${owner}, ${hashKey(key)}, ${key}, ${plan}, ${name}, ${origins}::text[]) as id`;
  return { id: Number(row!.id), key };
}
