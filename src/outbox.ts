// The outbox cycle of every channel, one job run: claim the next attempt of a message
// (app.begin_outbox_attempt, committed before sending, so the attempt is on record even if the
// worker dies), hand what to send to the channel's sender, record how it ended
// (app.finish_outbox_attempt, which also queues the retry or settles the message). No connection
// is held while sending. A worker killed mid-send leaves its job locked until its heartbeat goes
// stale (src/worker.ts); then the job runs again, the open attempt is closed as interrupted and
// the message is sent again. The rules themselves are in sql/functions/595_outbox.sql.
import { queryOf, type Query } from './db/query.ts';
import type { Task } from 'graphile-worker';

export type OutboxChannel = 'webhook' | 'email' | 'push';

/** How one send ended, as its channel's sender sorted it (app.finish_outbox_attempt records it). */
export interface SendResult {
  /** webhook: succeeded | failed; email: delivered | deferred | bounced; push: delivered | gone | refused | failed */
  outcome: string;
  /** the HTTP status or SMTP reply code; null when none came */
  code: number | null;
  /** the error or the server's reply: never the message itself */
  detail: string | null;
  durationMs: number;
  /** the start of the receiver's answer (webhooks' delivery log) */
  responseExcerpt?: string | null;
}

/** A channel's sender: sends what app.begin_outbox_attempt returned; never throws for a failed send. */
export type Sender<Message> = (message: Message, attempt: number, query: Query) => Promise<SendResult>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Each channel's job: its task identifier and the payload field naming the message. */
const JOBS: Record<OutboxChannel, { task: string; key: string; id: (value: unknown) => string | null }> = {
  webhook: { task: 'deliver_webhook', key: 'delivery_id', id: (value) => (Number.isSafeInteger(Number(value)) ? String(Number(value)) : null) },
  email: { task: 'send_email', key: 'message_id', id: (value) => (UUID.test(String(value)) ? String(value) : null) },
  push: { task: 'deliver_push', key: 'message_id', id: (value) => (UUID.test(String(value)) ? String(value) : null) },
};

/** The graphile-worker task of a channel: one attempt of the message its job names, sent by `send`. */
export function outboxTask<Message>(channel: OutboxChannel, retryBaseMs: number, send: Sender<Message>): Task {
  const job = JOBS[channel];
  return async (payload, helpers) => {
    const id = job.id((payload as Record<string, unknown> | null)?.[job.key]);
    if (id === null) throw new Error(`${job.task} needs {${job.key}}`);
    const query = queryOf(helpers);
    const [claimed] = await query<{ attempt_id: string; attempt: number; message: Message }>('select * from app.begin_outbox_attempt($1, $2)', [channel, id]);
    if (!claimed) return;
    const result = await send(claimed.message, claimed.attempt, query);
    await query('select app.finish_outbox_attempt($1, $2, $3, $4, $5, $6, $7, $8)', [
      channel, claimed.attempt_id, result.outcome, result.code, result.detail, result.durationMs, retryBaseMs, result.responseExcerpt ?? null,
    ]);
  };
}
