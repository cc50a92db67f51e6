// The service's VAPID identity (RFC 8292): VAPID_PUBLIC_KEY/VAPID_PRIVATE_KEY when given, else the
// pair in app.vapid_keys, made (web-push's generateVAPIDKeys) by the first process that needs it,
// at start-up. The subject is VAPID_SUBJECT, else PUBLIC_URL when it is https.
import webPush from 'web-push';
import type { Config } from '../config.ts';
import type { Query } from '../db/query.ts';

export interface Vapid {
  subject: string;
  publicKey: string;
  privateKey: string;
}

export type VapidConfig = Pick<Config, 'VAPID_PUBLIC_KEY' | 'VAPID_PRIVATE_KEY' | 'VAPID_SUBJECT' | 'PUBLIC_URL'>;

/** How push services reach the operator: VAPID_SUBJECT, else PUBLIC_URL (https only), else a placeholder address. */
export const vapidSubject = (config: VapidConfig) =>
  config.VAPID_SUBJECT ?? (config.PUBLIC_URL?.startsWith('https://') ? config.PUBLIC_URL : 'mailto:push@localhost');

/** The key pair and subject; the stored pair is made on first call when the settings give none. */
export async function loadVapid(query: Query, config: VapidConfig): Promise<Vapid> {
  const subject = vapidSubject(config);
  if (config.VAPID_PUBLIC_KEY && config.VAPID_PRIVATE_KEY) return { subject, publicKey: config.VAPID_PUBLIC_KEY, privateKey: config.VAPID_PRIVATE_KEY };
  const candidate = webPush.generateVAPIDKeys();
  const [row] = await query<{ public_key: string; private_key: string }>('select * from app.push_vapid_keys($1, $2)', [candidate.publicKey, candidate.privateKey]);
  return { subject, publicKey: row!.public_key, privateKey: row!.private_key };
}

/** loadVapid once per process (the pair changes only with a restart), retried after a failure. */
export function vapidOnce(query: Query, config: VapidConfig): () => Promise<Vapid> {
  let loading: Promise<Vapid> | null = null;
  return () => (loading ??= loadVapid(query, config).catch((error) => {
    loading = null;
    throw error;
  }));
}
