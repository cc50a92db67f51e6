// Ends the console accounts whose address was never confirmed (CONSOLE_UNVERIFIED_DAYS), so that a
// sign-up with someone else's address does not hold it for ever. The SQL does the work.
import type { Task } from 'graphile-worker';
import type { Config } from '../src/config.ts';

export const expireConsoleAccounts = (config: Pick<Config, 'CONSOLE_UNVERIFIED_DAYS'>): Task => async (_payload, helpers) => {
  await helpers.query('select app.console_expire_unverified(make_interval(days => $1))', [config.CONSOLE_UNVERIFIED_DAYS]);
};
