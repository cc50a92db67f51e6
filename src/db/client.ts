// The one way the service opens its database: postgres.js, with named prepared statements off
// behind a transaction-level pooler (the embedded multiplexer or PgBouncer).
import postgres from 'postgres';
import type { DatabaseSettings } from '../config.ts';

export type Sql = postgres.Sql;

// The service's own connections say who they are: the embedded database exempts them (as the
// superuser only) from the statement time-out it gives outside clients.
export const APPLICATION_NAME = 'market-data-api';
export const WORKER_APPLICATION_NAME = 'market-data-worker';

/** The URL with an application_name, for clients configured by URL (graphile-worker). */
export function withApplicationName(url: string, name: string): string {
  const named = new URL(url);
  named.searchParams.set('application_name', name);
  return named.toString();
}

export function createSql(settings: DatabaseSettings, options: { max?: number } = {}): Sql {
  return postgres(settings.url, {
    prepare: !settings.pooled,
    max: options.max ?? 8,
    idle_timeout: 30,
    connect_timeout: 10,
    onnotice: () => {},
    connection: { application_name: APPLICATION_NAME },
  });
}

/** A query that must answer promptly (health checks): rejects after `ms` with "no answer within …". */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
