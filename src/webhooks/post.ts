// One HTTP attempt of a webhook delivery (and, through postOnce, of a browser push: src/push/send.ts).
// Success is a 2xx; a non-2xx (redirects are not followed), a connection error or the time-out (the
// whole exchange, connect to the end of the response) is a failure. Never throws: the outcome is what
// the outbox records (webhookSender, src/outbox.ts), with the first RESPONSE_EXCERPT_BYTES of the
// receiver's answer for the delivery log.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { bareHost, guardedLookup, isNonPublicAddress, type AddressAllowed } from './target.ts';
import { signatureHeader } from './signature.ts';
import type { Sender } from '../outbox.ts';

export interface WebhookMessage {
  url: string;
  secret: string;
  event: string;
  eventId: string;
  attempt: number;
  body: string;
}

export interface AttemptOutcome {
  responseStatus: number | null;
  durationMs: number;
  /** null on success */
  error: string | null;
  /** the start of the response body as text; null when no response arrived */
  responseExcerpt: string | null;
}

/** How much of a receiver's answer the delivery log keeps (app.webhook_attempts.response_excerpt). */
export const RESPONSE_EXCERPT_BYTES = 1000;

/**
 * Bytes of an answer as text that PostgreSQL can store: invalid UTF-8 (a character cut at the
 * bound included) and NUL become U+FFFD, so there is at most one character per byte.
 */
export const excerptText = (bytes: Buffer) => new TextDecoder('utf-8').decode(bytes).replaceAll('\0', '\uFFFD');

export const USER_AGENT = 'market-data-api-webhooks/1';

/** What app.begin_outbox_attempt returns for a delivery (app.webhook_outbox_message). */
export interface OutboxDelivery {
  url: string;
  secret: string;
  event: string;
  event_id: string;
  body: string;
}

/** The webhook channel's sender: a 2xx without error succeeded; anything else failed, and is retried. */
export const webhookSender = (options: { timeoutMs: number; allowPrivate: boolean }): Sender<OutboxDelivery> => async (delivery, attempt) => {
  const posted = await postWebhook({ url: delivery.url, secret: delivery.secret, event: delivery.event, eventId: delivery.event_id, attempt, body: delivery.body }, options);
  const ok = posted.error === null && posted.responseStatus !== null && posted.responseStatus >= 200 && posted.responseStatus < 300;
  return {
    outcome: ok ? 'succeeded' : 'failed', code: posted.responseStatus, detail: posted.error ?? (ok ? null : `HTTP ${posted.responseStatus}`),
    durationMs: posted.durationMs, responseExcerpt: posted.responseExcerpt,
  };
};

export function postWebhook(message: WebhookMessage, options: { timeoutMs: number; allowPrivate: boolean }): Promise<AttemptOutcome> {
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(message.body)),
    'user-agent': USER_AGENT,
    'x-service-event': message.event,
    'x-service-event-id': message.eventId,
    'x-service-delivery-attempt': String(message.attempt),
    'x-service-signature': signatureHeader(message.secret, message.body),
  };
  return postOnce(new URL(message.url), headers, message.body, { timeoutMs: options.timeoutMs, allowed: options.allowPrivate ? 'any' : () => false });
}

/**
 * One POST of `body` to `url`: redirects not followed; the time-out covers the whole exchange.
 * `allowed`: the non-public addresses that may be dialled besides public ones ('any': no check).
 * Never throws.
 */
export function postOnce(
  url: URL, headers: Record<string, string>, body: string | Buffer, options: { timeoutMs: number; allowed: AddressAllowed | 'any' },
): Promise<AttemptOutcome> {
  const started = performance.now();
  const done = (responseStatus: number | null, error: string | null, responseExcerpt: string | null = null): AttemptOutcome => ({
    responseStatus, durationMs: Math.round(performance.now() - started), error, responseExcerpt,
  });
  const host = bareHost(url);
  const { allowed } = options;
  // An IP literal is dialled without a lookup: check it here.
  if (allowed !== 'any' && isIP(host) && isNonPublicAddress(host) && !allowed(host)) {
    return Promise.resolve(done(null, `refused non-public address ${host}`));
  }
  return new Promise((resolve) => {
    let settled = false;
    let excerpt: Buffer | null = null;
    const finish = (status: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(status, error, excerpt && excerptText(excerpt)));
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, {
      method: 'POST', headers, lookup: allowed === 'any' ? undefined : guardedLookup(allowed), agent: false,
    }, (response) => {
      const status = response.statusCode ?? 0;
      // Read the whole body, so the exchange completes inside the time-out; keep only its start.
      excerpt = Buffer.alloc(0);
      response.on('data', (chunk: Buffer) => {
        if (excerpt!.length < RESPONSE_EXCERPT_BYTES) excerpt = Buffer.concat([excerpt!, chunk.subarray(0, RESPONSE_EXCERPT_BYTES - excerpt!.length)]);
      });
      response.on('end', () => finish(status, status >= 200 && status < 300 ? null : `HTTP ${status}`));
      response.on('error', (error) => finish(status, `response: ${error.message}`));
    });
    const timer = setTimeout(() => {
      finish(null, `timed out after ${options.timeoutMs} ms`);
      request.destroy();
    }, options.timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => finish(null, error.code ? `${error.code}: ${error.message}` : error.message));
    request.end(body);
  });
}
