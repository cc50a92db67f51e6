// The one way the service opens its database: postgres.js, with named prepared statements off
// behind a transaction-level pooler (the embedded multiplexer or PgBouncer).
import postgres from 'postgres';
import type { DatabaseSettings } from '../config.ts';

export type Sql = postgres.Sql;

export function createSql(settings: DatabaseSettings, options: { max?: number } = {}): Sql {
  return postgres(settings.url, {
    prepare: !settings.pooled,
    max: options.max ?? 8,
    idle_timeout: 30,
    connect_timeout: 10,
    onnotice: () => {},
    connection: { application_name: 'market-data-api' },
  });
}
