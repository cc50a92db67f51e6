// deliver_webhook {delivery_id}: one HTTP attempt of a webhook delivery, through the outbox cycle
// (src/outbox.ts, sql/functions/595_outbox.sql and 610_webhook_delivery.sql); the sender is
// src/webhooks/post.ts.
import type { Task } from 'graphile-worker';
import type { Config } from '../src/config.ts';
import { outboxTask } from '../src/outbox.ts';
import { webhookSender } from '../src/webhooks/post.ts';

export function deliverWebhook(config: Pick<Config, 'WEBHOOK_TIMEOUT_MS' | 'WEBHOOK_ALLOW_PRIVATE_TARGETS' | 'WEBHOOK_RETRY_BASE_MS'>): Task {
  return outboxTask('webhook', config.WEBHOOK_RETRY_BASE_MS,
    webhookSender({ timeoutMs: config.WEBHOOK_TIMEOUT_MS, allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS }));
}
