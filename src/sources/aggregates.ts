// Brings the coin aggregates (30m -> 1h -> 1d) up to date over windows of bars written into the
// past, then lets retention resume. refresh_continuous_aggregate cannot run inside a transaction
// block, so every call here is a statement of its own on one connection, never inside a BEGIN.
import type { Query } from '../db/query.ts';

export interface RefreshResult {
  calls: number;
  windowStart: string | null;
  windowEnd: string | null;
}

/** Refreshes the three aggregates over [start, end) in order, one call per planned piece. */
export async function refreshCoinAggregates(query: Query, start: string, end: string): Promise<number> {
  const plan = await query(
    `select aggregate, window_start::text as window_start, window_end::text as window_end
     from app.coin_aggregate_refresh_plan($1::timestamptz, $2::timestamptz) order by step`,
    [start, end],
  );
  // Freshly written chunks have no statistics (the embedded database runs no autovacuum), and
  // with none the planner's chunk-wise partial aggregation is several times slower here.
  await query('set timescaledb.enable_chunkwise_aggregation = off');
  try {
    for (const step of plan) {
      await query('call refresh_continuous_aggregate($1::regclass, $2::timestamptz, $3::timestamptz)', [
        step.aggregate,
        step.window_start,
        step.window_end,
      ]);
    }
  } finally {
    await query('reset timescaledb.enable_chunkwise_aggregation');
  }
  return plan.length;
}

/** Refreshes every pending backfill window (app.coin_bar_backfills) and closes them; retention resumes when none is left. */
export async function completeCoinBarBackfills(query: Query): Promise<RefreshResult> {
  const [pending] = await query(
    `select ids, window_start::text as window_start, window_end::text as window_end from app.pending_coin_bar_backfills()`,
  );
  if (!pending) return { calls: 0, windowStart: null, windowEnd: null };
  const calls = await refreshCoinAggregates(query, pending.window_start as string, pending.window_end as string);
  await query('select app.end_coin_bar_backfills($1::bigint[])', [pending.ids]);
  return { calls, windowStart: pending.window_start as string, windowEnd: pending.window_end as string };
}
