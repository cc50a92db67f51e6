// Every minute: a worker that died mid-delivery gives its jobs back long before graphile-worker's
// 4-hour lock expiry. An attempt is stalled once it has been open three time-outs plus a minute.
import type { Task } from 'graphile-worker';
import type { Config } from '../src/config.ts';

export const stalledAfterSeconds = (timeoutMs: number) => Math.ceil((3 * timeoutMs) / 1000) + 60;

export function releaseStalledWebhooks(config: Pick<Config, 'WEBHOOK_TIMEOUT_MS'>): Task {
  return async (_payload, helpers) => {
    const { rows } = await helpers.query<{ released: number }>(
      'select app.release_stalled_webhook_workers(make_interval(secs => $1)) as released',
      [stalledAfterSeconds(config.WEBHOOK_TIMEOUT_MS)],
    );
    if (rows[0]!.released > 0) helpers.logger.warn(`released the jobs of ${rows[0]!.released} worker(s) that died mid-delivery`);
  };
}
