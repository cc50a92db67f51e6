// Read replicas (DATABASE_READ_URL): a background check of each streaming replica's state and lag,
// and the client a read-only query is given: the healthy replicas in turn, the primary when none is.
import type { Logger } from '../log.ts';
import { createSql, withTimeout, type Sql } from './client.ts';

export type ReplicaStatus = 'unchecked' | 'healthy' | 'lagging' | 'down' | 'not_a_replica';

export interface ReplicaState {
  /** host:port/database: never the user or the password */
  name: string;
  status: ReplicaStatus;
  /** at most this far behind the primary (ms); null when unknown */
  lagMs: number | null;
  checkedAt: Date | null;
  error?: string;
}

/** What one check reads on a replica. */
export interface ReplicaSample {
  inRecovery: boolean;
  /** pg_last_wal_replay_lsn() */
  replayedLsn: string | null;
  /** now() - pg_last_xact_replay_timestamp(), in ms */
  replayAgeMs: number | null;
}

/** The primary's WAL position (pg_current_wal_lsn()) read at a moment (ms since the epoch). */
export interface PrimaryMark {
  at: number;
  lsn: string;
}

/** An LSN such as 16/B374D848 as a number that orders like the WAL. */
export const lsnValue = (lsn: string): bigint => {
  const [high = '0', low = '0'] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
};

/**
 * An upper bound of how far behind the primary a replica is, from two facts: it has replayed every
 * transaction committed before its last replayed one, and everything the primary had written at the
 * latest mark whose LSN it has reached. The first alone would call a replica of an idle primary
 * stale (nothing commits, the replay timestamp ages); the marks say it is current.
 */
export function replicaLagMs(sample: ReplicaSample, marks: PrimaryMark[], now: number): number | null {
  const bounds: number[] = [];
  if (sample.replayAgeMs !== null) bounds.push(Math.max(0, sample.replayAgeMs));
  if (sample.replayedLsn !== null) {
    const replayed = lsnValue(sample.replayedLsn);
    const reached = marks.filter((mark) => lsnValue(mark.lsn) <= replayed).map((mark) => mark.at);
    if (reached.length > 0) bounds.push(Math.max(0, now - Math.max(...reached)));
  }
  return bounds.length > 0 ? Math.min(...bounds) : null;
}

/** A replica serves reads while it is in recovery (not a promoted or stray primary) and its lag is known and within the bound. */
export function judgeReplica(sample: ReplicaSample, lagMs: number | null, maxLagMs: number): ReplicaStatus {
  if (!sample.inRecovery) return 'not_a_replica';
  return lagMs !== null && lagMs <= maxLagMs ? 'healthy' : 'lagging';
}

/** Round robin over the healthy replicas: the index of the one for this turn, or null (the primary serves). */
export function pickReplica(states: Pick<ReplicaState, 'status'>[], turn: number): number | null {
  const healthy = states.flatMap((state, index) => (state.status === 'healthy' ? [index] : []));
  return healthy.length === 0 ? null : healthy[turn % healthy.length]!;
}

export const replicaName = (url: string) => {
  const parsed = new URL(url);
  return `${parsed.host}${parsed.pathname}`;
};

export interface ReadReplicaOptions {
  /** behind a transaction pooler: no named prepared statements (as DATABASE_POOLED for the primary) */
  pooled: boolean;
  poolSize: number;
  maxLagMs: number;
  checkMs: number;
  logger: Logger;
}

interface Replica {
  sql: Sql;
  state: ReplicaState;
}

export class ReadReplicas {
  private readonly replicas: Replica[];
  private marks: PrimaryMark[] = [];
  private turn = 0;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;

  private readonly primary: Sql;
  private readonly options: ReadReplicaOptions;

  constructor(primary: Sql, urls: string[], options: ReadReplicaOptions) {
    this.primary = primary;
    this.options = options;
    this.replicas = urls.map((url) => ({
      sql: createSql({ url, pooled: options.pooled, embedded: false }, { max: options.poolSize }),
      state: { name: replicaName(url), status: 'unchecked', lagMs: null, checkedAt: null },
    }));
  }

