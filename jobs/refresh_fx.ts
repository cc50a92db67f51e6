// Fiat reference rates, twice a day: with FX_SOURCE=ecb, the ECB's daily euro reference rates
// (src/sources/ecb.ts) become market.fx_rates rows in units per USD. With the offline default (seed)
// the seeded placeholder rates stay as they are. A failed or malformed download throws before
// anything is written, so the previous rates stay current and graphile-worker retries.
import type { Task } from 'graphile-worker';
import { ecbRates, type Fetch } from '../src/sources/ecb.ts';
import { queryOf } from '../src/db/query.ts';
import { runSource } from '../src/sources/source.ts';

export type FxSource = 'seed' | 'ecb';

export const refreshFx = (source: FxSource, fetchFn?: Fetch, url?: string): Task => async (_payload, helpers) => {
  if (source !== 'ecb') return;
  const result = await helpers.withPgClient((client) => runSource(queryOf(client), ecbRates(fetchFn, url)));
  helpers.logger.info(`ecb fx: ${result.rows} rates of ${result.date}`);
};
