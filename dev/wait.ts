// Waiting for what happens on its own time (a worker's job, a NOTIFY, a replica catching up, a
// process starting), shared by the tests, the benches and the loopback stand-ins of dev/: the one
// sleep, and polling.

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface Polling {
  /** give up after this long (default 15 s) */
  timeoutMs?: number;
  /** between two probes (default 25 ms) */
  everyMs?: number;
}

const TIMEOUT_MS = 15_000;

type Found<T> = Exclude<T, false | null | undefined | 0 | ''>;

/**
 * Calls `probe` (at once, then every `everyMs`) until `done` holds for its value or `timeoutMs`
 * has passed, and returns the last value either way: for a test that asserts on it afterwards.
 */
export async function poll<T>(probe: () => T | Promise<T>, done: (value: T) => boolean, { timeoutMs = TIMEOUT_MS, everyMs = 25 }: Polling = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() >= deadline) return value;
    await sleep(Math.max(0, Math.min(everyMs, deadline - Date.now())));
  }
}

/**
 * Calls `probe` until it answers a truthy value, and returns that value; throws "timed out after
 * N ms waiting for <what>" after `timeoutMs` (`what` may be a function, read at that moment).
 */
export async function until<T>(what: string | (() => string), probe: () => T | Promise<T>, options: Polling = {}): Promise<Found<T>> {
  const value = await poll(probe, Boolean, options);
  if (!value) throw new Error(`timed out after ${options.timeoutMs ?? TIMEOUT_MS} ms waiting for ${typeof what === 'function' ? what() : what}`);
  return value as Found<T>;
}
