// The task list and the one crontab of the service.
import type { Runner, TaskList } from 'graphile-worker';
import type { Config } from '../src/config.ts';
import type { JobSchedule } from '../src/worker.ts';
import type { Metrics } from '../src/metrics.ts';
import { maintainTables } from './maintain_tables.ts';
import { pruneCounters } from './prune_counters.ts';
import { expireConsoleAccounts } from './expire_console_accounts.ts';
import { runTimescaledbJobs } from './run_timescaledb_jobs.ts';
import { simulateMarket } from './simulate_market.ts';
import { simulateExchanges } from './simulate_exchanges.ts';
import { simulateLiquidations } from './simulate_liquidations.ts';
import { refreshFx } from './refresh_fx.ts';
import { refreshCoinMetadata } from './refresh_coin_metadata.ts';
import { refreshSentiment } from './refresh_sentiment.ts';
import { deliverWebhook } from './deliver_webhook.ts';
import { sendEmail } from './send_email.ts';
import { deliverPush } from './deliver_push.ts';
import { exchangeTasks } from './fetch_exchanges.ts';

export function taskList(config: Config, metrics?: Metrics): TaskList {
  return {
    run_timescaledb_jobs: runTimescaledbJobs(config.TIMESCALEDB_JOB_RUNNER),
    prune_counters: pruneCounters,
    expire_console_accounts: expireConsoleAccounts(config),
    maintain_tables: maintainTables,
    simulate_market: simulateMarket(config.MARKET_SOURCE),
    simulate_exchanges: simulateExchanges(config.MARKET_SOURCE),
    simulate_liquidations: simulateLiquidations(config.MARKET_SOURCE),
    ...exchangeTasks(config, metrics),
    refresh_fx: refreshFx(config.FX_SOURCE, undefined, config.ECB_URL),
    refresh_coin_metadata: refreshCoinMetadata(config),
    refresh_sentiment: refreshSentiment,
    deliver_webhook: deliverWebhook(config),
    send_email: sendEmail(config),
    deliver_push: deliverPush(config),
  };
}

// graphile-worker crontab: minute hour day month weekday task ?options
export const crontab = [
  // serial: a call that outlives its minute must not meet the next one on a due job
  '* * * * * run_timescaledb_jobs ?max=1&queue=timescaledb_jobs',
  '17 * * * * prune_counters ?max=1',
  '37 * * * * expire_console_accounts ?max=1',
  '*/15 * * * * maintain_tables ?max=1',
  '* * * * * simulate_market ?max=1&queue=market',
  '* * * * * simulate_exchanges ?max=1&queue=market',
  '* * * * * simulate_liquidations ?max=1&queue=market',
  '* * * * * fetch_exchanges ?max=1&queue=market',
  // its own queue: a first poll pages back 48 hours and must not hold up the market's minute
  '* * * * * fetch_okx_liquidations ?max=1&queue=okx_liquidations',
  '25 4,16 * * * refresh_fx ?max=3',
  '41 * * * * refresh_coin_metadata ?max=3',
  '*/15 * * * * refresh_sentiment ?max=1&queue=market',
].join('\n');

/**
 * Jobs queued whenever a worker starts, the present first: the demo venues (a few seconds before
 * any coin has a price: the catalogue and their figures, so that a newcomer's first calls find
 * them), the demo market's present (the current hour: every coin's price and rank within a second
 * or two), the venues' tickers on it (from which the live prices start), the market's last 24 hours
 * (its 24-hour figures) and the tickers again on them, and then the rest of the market's history,
 * at once instead of at the next minute; the sentiment readings follow in the same
 * (serial) queue instead of up to 15 minutes later.
 */
export async function onWorkerStart(runner: Pick<Runner, 'addJob'>, config: Config): Promise<void> {
  if (config.MARKET_SOURCE === 'simulated') {
    await runner.addJob('simulate_exchanges', { venuesOnly: true }, { queueName: 'market', jobKey: 'simulate_exchanges:start', maxAttempts: 3 });
    await runner.addJob('simulate_market', { history: 'none' }, { queueName: 'market', jobKey: 'simulate_market:present:start', maxAttempts: 3 });
    await runner.addJob('simulate_exchanges', { presentOnly: true }, { queueName: 'market', jobKey: 'simulate_exchanges:present:start', maxAttempts: 3 });
    await runner.addJob('simulate_market', { history: 'day' }, { queueName: 'market', jobKey: 'simulate_market:day:start', maxAttempts: 3 });
    await runner.addJob('simulate_exchanges', { presentOnly: true }, { queueName: 'market', jobKey: 'simulate_exchanges:day:start', maxAttempts: 3 });
    await runner.addJob('simulate_market', {}, { queueName: 'market', jobKey: 'simulate_market:start', maxAttempts: 3 });
  }
  // the ECB publishes twice a day: real FX rates from the start, not at the next publication
  if (config.FX_SOURCE === 'ecb') await runner.addJob('refresh_fx', {}, { jobKey: 'refresh_fx:start', maxAttempts: 3 });
  // in the market queue ahead of the first venue load: the coin list names the coins the venues bring
  if (config.METADATA_SOURCE !== 'none') await runner.addJob('refresh_coin_metadata', {}, { queueName: 'market', jobKey: 'refresh_coin_metadata:start', maxAttempts: 3 });
  if (config.MARKET_SOURCE === 'exchanges') {
    await runner.addJob('fetch_exchanges', {}, { queueName: 'market', jobKey: 'fetch_exchanges:start', maxAttempts: 1 });
  }
  await runner.addJob('refresh_sentiment', {}, { queueName: 'market', jobKey: 'refresh_sentiment:start', maxAttempts: 3 });
}

/** The schedule the worker runs, handed to it by the entry points (bin/main.ts, bin/cli.ts). */
export const schedule: JobSchedule = { taskList, crontab, onWorkerStart };
