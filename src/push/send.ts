// One push to one browser: the notification (title, body, the console link it opens, and the
// alarm.triggered event as the API shows it) encrypted for the browser's keys (RFC 8291 aes128gcm)
// and signed with the service's VAPID key (RFC 8292) by web-push, then POSTed here with the
// webhook sender's guards (src/webhooks/post.ts: no redirects, the SSRF check at connection, one
// time-out for the whole exchange). Never throws: pushSender sorts the answer into the push
// outbox's outcomes (src/outbox.ts records them).
import webPush from 'web-push';
import { alarmHeadline, type AlarmTriggeredData } from '../alarm-wording.ts';
import type { Config } from '../config.ts';
import { postOnce, type AttemptOutcome } from '../webhooks/post.ts';
import { isLoopbackAddress } from '../webhooks/target.ts';
import type { Sender } from '../outbox.ts';
import { vapidOnce, type Vapid, type VapidConfig } from './vapid.ts';

/** A push of the outbox, as app.begin_outbox_attempt returns it (app.push_outbox_message). */
export interface OutboxPush {
  endpoint: string;
  p256dh: string;
  auth: string;
  kind: 'alarm.triggered' | 'push.test';
  data: unknown;
}

/** What the service worker (src/console/assets/sw.js) shows: title, body, the console page a click opens, and the event. */
export interface Notification {
  type: OutboxPush['kind'];
  title: string;
  body: string;
  url: string;
  tag: string;
  data?: unknown;
}

/** A push service keeps a message at most 4096 bytes; the encryption takes 103 of them (RFC 8291 §4). */
export const MAX_PAYLOAD_BYTES = 3_993;

/** The notification of a push; the event is left out when it would not fit (the link still opens the alarm). */
export function notification(push: Pick<OutboxPush, 'kind' | 'data'>): Notification {
  if (push.kind === 'push.test') {
    return { type: 'push.test', title: 'Test notification', body: 'This browser is notified when your push alarms trigger.', url: '/console/account', tag: 'push.test' };
  }
  const event = push.data as AlarmTriggeredData;
  const id = event.alarm?.id;
  const full: Notification = {
    type: 'alarm.triggered',
    title: `${event.alarm?.name ?? 'Alarm'} triggered`,
    body: `${alarmHeadline(event)}: now ${event.value}`,
    url: id === undefined ? '/console/alarms' : `/console/alarms#alarm-${id}`,
    tag: `alarm-${id ?? 'unknown'}`,
    data: event,
  };
  if (Buffer.byteLength(JSON.stringify(full)) <= MAX_PAYLOAD_BYTES) return full;
  const { data: _dropped, ...short } = full;
  return { ...short, title: short.title.slice(0, 200), body: short.body.slice(0, 1000) };
}

export type PushConfig = Pick<Config, 'PUSH_TIMEOUT_MS' | 'PUSH_ALLOW_LOOPBACK'>;

export const PUSH_USER_AGENT = 'market-data-api-push/1';

/** How long a push service keeps an undelivered message for an offline browser. */
const TTL_SECONDS = 24 * 3600;

export async function sendPush(push: OutboxPush, vapid: Vapid, config: PushConfig): Promise<AttemptOutcome> {
  let request: ReturnType<typeof webPush.generateRequestDetails>;
  try {
    request = webPush.generateRequestDetails(
      { endpoint: push.endpoint, keys: { p256dh: push.p256dh, auth: push.auth } },
      JSON.stringify(notification(push)),
      { vapidDetails: vapid, TTL: TTL_SECONDS, urgency: push.kind === 'alarm.triggered' ? 'high' : 'normal', contentEncoding: 'aes128gcm' },
    );
  } catch (error) {
    return { responseStatus: null, durationMs: 0, error: `not sent: ${(error as Error).message}`, responseExcerpt: null };
  }
  const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), String(value)]));
  return postOnce(new URL(request.endpoint), { ...headers, 'user-agent': PUSH_USER_AGENT }, request.body ?? Buffer.alloc(0), {
    timeoutMs: config.PUSH_TIMEOUT_MS,
    allowed: config.PUSH_ALLOW_LOOPBACK ? isLoopbackAddress : () => false,
  });
}

/**
 * The push channel's sender: 2xx delivered; 404/410 gone (the push service no longer knows the
 * browser: its subscription is removed); 5xx, 429, a time-out or connection error failed (retried);
 * another 4xx refused (not retried).
 */
export function pushSender(config: PushConfig & VapidConfig): Sender<OutboxPush> {
  let vapid: (() => Promise<Vapid>) | null = null;
  return async (push, _attempt, query) => {
    vapid ??= vapidOnce(query, config);
    const sent = await sendPush(push, await vapid(), config);
    const status = sent.responseStatus;
    const outcome = sent.error === null && status !== null && status >= 200 && status < 300 ? 'delivered'
      : status === 404 || status === 410 ? 'gone'
      : status !== null && status >= 400 && status < 500 && status !== 429 ? 'refused'
      : 'failed';
    return { outcome, code: status, detail: sent.error ?? (outcome === 'delivered' ? null : `HTTP ${status}`), durationMs: sent.durationMs };
  };
}
