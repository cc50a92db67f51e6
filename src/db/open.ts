// The database configuration names: DATABASE_URL as given, or the embedded database, found on its
// port or started (and supervised) by this process. Kept apart from the service so the CLI's
// commands reach it without loading the HTTP app.
import { embeddedUrl, type Config } from '../config.ts';
import { ensureEmbedded, type EmbeddedHandle } from './embedded/launcher.ts';

/** Resolves the database: starts the embedded one when DATABASE_URL is not set. */
export async function openDatabase(config: Config): Promise<{ config: Config; embedded: EmbeddedHandle | null }> {
  if (!config.database.embedded) return { config, embedded: null };
  const embedded = await ensureEmbedded({
    dataDir: config.DATA_DIR,
    port: config.EMBEDDED_DB_PORT,
    idleInTransactionTimeoutMs: config.EMBEDDED_IDLE_TX_TIMEOUT_MS,
    statementTimeoutMs: config.EMBEDDED_STATEMENT_TIMEOUT_MS,
  });
  return { config: { ...config, database: { ...config.database, url: embeddedUrl(embedded.port) } }, embedded };
}
