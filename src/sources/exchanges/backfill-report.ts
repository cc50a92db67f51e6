// What `mdapi backfill` shows: on a terminal a progress bar per venue (cli-progress), otherwise
// plain lines, one per venue and interval step, for logs and CI; a summary line either way.
import cliProgress from 'cli-progress';
import type { BackfillEvent, BackfillResult } from './backfill.ts';

export interface BackfillReporter {
  onProgress(event: BackfillEvent): void;
  finish(result: BackfillResult): void;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function stepLine(event: Extract<BackfillEvent, { type: 'step' | 'venue' }>): string {
  if (event.type === 'venue') return `${event.venue}: ${event.state === 'skipped' ? 'skipped (backing off after earlier failures)' : `down, skipped (${event.error})`}`;
  return `${event.venue} ${event.interval}: ${event.markets} markets, ${event.candles} candles, ${event.bars} bars, ${event.requests} requests, ${seconds(event.ms)}`;
}

export function summaryLine(result: BackfillResult): string {
  const down = Object.entries(result.venues).filter(([, run]) => run.state !== 'up').map(([id, run]) => `${id} ${run.state}`);
  const rate = result.ms > 0 ? Math.round((result.bars * 1000) / result.ms) : 0;
  return `backfill: ${result.bars} bars, ${result.candles} candles, ${result.requests} requests, ${seconds(result.ms)}, ${rate} bars/s` +
    (down.length ? `; ${down.join(', ')}` : '');
}

export function backfillReporter(stream: NodeJS.WriteStream): BackfillReporter {
  if (!stream.isTTY) {
    return {
      onProgress(event) {
        if (event.type === 'step' || event.type === 'venue') stream.write(`${stepLine(event)}\n`);
      },
      finish: (result) => void stream.write(`${summaryLine(result)}\n`),
    };
  }
  const bars = new cliProgress.MultiBar(
    {
      stream,
      format: '{venue} |{bar}| {percentage}% | {value}/{total} candles | {step}',
      hideCursor: true,
      autopadding: true,
      barsize: 30,
    },
    cliProgress.Presets.shades_classic,
  );
  const perVenue = new Map<string, cliProgress.SingleBar>();
  return {
    onProgress(event) {
      switch (event.type) {
        case 'plan': {
          const total = event.steps.reduce((sum, step) => sum + step.slots, 0);
          perVenue.set(event.venue, bars.create(Math.max(total, 1), 0, { venue: event.venue.padEnd(8), step: total ? 'starting' : 'nothing to read' }));
          break;
        }
        case 'page':
          perVenue.get(event.venue)?.increment(event.slots, { step: `${event.interval} ${event.symbol}` });
          break;
        case 'step':
        case 'venue':
          bars.log(`${stepLine(event)}\n`);
          if (event.type === 'venue') perVenue.get(event.venue)?.update({ step: event.state });
          break;
      }
    },
    finish(result) {
      for (const bar of perVenue.values()) bar.update(bar.getTotal(), { step: 'done' });
      bars.stop();
      stream.write(`${summaryLine(result)}\n`);
    },
  };
}
