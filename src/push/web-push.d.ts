// The part of web-push 3.6.7 (CommonJS, no types of its own) the service uses: key generation and
// the request a push needs (RFC 8291 aes128gcm body, RFC 8292 VAPID Authorization), which
// src/push/send.ts sends itself (web-push's own sender speaks https only and skips the SSRF checks).
declare module 'web-push' {
  interface PushSubscription {
    endpoint: string;
    keys: { p256dh: string; auth: string };
  }
  interface RequestOptions {
    vapidDetails: { subject: string; publicKey: string; privateKey: string };
    TTL?: number;
    urgency?: 'very-low' | 'low' | 'normal' | 'high';
    topic?: string;
    contentEncoding?: 'aes128gcm' | 'aesgcm';
  }
  interface RequestDetails {
    method: 'POST';
    headers: Record<string, string | number>;
    body: Buffer | null;
    endpoint: string;
  }
  const webPush: {
    generateVAPIDKeys(): { publicKey: string; privateKey: string };
    generateRequestDetails(subscription: PushSubscription, payload: string | Buffer | null, options: RequestOptions): RequestDetails;
  };
  export default webPush;
}
