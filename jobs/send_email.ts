// send_email {message_id}: one SMTP attempt of an outbox e-mail, through the outbox cycle
// (src/outbox.ts, sql/functions/595_outbox.sql and 630_email_outbox.sql); the sender is
// src/mail/smtp.ts. An e-mail sent again after a worker died mid-send keeps its Message-ID.
import type { Task } from 'graphile-worker';
import { emailSender, type MailConfig } from '../src/mail/smtp.ts';
import { outboxTask } from '../src/outbox.ts';

export function sendEmail(config: MailConfig): Task {
  return outboxTask('email', config.EMAIL_RETRY_BASE_MS, emailSender(config));
}
