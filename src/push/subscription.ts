// A browser's push subscription as the console receives it (PushSubscription.toJSON(): endpoint and
// keys p256dh, auth), checked before anything is stored: the keys must be a P-256 point and a
// 16-byte secret, and the endpoint an https URL of a public host (the webhook SSRF rules,
// src/webhooks/target.ts), or, with PUSH_ALLOW_LOOPBACK, an http(s) URL of a loopback host.
import { ECDH } from 'node:crypto';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { bareHost, hostProblem, isLoopbackAddress } from '../webhooks/target.ts';

/** base64 or base64url, padded or not, as base64url without padding; null when it is neither */
function base64url(value: string): Buffer | null {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return null;
  return Buffer.from(value.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'), 'base64url');
}

/** An uncompressed point on P-256 (65 bytes, 0x04 first): what a browser's p256dh key is. */
export function isP256Point(key: Buffer): boolean {
  if (key.length !== 65 || key[0] !== 0x04) return false;
  try {
    // OpenSSL refuses a point that is not on the curve
    ECDH.convertKey(key, 'prime256v1', undefined, undefined, 'uncompressed');
    return true;
  } catch {
    return false;
  }
}

export const subscriptionFields = z.object({
  endpoint: z.string({ error: 'Give the push endpoint.' }).trim().min(1, 'Give the push endpoint.').max(2000, 'Use at most 2000 characters.'),
  p256dh: z.string({ error: 'Give the p256dh key.' }).transform((value, ctx) => {
    const key = base64url(value.trim());
    if (!key || !isP256Point(key)) {
      ctx.addIssue({ code: 'custom', message: 'Must be a P-256 public key: 65 bytes in base64url.' });
      return z.NEVER;
    }
    return key.toString('base64url');
  }),
  auth: z.string({ error: 'Give the auth secret.' }).transform((value, ctx) => {
    const secret = base64url(value.trim());
    if (!secret || secret.length !== 16) {
      ctx.addIssue({ code: 'custom', message: 'Must be a 16-byte secret in base64url.' });
      return z.NEVER;
    }
    return secret.toString('base64url');
  }),
});
export type SubscriptionFields = z.infer<typeof subscriptionFields>;

/** Why `endpoint` may not receive pushes, or null when it may. */
export async function pushEndpointProblem(endpoint: string, config: Pick<Config, 'PUSH_ALLOW_LOOPBACK'>): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'Must be an absolute https URL.';
  }
  if (url.username || url.password) return 'Must not contain credentials.';
  const loopback = config.PUSH_ALLOW_LOOPBACK ? isLoopbackAddress : undefined;
  if (url.protocol !== 'https:' && !(loopback && url.protocol === 'http:')) return 'Must be an https URL.';
  const problem = await hostProblem(bareHost(url), loopback);
  // plain http is for a loopback push service only: a host with a public address needs https
  if (!problem && url.protocol === 'http:' && (await hostProblem(bareHost(url))) === null) return 'Must be an https URL (plain http only to a loopback host).';
  return problem;
}
