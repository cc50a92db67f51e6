// What `mdapi backfill` shows: the estimate up front ("about N requests, ~M minutes" at the venues'
// pacing: the database's writes come on top), then on a
// terminal a progress bar per venue (cli-progress) with the requests and time left, otherwise
// plain lines for logs and CI: one per venue and interval step, and every `everyMs` one per venue
// still reading with its time left; a summary line either way.
import cliProgress from 'cli-progress';
import { remainingMs, type BackfillEvent, type BackfillResult } from './backfill.ts';

export interface BackfillReporter {
  onProgress(event: BackfillEvent): void;
  finish(result: BackfillResult): void;
}

export interface BackfillReporterOptions {
  /** off a terminal, how often the progress lines come; default 30 s */
  everyMs?: number;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** a time left, in whole minutes (at least one): what an estimate can promise */
export function minutes(ms: number): string {
  const whole = Math.max(1, Math.ceil(ms / 60_000));
  return `~${whole} minute${whole === 1 ? '' : 's'}`;
}

function stepLine(event: Extract<BackfillEvent, { type: 'step' | 'venue' }>): string {
  if (event.type === 'venue') return `${event.venue}: ${event.state === 'skipped' ? 'skipped (backing off after earlier failures)' : `down, skipped (${event.error})`}`;
  return `${event.venue} ${event.interval}: ${event.markets} markets, ${event.candles} candles, ${event.bars} bars, ${event.requests} requests, ${seconds(event.ms)}`;
}

export function estimateLine(event: Extract<BackfillEvent, { type: 'estimate' }>): string {
  const venues = Object.entries(event.venues).filter(([, venue]) => venue.requests > 0);
  return `backfill: about ${event.requests} requests, ${minutes(event.ms)} at the venues' pacing` +
    (venues.length ? ` (${venues.map(([id, venue]) => `${id} ${venue.requests} requests ${minutes(venue.ms)}`).join(', ')})` : '');
}

export function summaryLine(result: BackfillResult): string {
  const down = Object.entries(result.venues).filter(([, run]) => run.state !== 'up').map(([id, run]) => `${id} ${run.state}`);
  const rate = result.ms > 0 ? Math.round((result.bars * 1000) / result.ms) : 0;
  return `backfill: ${result.bars} bars, ${result.candles} candles, ${result.requests} requests, ${seconds(result.ms)}, ${rate} bars/s` +
    (down.length ? `; ${down.join(', ')}` : '');
}

/** One venue as the reporter follows it: its plan, what is done, what is left. */
interface VenueProgress {
  startedAt: number;
  pacingMs: number;
  slots: number;
  slotsDone: number;
  requests: number;
  remaining: number;
  reading: boolean;
}

const timeLeft = (venue: VenueProgress, now: number) => remainingMs(venue.remaining, venue.pacingMs, venue.requests, now - venue.startedAt);

function followVenues() {
  const venues = new Map<string, VenueProgress>();
  return {
    venues,
    follow(event: BackfillEvent, now = Date.now()): VenueProgress | undefined {
      switch (event.type) {
        case 'plan': {
          const venue: VenueProgress = {
            startedAt: now,
            pacingMs: event.pacingMs,
            slots: event.steps.reduce((sum, step) => sum + step.slots, 0),
            slotsDone: 0,
            requests: 0,
            remaining: event.steps.reduce((sum, step) => sum + step.requests, 0),
            reading: true,
          };
          venues.set(event.venue, venue);
          return venue;
        }
        case 'page': {
          const venue = venues.get(event.venue);
          if (!venue) return undefined;
          venue.slotsDone += event.slots;
          venue.requests += event.requests;
          venue.remaining = event.remaining;
          return venue;
        }
        case 'venue': {
          const venue = venues.get(event.venue);
          if (venue) venue.reading = false;
          return venue;
        }
        default:
          return venues.get((event as { venue?: string }).venue ?? '');
      }
    },
  };
}

function progressLine(id: string, venue: VenueProgress, now: number): string {
  const percent = venue.slots > 0 ? Math.floor((100 * venue.slotsDone) / venue.slots) : 100;
  return `${id}: ${percent} % (${venue.slotsDone}/${venue.slots} candles), ${venue.remaining} requests left, ${minutes(timeLeft(venue, now))} left`;
}

export function backfillReporter(stream: NodeJS.WriteStream, options: BackfillReporterOptions = {}): BackfillReporter {
  const { venues, follow } = followVenues();
  if (!stream.isTTY) {
    const timer = setInterval(() => {
      const now = Date.now();
      for (const [id, venue] of venues) if (venue.reading && venue.remaining > 0) stream.write(`${progressLine(id, venue, now)}\n`);
    }, options.everyMs ?? 30_000);
    timer.unref();
    return {
      onProgress(event) {
        follow(event);
        if (event.type === 'estimate') stream.write(`${estimateLine(event)}\n`);
        if (event.type === 'step' || event.type === 'venue') stream.write(`${stepLine(event)}\n`);
      },
      finish(result) {
        clearInterval(timer);
        stream.write(`${summaryLine(result)}\n`);
      },
    };
  }
  const bars = new cliProgress.MultiBar(
    {
      stream,
      format: '{venue} |{bar}| {percentage}% | {value}/{total} candles | {left} requests left | ETA {eta_estimate} | {step}',
      hideCursor: true,
      autopadding: true,
      barsize: 30,
    },
    cliProgress.Presets.shades_classic,
  );
  const perVenue = new Map<string, cliProgress.SingleBar>();
  const eta = (venue: VenueProgress) => (venue.remaining > 0 ? minutes(timeLeft(venue, Date.now())) : '-');
  return {
    onProgress(event) {
      const venue = follow(event);
      switch (event.type) {
        case 'plan': {
          perVenue.set(event.venue, bars.create(Math.max(venue!.slots, 1), 0, {
            venue: event.venue.padEnd(8),
            left: venue!.remaining,
            eta_estimate: eta(venue!),
            step: venue!.slots ? 'starting' : 'nothing to read',
          }));
          break;
        }
        case 'estimate':
          bars.log(`${estimateLine(event)}\n`);
          break;
        case 'page':
          if (venue) perVenue.get(event.venue)?.increment(event.slots, { left: venue.remaining, eta_estimate: eta(venue), step: `${event.interval} ${event.symbol}` });
          break;
        case 'step':
        case 'venue':
          bars.log(`${stepLine(event)}\n`);
          if (event.type === 'venue') perVenue.get(event.venue)?.update({ step: event.state });
          break;
      }
    },
    finish(result) {
      for (const bar of perVenue.values()) bar.update(bar.getTotal(), { left: 0, eta_estimate: '-', step: 'done' });
      bars.stop();
      stream.write(`${summaryLine(result)}\n`);
    },
  };
}