  /** Checks now, then every checkMs; until a replica's first check passes, the primary serves its share. */
  start() {
    void this.check();
    this.timer = setInterval(() => void this.check(), this.options.checkMs);
    this.timer.unref();
  }

  /** The client for a read-only query: a healthy replica in turn, or null for the primary. */
  client(): Sql | null {
    const index = pickReplica(this.states(), this.turn++);
    return index === null ? null : this.replicas[index]!.sql;
  }

  states(): ReplicaState[] {
    return this.replicas.map((replica) => ({ ...replica.state }));
  }

  /** A query found the replica gone between two checks: skip it until a check finds it back. */
  markDown(sql: Sql, error: unknown) {
    const replica = this.replicas.find((candidate) => candidate.sql === sql);
    if (replica) this.update(replica, { status: 'down', lagMs: null, checkedAt: new Date(), error: describe(error) });
  }

  /** One round of checks (a round still running is awaited rather than doubled). */
  check(): Promise<void> {
    this.checking ??= this.round().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  private async round() {
    const now = Date.now();
    try {
      // Read before the replicas: whatever a replica has replayed by then, it had at `now` at the latest.
      const [row] = await withTimeout(this.primary<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`, this.timeoutMs);
      this.marks.push({ at: now, lsn: row!.lsn });
    } catch {
      // The primary unreachable: the replay timestamps alone bound the lag.
    }
    // Older marks cannot bring a lag under the bound; the newest one is kept whatever its age.
    const oldest = now - this.options.maxLagMs - 2 * this.options.checkMs;
    this.marks = this.marks.filter((mark, index) => mark.at >= oldest || index === this.marks.length - 1);
    await Promise.all(this.replicas.map((replica) => this.checkReplica(replica)));
  }

  private get timeoutMs() {
    return Math.min(5000, Math.max(1000, this.options.checkMs));
  }

  private async checkReplica(replica: Replica) {
    try {
      const [row] = await withTimeout(
        replica.sql<{ in_recovery: boolean; replayed: string | null; replay_age_ms: number | null }[]>`
          select pg_is_in_recovery() as in_recovery, pg_last_wal_replay_lsn()::text as replayed,
                 (extract(epoch from now() - pg_last_xact_replay_timestamp()) * 1000)::float8 as replay_age_ms`,
        this.timeoutMs,
      );
      const sample: ReplicaSample = { inRecovery: row!.in_recovery, replayedLsn: row!.replayed, replayAgeMs: row!.replay_age_ms };
      const lagMs = replicaLagMs(sample, this.marks, Date.now());
      this.update(replica, { status: judgeReplica(sample, lagMs, this.options.maxLagMs), lagMs, checkedAt: new Date() });
    } catch (error) {
      this.update(replica, { status: 'down', lagMs: null, checkedAt: new Date(), error: describe(error) });
    }
  }

  private update(replica: Replica, next: Omit<ReplicaState, 'name'>) {
    const previous = replica.state.status;
    replica.state = { name: replica.state.name, ...next };
    if (next.status === previous) return;
    const lag = next.lagMs === null ? '' : ` (${(next.lagMs / 1000).toFixed(1)} s behind)`;
    const line = { replica: replica.state.name, status: next.status, lagMs: next.lagMs, error: next.error };
    if (next.status === 'healthy') this.options.logger.info(line, `read replica ${replica.state.name} serves reads${lag}`);
    else this.options.logger.warn(line, `read replica ${replica.state.name} skipped: ${next.status}${lag}${next.error ? `: ${next.error}` : ''}`);
  }

  async close() {
    if (this.timer) clearInterval(this.timer);
    await this.checking;
    await Promise.all(this.replicas.map((replica) => replica.sql.end({ timeout: 5 })));
  }
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));
