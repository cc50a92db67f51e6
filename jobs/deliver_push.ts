// deliver_push {message_id}: one request of a browser push to its push service. The attempt is
// opened (committed) before the request and closed after it, each in SQL (sql/functions/950_push.sql),
// which also queues the retry, or removes a subscription the push service no longer knows (404/410);
// no connection is held during the request. A worker killed mid-request leaves its job locked until
// its heartbeat goes stale (src/worker.ts); then the open attempt is closed as interrupted and the
// push is sent again.
import type { Task } from 'graphile-worker';
import type { Config } from '../src/config.ts';
import { clientQuery } from '../src/db/query.ts';
import { sendPush, type OutboxPush } from '../src/push/send.ts';
import { vapidOnce, type VapidConfig } from '../src/push/vapid.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export type DeliverPushConfig = VapidConfig & Pick<Config, 'PUSH_TIMEOUT_MS' | 'PUSH_ALLOW_LOOPBACK' | 'PUSH_RETRY_BASE_MS'>;

export function deliverPush(config: DeliverPushConfig): Task {
  let vapid: ReturnType<typeof vapidOnce> | null = null;
  return async (payload, helpers) => {
    const id = String((payload as { message_id?: unknown }).message_id);
    if (!UUID.test(id)) throw new Error('deliver_push needs {message_id}');
    vapid ??= vapidOnce(clientQuery(helpers), config);
    const keys = await vapid();
    const { rows } = await helpers.query<OutboxPush & { attempt_id: string }>('select * from app.begin_push_attempt($1)', [id]);
    const row = rows[0];
    if (!row) return;
    const outcome = await sendPush(row, keys, config);
    await helpers.query('select app.finish_push_attempt($1, $2, $3, $4, $5)', [
      row.attempt_id, outcome.responseStatus, outcome.error, outcome.durationMs, config.PUSH_RETRY_BASE_MS,
    ]);
  };
}
