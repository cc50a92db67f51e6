// The X-Service-Signature header: `t=<unix seconds>,v1=<hex>`, where <hex> is the lowercase hex
// HMAC-SHA256 of `<t>.<raw body>` keyed with the endpoint secret. Receivers check it as
// examples/verify-webhook.ts shows.
import { createHmac } from 'node:crypto';

export function signatureHeader(secret: string, rawBody: string, unixSeconds = Math.floor(Date.now() / 1000)): string {
  const hex = createHmac('sha256', secret).update(`${unixSeconds}.${rawBody}`).digest('hex');
  return `t=${unixSeconds},v1=${hex}`;
}
