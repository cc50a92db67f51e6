// A webhook receiver that verifies what the service sends, with nothing beyond Node itself.
//
//   WEBHOOK_SECRET=whsec_... PORT=8787 node examples/verify-webhook.ts
//
// Register http(s)://<this host>:8787/ with POST /api/v1/webhooks (events: ["alarm.triggered"])
// and keep the secret of the response. Each request is accepted only if
//   1. X-Service-Signature `t=<unix>,v1=<hex>` matches the HMAC-SHA256 of `<t>.<raw body>`
//      keyed with the secret, compared in constant time, and
//   2. t is at most 300 seconds away from now (a replayed or stale request fails).
// Retries resend the same event id (body `id`, header X-Service-Event-Id): handle each id once.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

export const TOLERANCE_SECONDS = 300;

export type Verification = { ok: true } | { ok: false; reason: string };

/** Checks one request: the raw body exactly as received (not re-serialised JSON) and the X-Service-Signature header. */
export function verifyWebhook(
  rawBody: string,
  signature: string | undefined,
  secret: string,
  options: { nowSeconds?: number; toleranceSeconds?: number } = {},
): Verification {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature ?? '');
  if (!match) return { ok: false, reason: 'missing or malformed signature header' };
  const [, timestamp, received] = match as unknown as [string, string, string];
  const expected = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest();
  if (!timingSafeEqual(expected, Buffer.from(received, 'hex'))) return { ok: false, reason: 'signature mismatch' };
  // Checked after the HMAC, so t itself is known to come from the service.
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? TOLERANCE_SECONDS)) return { ok: false, reason: 'timestamp outside the tolerance window' };
  return { ok: true };
}

function serve(port: number, secret: string) {
  // Event ids already handled; a real receiver keeps them in its database.
  const seen = new Set<string>();
  createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const verdict = verifyWebhook(rawBody, request.headers['x-service-signature'] as string | undefined, secret);
      if (!verdict.ok) {
        console.log(`rejected: ${verdict.reason}`);
        response.writeHead(400).end();
        return;
      }
      const event = JSON.parse(rawBody) as { id: string; type: string; test: boolean; data: unknown };
      if (seen.has(event.id)) console.log(`duplicate ${event.id} ignored`);
      else {
        seen.add(event.id);
        console.log(`${event.type}${event.test ? ' (test)' : ''} ${event.id}: ${JSON.stringify(event.data)}`);
      }
      // Answer 2xx quickly (within 10 s) and do slow work afterwards; anything else is retried.
      response.writeHead(204).end();
    });
  }).listen(port, () => console.log(`listening on :${port}`));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) {
    console.error('set WEBHOOK_SECRET to the secret returned when the endpoint was registered');
    process.exit(1);
  }
  serve(Number(process.env.PORT ?? 8787), secret);
}
