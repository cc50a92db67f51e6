// A real SMTP server on 127.0.0.1 for the tests and benches (smtp-server, no TLS, no auth): records every message
// it accepted, parsed enough to assert on. Scripted recipients: `bounce…@` is refused with 550 (a
// permanent rejection), `greylist…@` with 451 the first time (temporary) and accepted after. With
// hold(), the next message's DATA is read but never answered: the sender dies or times out waiting.
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';
import { until } from './wait.ts';

export interface Mail {
  headers: Record<string, string>;
  /** the text/plain part, quoted-printable decoded */
  text: string;
  /** the text/html part, quoted-printable decoded */
  html: string;
  envelope: { from: string; to: string[] };
  raw: string;
}

export interface Mailbox {
  port: number;
  url: string;
  /** messages answered 250 */
  accepted: Mail[];
  /** every DATA received, answered or not (a held one included) */
  seen: Mail[];
  /** the next DATA is never answered */
  hold(): void;
  /** stops listening (SMTP "down"); start() listens again on the same port */
  stop(): Promise<void>;
  start(): Promise<void>;
  waitFor(count: number, timeoutMs?: number): Promise<void>;
}

const decodeQuotedPrintable = (text: string) =>
  Buffer.from(text.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');

/** Headers (unfolded, lower-case names) and the body of one MIME entity. */
function entity(raw: string) {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] ??= line.slice(colon + 1).trim();
  }
  return { headers, body: raw.slice(split + 4) };
}

function parse(raw: string, envelope: Mail['envelope']): Mail {
  const { headers, body } = entity(raw);
  const parts: Record<string, string> = {};
  const boundary = /boundary="?([^";]+)"?/.exec(headers['content-type'] ?? '')?.[1];
  for (const part of boundary ? body.split(`--${boundary}`).slice(1, -1) : [raw]) {
    const child = entity(part.replace(/^\r\n/, ''));
    const type = (child.headers['content-type'] ?? 'text/plain').split(';')[0]!;
    const content = child.body.replace(/\r\n$/, '');
    parts[type] = child.headers['content-transfer-encoding'] === 'quoted-printable' ? decodeQuotedPrintable(content) : content;
  }
  return { headers, text: parts['text/plain'] ?? '', html: parts['text/html'] ?? '', envelope, raw };
}

const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

export async function startMailbox(): Promise<Mailbox> {
  const accepted: Mail[] = [];
  const seen: Mail[] = [];
  const greylisted = new Set<string>();
  let holdNext = false;
  const server = () =>
    new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo(address: SMTPServerAddress, _session, callback) {
        const to = address.address;
        if (to.startsWith('bounce')) return callback(smtpError(550, '5.1.1 No such user here'));
        if (to.startsWith('greylist') && !greylisted.has(to)) {
          greylisted.add(to);
          return callback(smtpError(451, '4.7.1 Greylisted, try again later'));
        }
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const envelope = {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          };
          const mail = parse(Buffer.concat(chunks).toString('utf8'), envelope);
          seen.push(mail);
          if (holdNext) {
            holdNext = false;
            return;
          }
          accepted.push(mail);
          callback(null, 'Queued as test');
        });
      },
    });
  let current = server();
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      current.once('error', reject);
      current.listen(port, '127.0.0.1', () => {
        port = (current.server.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();
  return {
    get port() {
      return port;
    },
    get url() {
      return `smtp://127.0.0.1:${port}`;
    },
    accepted,
    seen,
    hold: () => {
      holdNext = true;
    },
    stop: () => new Promise<void>((resolve) => current.close(() => resolve())),
    start: async () => {
      current = server();
      await listen();
    },
    waitFor: async (count, timeoutMs = 15_000) => {
      await until(() => `${count} messages (have ${seen.length})`, () => seen.length >= count, { timeoutMs, everyMs: 20 });
    },
  };
}
