// Polling for what happens on its own time (a worker's job, a NOTIFY, a replica catching up).

type Found<T> = Exclude<T, false | null | undefined | 0 | ''>;

/**
 * Calls `probe` every `everyMs` until it answers a truthy value, and returns that value; throws
 * "timed out after N ms waiting for <what>" after `timeoutMs`.
 */
export async function until<T>(what: string, probe: () => T | Promise<T>, { timeoutMs = 15_000, everyMs = 25 } = {}): Promise<Found<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as Found<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
