// Small values the hot path derives again and again from the same few arguments (a presented key's
// digest, the key in an Authorization header, an HTTP-date, a metrics label):
// computed once per argument while it keeps being asked for. lru-cache bounds how many are kept
// (a scan of made-up keys evicts the oldest) and keeps none for an argument longer than
// `maxKeyLength` (a header may be 16 KiB).
import { LRUCache } from 'lru-cache';

export function memoized<K extends string | number, V extends NonNullable<unknown>>(
  compute: (key: K) => V,
  { max, maxKeyLength = 256 }: { max: number; maxKeyLength?: number },
): (key: K) => V {
  const cache = new LRUCache<K, V>({
    max,
    maxEntrySize: maxKeyLength,
    sizeCalculation: (_, key) => Math.max(1, typeof key === 'string' ? key.length : 1),
  });
  // get and set rather than lru-cache's memo(), which costs a few objects a call on the hot path
  return (key) => {
    let value = cache.get(key);
    if (value === undefined) cache.set(key, (value = compute(key)));
    return value;
  };
}
