// Console sessions and CSRF tokens. The session cookie carries a random token; the database keeps
// only its SHA-256 (app.console_sessions). A form's CSRF token is derived from the session token (or,
// before sign-in, from a pre-session cookie), so a page from another site cannot know it.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { Config } from '../config.ts';
import { hashKey } from '../keys.ts';

export const newToken = () => randomBytes(32).toString('base64url');
/** How a token is stored: its SHA-256, as API keys are. */
export const tokenHash = hashKey;

/** Behind HTTPS (PUBLIC_URL https): Secure, and the __Host- prefix (no Domain, Path=/). */
export function cookieNames(config: Pick<Config, 'PUBLIC_URL'>) {
  const secure = config.PUBLIC_URL?.startsWith('https://') ?? false;
  const prefix = secure ? '__Host-' : '';
  return { session: `${prefix}mdapi_console`, pre: `${prefix}mdapi_console_pre`, secure };
}

export function readCookie(ctx: Context, name: string): string | null {
  for (const part of (ctx.get('cookie') || '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim() || null;
  }
  return null;
}

/** Set-Cookie by hand: Koa's cookies refuse Secure on the plain HTTP hop behind a TLS proxy. */
export function setCookie(ctx: Context, name: string, value: string, secure: boolean, maxAgeSeconds?: number) {
  const attributes = ['Path=/', 'HttpOnly', 'SameSite=Lax', ...(secure ? ['Secure'] : []), ...(maxAgeSeconds !== undefined ? [`Max-Age=${maxAgeSeconds}`] : [])];
  ctx.append('Set-Cookie', `${name}=${value}; ${attributes.join('; ')}`);
}

export const csrfFor = (token: string) => createHash('sha256').update(`csrf\0${token}`).digest('base64url');

export function csrfMatches(token: string | null, presented: unknown): boolean {
  if (!token || typeof presented !== 'string') return false;
  const expected = Buffer.from(csrfFor(token));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Where to go after sign-in: a path under /console only (no scheme, no host, no `//` or `\`
 * that a browser would read as another site); anything else goes to the keys page.
 */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || next.length > 500) return '/console/keys';
  // `..` and its escaped forms (`%2e%2e`, which a browser also resolves) would climb out of /console
  const escapes = next.includes('//') || /\/(?:\.|%2e)/i.test(next);
  return /^\/console(?:[/?][\w\-./?=&%~]*)?$/.test(next) && !escapes ? next : '/console/keys';
}
