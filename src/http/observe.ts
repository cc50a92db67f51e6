// Cross-cutting: one log line and the request metrics for every request that reaches Koa.
import type { Context, Next } from 'koa';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { memoized } from '../memo.ts';

/** The declared path of the matched route (/api/v1/coins/{slug}); a fixed label for anything else keeps cardinality bounded. */
export function routeLabel(ctx: Context): string {
  const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  return typeof matched === 'string' ? label(matched) : 'unmatched';
}
/** a matched Koa path's label, formatted once: there are as many as routes */
const label = memoized((matched: string) => matched.replace(/:(\w+)/g, '{$1}'), { max: 1_000 });

/**
 * Outside the error middleware, so it sees the status the client gets. Logs the declared route,
 * never the path as sent, the query string or any header: those may carry keys and personal data.
 * admission() leaves its outcome and the key id in ctx.state.
 */
export function observeRequests(logger: Logger, metrics: Metrics, logRequests: boolean) {
  return async (ctx: Context, next: Next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const seconds = (performance.now() - started) / 1000;
      const route = routeLabel(ctx);
      const series = metrics.requestSeries(`${ctx.method}\n${route}\n${ctx.status}`);
      series.requests.inc();
      series.duration.observe(seconds);
      const admission = ctx.state.admission as string | undefined;
      if (admission) metrics.countAdmission(admission);
      if (logRequests) {
        logger.info(
          {
            requestId: ctx.state.requestId,
            method: ctx.method,
            route,
            status: ctx.status,
            durationMs: Math.round(seconds * 10_000) / 10,
            keyId: ctx.state.keyId,
            admission,
          },
          'request',
        );
      }
    }
  };
}
