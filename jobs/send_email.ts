// send_email {message_id}: one SMTP attempt of an outbox e-mail. The attempt is opened (committed)
// before the send and closed after it, each in SQL (sql/functions/630_email_outbox.sql), which also
// queues the retry of a deferred one; no connection is held during the send. A worker killed
// mid-send leaves its job locked until its heartbeat goes stale (src/worker.ts); then the open
// attempt is closed as interrupted and the e-mail is sent again with the same Message-ID.
import type { Task } from 'graphile-worker';
import { composeEmail, createMailer, type MailConfig, type OutboxEmail } from '../src/mail/smtp.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function sendEmail(config: MailConfig): Task {
  const mailer = createMailer(config);
  return async (payload, helpers) => {
    const id = String((payload as { message_id?: unknown }).message_id);
    if (!UUID.test(id)) throw new Error('send_email needs {message_id}');
    const { rows } = await helpers.query<Omit<OutboxEmail, 'id'> & { attempt_id: string }>('select * from app.begin_email_attempt($1)', [id]);
    const row = rows[0];
    if (!row) return;
    const result = await mailer.send(composeEmail({ ...row, id }, config));
    await helpers.query('select app.finish_email_attempt($1, $2, $3, $4, $5, $6)', [
      row.attempt_id, result.outcome, result.smtpCode, result.response, result.durationMs, config.EMAIL_RETRY_BASE_MS,
    ]);
  };
}
