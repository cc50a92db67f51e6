// Browser push without a browser: a subscriber made as a browser makes one (a P-256 key pair and a
// 16-byte auth secret), the RFC 8291 decryption of what it receives (node:crypto primitives, the
// test's own code: the service encrypts through web-push), the RFC 8292 VAPID check, and a loopback
// HTTP server standing in for the push service, whose answers a test scripts per path.
import { createECDH, createDecipheriv, createPublicKey, hkdfSync, randomBytes, verify, type ECDH } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface Subscriber {
  ecdh: ECDH;
  auth: Buffer;
  /** the subscription's keys as PushSubscription.toJSON() gives them */
  keys: { p256dh: string; auth: string };
}

export function subscriber(): Subscriber {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const auth = randomBytes(16);
  return { ecdh, auth, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') } };
}

/** RFC 8291 §3-4 and RFC 8188: one aes128gcm record, decrypted with the subscriber's private key and auth secret. */
export function decrypt(body: Buffer, { ecdh, auth }: Subscriber): string {
  // RFC 8188 §2.1 header: salt (16) | record size (4) | idlen (1) | keyid (the sender's public key)
  const salt = body.subarray(0, 16);
  const idlen = body[20]!;
  const senderPublic = body.subarray(21, 21 + idlen);
  const record = body.subarray(21 + idlen);
  const shared = ecdh.computeSecret(senderPublic);
  // RFC 8291 §3.4: IKM = HKDF(salt = auth, ikm = ECDH secret, info = "WebPush: info" 0x00 ua_public as_public, 32)
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), ecdh.getPublicKey(), senderPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', shared, auth, keyInfo, 32));
  // RFC 8188 §2.2-2.3: CEK and nonce from the record's salt
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  const plain = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  // the last record's padding: a 0x02 delimiter, then zeros
  let end = plain.length - 1;
  while (end >= 0 && plain[end] === 0) end--;
  if (plain[end] !== 2) throw new Error('no last-record delimiter');
  return plain.subarray(0, end).toString('utf8');
}

/** RFC 8292: `vapid t=<JWT>, k=<public key>`; the JWT's ES256 signature checked with k. Returns k and the claims, or throws. */
export function verifyVapid(authorization: string | undefined): { k: string; claims: { aud: string; exp: number; sub: string } } {
  const match = /^vapid t=([\w-]+\.[\w-]+\.[\w-]+), k=([\w-]+)$/.exec(authorization ?? '');
  if (!match) throw new Error(`not a VAPID Authorization header: ${authorization}`);
  const [, jwt, k] = match as unknown as [string, string, string];
  const [header, payload, signature] = jwt.split('.') as [string, string, string];
  if (JSON.parse(Buffer.from(header, 'base64url').toString()).alg !== 'ES256') throw new Error('not ES256');
  const point = Buffer.from(k, 'base64url');
  const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') }, format: 'jwk' });
  const ok = verify('sha256', Buffer.from(`${header}.${payload}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  if (!ok) throw new Error('the VAPID signature does not verify');
  return { k, claims: JSON.parse(Buffer.from(payload, 'base64url').toString()) };
}

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** what the stand-in answered (null: it let the request hang) */
  status: number | null;
}

/** What the push service answers on a path, in turn (the last one thereafter); 'hang' never answers. */
export type Script = (number | 'hang')[];

export interface PushService {
  base: string;
  received: Received[];
  /** the answers for one path (default: 201 always) */
  script(path: string, answers: Script): void;
  on(path: string): Received[];
  stop(): Promise<void>;
}

export async function startPushService(): Promise<PushService> {
  const received: Received[] = [];
  const scripts = new Map<string, Script>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      const script = scripts.get(path) ?? [201];
      const answer = script.length > 1 ? script.shift()! : script[0]!;
      received.push({ path, headers: request.headers, body: Buffer.concat(chunks), status: answer === 'hang' ? null : answer });
      if (answer !== 'hang') response.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    received,
    script: (path, answers) => scripts.set(path, [...answers]),
    on: (path) => received.filter((r) => r.path === path),
    stop: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
