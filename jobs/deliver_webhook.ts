// deliver_webhook {delivery_id}: one HTTP attempt of a webhook delivery. The attempt is opened
// (committed) before the POST and closed after it, each in SQL (sql/functions/610_webhook_delivery.sql),
// which also queues the retry or settles the delivery; no connection is held during the POST.
// A worker killed mid-POST leaves its job locked until its heartbeat goes stale (src/worker.ts);
// then the job runs again, the open attempt is closed as interrupted and the event is sent again.
import type { Task } from 'graphile-worker';
import type { Config } from '../src/config.ts';
import { postWebhook } from '../src/webhooks/post.ts';

interface AttemptRow {
  attempt_id: string;
  attempt: number;
  url: string;
  secret: string;
  event: string;
  event_id: string;
  body: string;
}

export function deliverWebhook(config: Pick<Config, 'WEBHOOK_TIMEOUT_MS' | 'WEBHOOK_ALLOW_PRIVATE_TARGETS' | 'WEBHOOK_RETRY_BASE_MS'>): Task {
  return async (payload, helpers) => {
    const deliveryId = Number((payload as { delivery_id?: unknown }).delivery_id);
    if (!Number.isSafeInteger(deliveryId)) throw new Error('deliver_webhook needs {delivery_id}');
    const { rows } = await helpers.query<AttemptRow>('select * from app.begin_webhook_attempt($1)', [deliveryId]);
    const row = rows[0];
    if (!row) return;
    const outcome = await postWebhook(
      { url: row.url, secret: row.secret, event: row.event, eventId: row.event_id, attempt: row.attempt, body: row.body },
      { timeoutMs: config.WEBHOOK_TIMEOUT_MS, allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS },
    );
    await helpers.query('select app.finish_webhook_attempt($1, $2, $3, $4, $5, $6)', [
      row.attempt_id, outcome.responseStatus, outcome.durationMs, outcome.error, config.WEBHOOK_RETRY_BASE_MS, outcome.responseExcerpt,
    ]);
  };
}
