// GET /metrics: Prometheus text exposition of this instance's registry, with the scrape-time
// samples of app.metrics_snapshot(). No API key: loopback clients, or anyone with METRICS_TOKEN.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { Metrics, SnapshotRow } from '../metrics.ts';
import { bearerKey } from './admission.ts';
import { ApiError } from './errors.ts';
import { workerStaleAfterMs } from '../config.ts';
import type { Deps } from './admission.ts';

export type MetricsAccess = 'ok' | 'unauthorized' | 'forbidden';

export const isLoopback = (ip: string) => /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/.test(ip);

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * A token, when sent, must be the configured one (a wrong token is refused even from loopback);
 * without one, only loopback clients get in. `ip` is Koa's ctx.ip: X-Forwarded-For counts only with TRUST_PROXY.
 */
export function metricsAccess(ip: string, authorization: string | undefined, token: string | undefined): MetricsAccess {
  const sent = bearerKey(authorization);
  if (token && sent) return timingSafeEqual(digest(sent), digest(token)) ? 'ok' : 'unauthorized';
  if (isLoopback(ip)) return 'ok';
  return token ? 'unauthorized' : 'forbidden';
}

export function metricsHandler({ sql, config, replicas }: Deps, metrics: Metrics) {
  return async (ctx: Context) => {
    ctx.set('Cache-Control', 'no-store');
    const access = metricsAccess(ctx.ip, ctx.get('authorization') || undefined, config.METRICS_TOKEN);
    if (access === 'unauthorized') {
      throw new ApiError(401, 'unauthorized', 'Send the metrics token as "Authorization: Bearer <METRICS_TOKEN>".', {}, { 'WWW-Authenticate': 'Bearer' });
    }
    if (access === 'forbidden') {
      throw new ApiError(403, 'forbidden', 'Metrics are served to loopback clients only; set METRICS_TOKEN to scrape from elsewhere.');
    }
    metrics.applySnapshot(
      await sql<SnapshotRow[]>`select metric, labels, value from app.metrics_snapshot(make_interval(secs => ${workerStaleAfterMs(config) / 1000}))`,
    );
    if (replicas) metrics.applyReplicas(replicas.states());
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  };
}
