// Deletes rate-limit and failed-authentication windows that can no longer matter.
import type { Task } from 'graphile-worker';

export const pruneCounters: Task = async (_payload, helpers) => {
  await helpers.query('select app.prune_counters()');
};
