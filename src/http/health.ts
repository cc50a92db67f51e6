// GET /healthz (the process answers) and GET /readyz (it can serve: database reachable,
// migrations current, a worker alive) for orchestrators and load balancers. No API key.
import type { Context } from 'koa';
import { workerStaleAfterMs } from '../config.ts';
import { withTimeout } from '../db/client.ts';
import { migrationFiles } from '../db/migrate.ts';
import { databaseAnswers } from '../db/probe.ts';
import type { RunningJob } from '../job-runs.ts';
import { ApiError } from './errors.ts';
import type { Deps } from './admission.ts';

/** A readiness probe must answer promptly even when the database does not. */
export const CHECK_TIMEOUT_MS = 2000;
/** How long the last full answer stands in for the figures of a database too busy to give them. */
const LAST_KNOWN_FOR_MS = 10 * 60_000;

/** What a health check's query met: an answer, an error from the database itself, a busy database or none. */
export type DatabaseAnswer<T> =
  | { state: 'answered'; value: T }
  /** it answered with an error: functions older than this code */
  | { state: 'not_migrated' }
  /** no answer in time, but it answers a new connection: a long statement ahead (the first-start backfill) */
  | { state: 'busy'; error: string; doing: string[] }
  | { state: 'unreachable'; error: string };

const describeJob = ({ task, seconds }: RunningJob) => `${task} (running ${seconds} s)`;

/**
 * Runs a health check's query within CHECK_TIMEOUT_MS; without an answer, asks whether the
 * database answers a new connection at all, and what this process's worker is running meanwhile.
 */
export async function askDatabase<T>({ config, activity }: Pick<Deps, 'config' | 'activity'>, work: Promise<T>): Promise<DatabaseAnswer<T>> {
  try {
    return { state: 'answered', value: await withTimeout(work, CHECK_TIMEOUT_MS) };
  } catch (error) {
    if (typeof (error as { severity?: unknown }).severity === 'string') return { state: 'not_migrated' };
    const timedOut = error instanceof Error && /no answer within/.test(error.message);
    if (timedOut && (await databaseAnswers(config.database.url, CHECK_TIMEOUT_MS / 2))) {
      return { state: 'busy', error: (error as Error).message, doing: (activity?.() ?? []).map(describeJob) };
    }
    return { state: 'unreachable', error: timedOut ? (error as Error).message : 'unreachable' };
  }
}

/** The last full answer of a check, per database, to stand in (with its time) while the database is busy. */
export function lastKnown<T>() {
  const kept = new WeakMap<object, { value: T; at: Date }>();
  return {
    keep: (key: object, value: T) => void kept.set(key, { value, at: new Date() }),
    get: (key: object) => {
      const last = kept.get(key);
      return last && Date.now() - last.at.getTime() <= LAST_KNOWN_FOR_MS ? last : undefined;
    },
  };
}

export interface Readiness {
  ready: boolean;
  checks: {
    database: { ok: boolean; error?: string; busy?: boolean; doing?: string[]; figures_as_of?: Date };
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

const lastReadiness = lastKnown<Readiness>();

/**
 * The worker check is required when READY_REQUIRES_WORKER says so, by default when this process
 * runs the worker (WORKER=inline). Not required, it still reports fresh, stale or none.
 */
export async function readiness(deps: Deps): Promise<Readiness> {
  const { sql, config, replicas } = deps;
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
  const answer = await askDatabase(deps, sql<Row[]>`
    select * from app.readiness(${migrationFiles()}::text[], make_interval(secs => ${workerStaleAfterMs(config) / 1000}))`);
  if (answer.state === 'not_migrated') {
    checks.database.ok = true;
    checks.migrations.error = checks.worker.error = 'the database has not been migrated for this version';
    return { ready: false, checks };
  }
  if (answer.state === 'unreachable') {
    checks.database.error = answer.error;
    checks.migrations.error = checks.worker.error = `not checked: the database ${answer.error === 'unreachable' ? 'is unreachable' : 'did not answer in time'}`;
    return { ready: false, checks };
  }
  if (answer.state === 'busy') {
    // it answers, behind a long statement: the last full answer stands for the rest, with its time
    const database = { ok: true, busy: true, error: `${answer.error}: busy`, doing: answer.doing };
    const last = lastReadiness.get(sql);
    if (!last) {
      checks.migrations.error = checks.worker.error = 'not checked: the database is busy';
      return { ready: false, checks: { ...checks, database } };
    }
    return { ready: last.value.ready, checks: { ...last.value.checks, ...checks.replicas && { replicas: checks.replicas }, database: { ...database, figures_as_of: last.at } } };
  }
  const [row] = answer.value;
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
  const result = { ready: checks.database.ok && checks.migrations.ok && checks.worker.ok, checks };
  lastReadiness.keep(sql, result);
  return result;
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
