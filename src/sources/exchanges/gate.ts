// The one gate every request of a process to a venue passes (issue 43): the minute job, the
// backfill, liquidations, and the stream holder's market loads and resynchronisations. A venue
// that failed is backed off in market.venue_status (30 s doubling, or the venue's Retry-After when
// longer), shared by every process; within a process each venue is one ccxt instance, so its rate
// limiter and markets are shared too, and the back-off holds every request of the instance (its
// fetch refuses) from the moment it is recorded or read. A run records its outcome
// (runOnVenue); a read beside the runs (throughGate) records its failures but never clears the
// failures the runs recorded. The live stream's own connection back-off is recordVenueStream's.
import type { Exchange } from 'ccxt';
import type { Query } from '../../db/query.ts';
import { BadVenueAnswer, VenueBackingOff } from './answers.ts';

/** The gate's time: real, or faster in tests (the back-off schedule then runs in seconds). */
export interface VenueClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const REAL_CLOCK: VenueClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)).unref()),
};

/** What the gate keeps per venue instance. */
export interface GatedVenue {
  id: string;
  exchange: Exchange;
  /** requests made so far (counted by guardAnswers) */
  requests: number;
  /** no request of this process before this time (the gate's clock, ms): market.venue_status's back-off as last read or recorded */
  holdUntil: number;
  clock: VenueClock;
}

/** ccxt error classes that mean "slow down": the venue's Retry-After is honoured */
const THROTTLED = new Set(['RateLimitExceeded', 'DDoSProtection']);
const isThrottled = (error: unknown) => THROTTLED.has((error as Error)?.constructor?.name);

function retryAfterSeconds(exchange: Exchange): number | null {
  const headers = (exchange as unknown as { last_response_headers?: Record<string, string> }).last_response_headers;
  const value = headers?.['retry-after'] ?? headers?.['Retry-After'];
  const seconds = value === undefined ? NaN : Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(Math.ceil(seconds), 3600) : null;
}

/** Wraps the instance's fetch (every HTTP request of it, after ccxt's rate limiter): refused while the venue is held. */
export function gateRequests(venue: GatedVenue): void {
  const fetch = venue.exchange.fetch.bind(venue.exchange);
  venue.exchange.fetch = async (...args: Parameters<Exchange['fetch']>) => {
    if (venue.clock.now() < venue.holdUntil) throw new VenueBackingOff(venue.id, venue.holdUntil);
    return fetch(...args);
  };
}

/** The venues no request may reach now (market.venue_backoff), each held in its instance too (the database is the truth: a cleared back-off frees it). */
export async function venuesBackingOff(query: Query, venues: GatedVenue[], clock: VenueClock): Promise<Set<string>> {
  const now = clock.now();
  const rows = await query('select exchange, (extract(epoch from backoff_until) * 1000)::float8 as until from market.venue_backoff($1::text[], $2::timestamptz)', [
    venues.map((venue) => venue.id),
    new Date(now),
  ]);
  const until = new Map(rows.map((row) => [row.exchange as string, Number(row.until)]));
  const held = new Set<string>();
  for (const venue of venues) {
    venue.holdUntil = until.get(venue.id) ?? 0;
    if (now < venue.holdUntil) held.add(venue.id);
  }
  return held;
}

function describe(error: unknown): string {
  const name = error instanceof BadVenueAnswer ? error.name : ((error as Error)?.constructor?.name ?? 'Error');
  return `${name}: ${(error as Error)?.message ?? String(error)}`.slice(0, 500);
}

/** Records a failed request or run of a venue (its back-off, honouring Retry-After when throttled); returns the error as recorded. */
export async function recordVenueFailure(query: Query, venue: GatedVenue, requests: number, error: unknown): Promise<string> {
  const message = describe(error);
  const retryAfter = isThrottled(error) ? retryAfterSeconds(venue.exchange) : null;
  const [row] = await query('select (extract(epoch from market.record_venue_run($1, $2, $3, $4, $5::timestamptz)) * 1000)::float8 as until', [
    venue.id,
    requests,
    message,
    retryAfter,
    new Date(venue.clock.now()),
  ]);
  if (row?.until !== null && row?.until !== undefined) venue.holdUntil = Number(row.until);
  return message;
}

/**
 * One run of work on a venue, accounted the same way everywhere (live minute, backfill): the
 * requests it made, then success or the failure recorded with its back-off (market.record_venue_run).
 * A run the gate stopped (the venue held meanwhile) is skipped, not a failure.
 */
export async function runOnVenue<Run extends { state: string; requests: number; error?: string }>(
  query: Query,
  venue: GatedVenue,
  run: Run,
  work: () => Promise<void>,
): Promise<Run> {
  const before = venue.requests;
  try {
    await work();
    run.requests = venue.requests - before;
    await query('select market.record_venue_run($1, $2, null, null, $3::timestamptz)', [venue.id, run.requests, new Date(venue.clock.now())]);
  } catch (error) {
    run.requests = venue.requests - before;
    if (error instanceof VenueBackingOff) {
      (run as { state: string }).state = 'skipped';
      await query('select market.record_venue_requests($1, $2)', [venue.id, run.requests]);
    } else {
      run.state = 'down';
      run.error = await recordVenueFailure(query, venue, run.requests, error);
    }
  }
  return run;
}

/**
 * A read beside the runs (the stream holder's market load and resynchronisation, liquidations):
 * refused while the venue backs off; its failures are recorded as the venue's (all of them, or
 * only throttling: `record`), its success only counts its requests, so it never hides a fault the
 * minute job recorded.
 */
export async function throughGate<T>(query: Query, venue: GatedVenue, record: 'failures' | 'throttling', work: () => Promise<T>): Promise<T> {
  if ((await venuesBackingOff(query, [venue], venue.clock)).has(venue.id)) throw new VenueBackingOff(venue.id, venue.holdUntil);
  const before = venue.requests;
  try {
    const result = await work();
    await query('select market.record_venue_requests($1, $2)', [venue.id, venue.requests - before]);
    return result;
  } catch (error) {
    if (!(error instanceof VenueBackingOff) && (record === 'failures' || isThrottled(error))) {
      await recordVenueFailure(query, venue, venue.requests - before, error);
    } else {
      await query('select market.record_venue_requests($1, $2)', [venue.id, venue.requests - before]);
    }
    throw error;
  }
}

/**
 * Records one live stream connection of a venue: subscribed and resynchronised (`error` null), or
 * failed or ended; returns how long to wait before the next connection (market.record_venue_stream:
 * 2 s doubling up to 5 minutes, jittered), 0 after a success, null when nothing could be recorded:
 * the venue is not in the database (yet: a worker's first market job adds it).
 */
export async function recordVenueStream(query: Query, venue: GatedVenue, error: unknown): Promise<number | null> {
  const now = venue.clock.now();
  const [row] = await query('select (extract(epoch from market.record_venue_stream($1, $2, $3::timestamptz)) * 1000)::float8 as until', [
    venue.id,
    error === null ? null : describe(error),
    new Date(now),
  ]);
  // a failure recorded always has a back-off: none means no venue row took it
  if (row?.until === null || row?.until === undefined) return error === null ? 0 : null;
  return Math.max(0, Number(row.until) - now);
}
