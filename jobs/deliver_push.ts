// deliver_push {message_id}: one request of a browser push to its push service, through the outbox
// cycle (src/outbox.ts, sql/functions/595_outbox.sql and 640_push_outbox.sql); the sender is
// src/push/send.ts.
import type { Task } from 'graphile-worker';
import type { Config } from '../src/config.ts';
import { outboxTask } from '../src/outbox.ts';
import { pushSender } from '../src/push/send.ts';
import type { VapidConfig } from '../src/push/vapid.ts';

type DeliverPushConfig = VapidConfig & Pick<Config, 'PUSH_TIMEOUT_MS' | 'PUSH_ALLOW_LOOPBACK' | 'PUSH_RETRY_BASE_MS'>;

export function deliverPush(config: DeliverPushConfig): Task {
  return outboxTask('push', config.PUSH_RETRY_BASE_MS, pushSender(config));
}
