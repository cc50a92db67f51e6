// Deprecation notices (docs/versioning.md): for every operation declared deprecated with a sunset
// date (RouteSpec.deprecated), one e-mail to each key holder who called it in the last 90 days,
// recorded and queued by app.queue_deprecation_notices (sql/functions/815_deprecation_notices.sql),
// which never queues the same notice (owner, operation, sunset) twice. The worker sends them.
import type { Sql } from '../db/client.ts';
import { API_PREFIX, type RouteSpec } from '../http/routes.ts';

export interface DeprecationRun {
  endpoint: string;
  sunset: string;
  /** owners queued a notice now */
  queued: string[];
  /** owners notified of this operation and sunset before */
  alreadyNotified: string[];
  /** recent callers without an e-mail address on record (mdapi set-email) */
  noAddress: string[];
}

/** The operations declared deprecated, named as the usage counters name them ("GET /api/v1/coins/{id}"). */
export const deprecatedOperations = (routes: RouteSpec[]) =>
  routes.flatMap((route) =>
    route.deprecated ? [{ endpoint: `${route.method.toUpperCase()} ${API_PREFIX}${route.path}`, ...route.deprecated }] : []);

export async function notifyDeprecations(sql: Sql, routes: RouteSpec[]): Promise<DeprecationRun[]> {
  const runs: DeprecationRun[] = [];
  for (const operation of deprecatedOperations(routes)) {
    const rows = await sql<{ owner: string; status: 'queued' | 'already_notified' | 'no_address' }[]>`
      select * from app.queue_deprecation_notices(${operation.endpoint}, ${operation.sunset}::date, ${operation.changelog})`;
    const owners = (status: string) => rows.filter((row) => row.status === status).map((row) => row.owner);
    runs.push({
      endpoint: operation.endpoint, sunset: operation.sunset,
      queued: owners('queued'), alreadyNotified: owners('already_notified'), noAddress: owners('no_address'),
    });
  }
  return runs;
}
