// SMTP delivery through nodemailer: the transport from SMTP_URL, one message per outbox row
// (app.email_messages) with a Message-ID made from its event id (the same on every attempt), and
// the SMTP result sorted into the outbox's outcomes: delivered (accepted), bounced (a permanent
// 5xx rejection, never retried) or deferred (connection failure, time-out, 4xx: retried).
import nodemailer from 'nodemailer';
import type { Sender } from '../outbox.ts';
import { emailConfigured, type Config } from '../config.ts';
import type { AlarmTriggeredData } from '../alarm-wording.ts';
import { alarmTriggeredEmail, consoleLinkEmail, deprecationNoticeEmail, type ConsoleLinkData, type DeprecationNoticeData, type MailLinks, type RenderedEmail } from './templates.ts';

export type MailConfig = Pick<Config, 'SMTP_URL' | 'MAIL_FROM' | 'SMTP_TIMEOUT_MS' | 'EMAIL_RETRY_BASE_MS' | 'PUBLIC_URL' | 'HOST' | 'PORT'>;

/** The links in e-mails: PUBLIC_URL, else where this service listens. */
export const mailLinks = (config: Pick<Config, 'PUBLIC_URL' | 'HOST' | 'PORT'>): MailLinks => ({
  base: config.PUBLIC_URL ?? `http://${config.HOST}:${config.PORT}`,
});

/** `<event-id@host>`: the host of PUBLIC_URL, else `mdapi`; mail stores de-duplicate on it. */
export const messageId = (eventId: string, config: Pick<Config, 'PUBLIC_URL'>) =>
  `<${eventId}@${config.PUBLIC_URL ? new URL(config.PUBLIC_URL).hostname : 'mdapi'}>`;

/** An e-mail of the outbox, as app.begin_outbox_attempt returns it (app.email_outbox_message). */
export interface OutboxEmail {
  id: string;
  recipient: string;
  kind: 'alarm.triggered' | 'deprecation.notice' | 'console.link';
  data: unknown;
  /** the Date header: the same on every attempt */
  created_at: Date | string;
}

export interface ComposedEmail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
  date: Date;
  headers: Record<string, string>;
}

const RENDER: Record<OutboxEmail['kind'], (data: unknown, links: MailLinks) => RenderedEmail> = {
  'alarm.triggered': (data, links) => alarmTriggeredEmail(data as AlarmTriggeredData, links),
  'deprecation.notice': (data, links) => deprecationNoticeEmail(data as DeprecationNoticeData, links),
  'console.link': (data, links) => consoleLinkEmail(data as ConsoleLinkData, links),
};

export function composeEmail(email: OutboxEmail, config: MailConfig): ComposedEmail {
  const links = mailLinks(config);
  const rendered = RENDER[email.kind](email.data, links);
  return {
    from: config.MAIL_FROM ?? '',
    to: email.recipient,
    ...rendered,
    messageId: messageId(email.id, config),
    // the date it was raised, so every attempt carries the same headers
    date: new Date(email.created_at),
    // RFC 3834: no vacation auto-replies to a notification
    headers: { 'Auto-Submitted': 'auto-generated', 'X-Service-Event': email.kind, 'X-Service-Event-Id': email.id },
  };
}

export interface SendOutcome {
  outcome: 'delivered' | 'deferred' | 'bounced';
  smtpCode: number | null;
  /** the server's reply or the connection error: no message content, no address */
  response: string;
  durationMs: number;
}

interface SmtpError {
  code?: string;
  responseCode?: number;
  response?: string;
  message?: string;
}

/** A 5xx reply is permanent (RFC 5321 4.2.1) except 503, a command out of sequence: ours to retry. */
export function classify(error: SmtpError): Pick<SendOutcome, 'outcome' | 'smtpCode' | 'response'> {
  const code = typeof error.responseCode === 'number' ? error.responseCode : null;
  const permanent = code !== null && code >= 500 && code < 600 && code !== 503;
  return { outcome: permanent ? 'bounced' : 'deferred', smtpCode: code, response: error.response ?? `${error.code ?? 'error'}: ${error.message ?? 'unknown'}` };
}

export interface Mailer {
  send(email: ComposedEmail): Promise<SendOutcome>;
  /** whether the SMTP server answers and accepts us now (a connection and greeting, nothing sent) */
  reachable(): Promise<boolean>;
  close(): void;
}

/** A mailer over SMTP_URL; without one, every send is deferred (and so retried, then failed). */
export function createMailer(config: MailConfig): Mailer {
  if (!emailConfigured(config)) {
    return {
      send: async () => ({ outcome: 'deferred', smtpCode: null, response: 'e-mail is not configured on this worker (SMTP_URL unset)', durationMs: 0 }),
      reachable: async () => false,
      close: () => {},
    };
  }
  const transport = nodemailer.createTransport({
    url: config.SMTP_URL,
    connectionTimeout: config.SMTP_TIMEOUT_MS,
    greetingTimeout: config.SMTP_TIMEOUT_MS,
    socketTimeout: config.SMTP_TIMEOUT_MS,
  });
  return {
    async send(email) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      try {
        const info = await transport.sendMail(email);
        // one recipient: accepted, or rejected without an error thrown (never with a single one, but be sure)
        if (info.rejected.length > 0) {
          return { ...classify({ responseCode: 550, response: info.response }), durationMs: elapsed() };
        }
        return { outcome: 'delivered', smtpCode: Number(/^\d{3}/.exec(info.response)?.[0] ?? 250), response: info.response, durationMs: elapsed() };
      } catch (error) {
        return { ...classify(error as SmtpError), durationMs: elapsed() };
      }
    },
    reachable: () => transport.verify().then(() => true, () => false),
    close: () => transport.close(),
  };
}

/** The e-mail channel's sender: one SMTP send, sorted into delivered, bounced or deferred (retried). */
export function emailSender(config: MailConfig): Sender<OutboxEmail> {
  const mailer = createMailer(config);
  return async (email) => {
    const sent = await mailer.send(composeEmail(email, config));
    return { outcome: sent.outcome, code: sent.smtpCode, detail: sent.response, durationMs: sent.durationMs };
  };
}
