// GET /healthz (the process answers) and GET /readyz (it can serve: database reachable,
// migrations current, a worker alive) for orchestrators and load balancers. No API key.
import type { Context } from 'koa';
import { workerStaleAfterMs } from '../config.ts';
import { withTimeout } from '../db/client.ts';
import { migrationFiles } from '../db/migrate.ts';
import { ApiError } from './errors.ts';
import type { Deps } from './admission.ts';

/** A readiness probe must answer promptly even when the database does not. */
export const CHECK_TIMEOUT_MS = 2000;

export interface Readiness {
  ready: boolean;
  checks: {
    database: { ok: boolean; error?: string };
    migrations: { ok: boolean; pending?: string[]; unknown?: string[]; error?: string };
    worker: { ok: boolean; required: boolean; status?: 'fresh' | 'stale' | 'none'; fresh_workers?: number; newest_beat_age_seconds?: number | null; error?: string };
    /** informational: who runs TimescaleDB's policy jobs (null before the worker's first decision) */
    timescaledb_jobs?: { ok: true; runner: string | null; reason: string | null; decided_at: Date | null };
    /** informational: each data source that has run, with its status and lag (market.source_health) */
    sources?: { ok: true; sources: unknown[] };
    /** informational, with DATABASE_READ_URL: reads fall back to the primary when no replica is healthy */
    replicas?: { ok: true; healthy: number; replicas: { name: string; status: string; lag_ms: number | null; checked_at: Date | null; error?: string }[] };
  };
}

const reason = (error: unknown) => (error instanceof Error && /no answer within/.test(error.message) ? error.message : 'unreachable');

/**
 * The worker check is required when READY_REQUIRES_WORKER says so, by default when this process
 * runs the worker (WORKER=inline). Not required, it still reports fresh, stale or none.
 */
export async function readiness({ sql, config, replicas }: Deps): Promise<Readiness> {
  const required = config.READY_REQUIRES_WORKER ?? config.WORKER === 'inline';
  const checks: Readiness['checks'] = {
    database: { ok: false },
    migrations: { ok: false },
    worker: { ok: !required, required },
  };
  if (replicas) {
    const states = replicas.states();
    checks.replicas = {
      ok: true,
      healthy: states.filter((state) => state.status === 'healthy').length,
      replicas: states.map(({ name, status, lagMs, checkedAt, error }) => ({ name, status, lag_ms: lagMs, checked_at: checkedAt, error })),
    };
  }
  type Row = {
    pending: string[]; unknown: string[]; fresh_workers: number; workers: number; newest_beat_age_seconds: number | null;
    timescaledb_job_runner: string | null; timescaledb_job_runner_reason: string | null; timescaledb_job_runner_decided_at: Date | null;
    sources: unknown[];
  };
  let row: Row | undefined;
  try {
    [row] = await withTimeout(sql<Row[]>`
      select * from app.readiness(${migrationFiles()}::text[], make_interval(secs => ${workerStaleAfterMs(config) / 1000}))`, CHECK_TIMEOUT_MS);
  } catch (error) {
    // A database that answers with an error (functions older than this code) is reachable.
    if (typeof (error as { severity?: unknown }).severity === 'string') {
      checks.database.ok = true;
      checks.migrations.error = checks.worker.error = 'the database has not been migrated for this version';
    } else {
      checks.database.error = reason(error);
      // unreachable, or busy past the bound (the embedded database during a long backfill)
      checks.migrations.error = checks.worker.error = `not checked: the database ${checks.database.error === 'unreachable' ? 'is unreachable' : 'did not answer in time'}`;
    }
    return { ready: false, checks };
  }
  checks.database.ok = true;
  // Applied files this code does not know come from newer code (a rolling upgrade): reported, not fatal.
  checks.migrations = { ok: row!.pending.length === 0, pending: row!.pending, unknown: row!.unknown };
  const status = row!.fresh_workers > 0 ? 'fresh' : row!.workers > 0 ? 'stale' : 'none';
  checks.worker = {
    ok: status === 'fresh' || !required, required, status, fresh_workers: row!.fresh_workers, newest_beat_age_seconds: row!.newest_beat_age_seconds,
  };
  checks.timescaledb_jobs = {
    ok: true, runner: row!.timescaledb_job_runner, reason: row!.timescaledb_job_runner_reason, decided_at: row!.timescaledb_job_runner_decided_at,
  };
  checks.sources = { ok: true, sources: row!.sources };
  return { ready: checks.database.ok && checks.migrations.ok && checks.worker.ok, checks };
}

export async function healthz(ctx: Context) {
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { status: 'ok' };
}

export function readyz(deps: Deps) {
  return async (ctx: Context) => {
    ctx.set('Cache-Control', 'no-store');
    const { ready, checks } = await readiness(deps);
    if (!ready) throw new ApiError(503, 'not_ready', 'The service is not ready: see details.checks.', { checks });
    ctx.body = { status: 'ready', checks };
  };
}
