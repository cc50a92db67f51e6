// One way the hot path keeps what it derived: once per argument, bounded, nothing for long arguments.
import test from 'ava';
import { memoized } from '../src/memo.ts';

test('memoized computes once per argument, keeps at most max, and never keeps a long argument', (t) => {
  const calls: string[] = [];
  const upper = memoized((text: string) => (calls.push(text), text.toUpperCase()), { max: 2, maxKeyLength: 10 });
  t.is(upper('a'), 'A');
  t.is(upper('a'), 'A');
  t.deepEqual(calls, ['a']);
  // over max: the least recently used goes
  upper('b');
  upper('c');
  upper('a');
  t.deepEqual(calls, ['a', 'b', 'c', 'a']);
  // longer than maxKeyLength: answered, computed every time, never kept
  const long = 'x'.repeat(11);
  t.is(upper(long), long.toUpperCase());
  upper(long);
  t.is(calls.filter((text) => text === long).length, 2);
  upper('a');
  t.is(calls.filter((text) => text === 'a').length, 2, 'a long argument evicts nothing');
});
