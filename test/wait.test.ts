// The one sleep and the one polling helper (dev/wait.ts) the tests, the benches and the dev/ stand-ins wait with.
import test from 'ava';
import { poll, sleep, until } from '../dev/wait.ts';

test('sleep resolves (with nothing) after the time given, not before', async (t) => {
  const started = performance.now();
  t.is(await sleep(60), undefined);
  t.true(performance.now() - started >= 59, `${performance.now() - started} ms`);
});

test('poll returns the first value that is done, probing at once and then every everyMs', async (t) => {
  let calls = 0;
  const value = await poll(() => ++calls, (n) => n >= 3, { timeoutMs: 5000, everyMs: 5 });
  t.is(value, 3);
  t.is(calls, 3);
});

test('poll returns the last value when time runs out, for the caller to assert on', async (t) => {
  const started = Date.now();
  let calls = 0;
  const value = await poll(async () => ++calls, () => false, { timeoutMs: 120, everyMs: 20 });
  t.is(value, calls);
  t.true(calls >= 2, `${calls} probes`);
  t.true(Date.now() - started >= 120, 'waited the whole time');
});

test('until answers the truthy value, or throws naming what it waited for (read when it gives up)', async (t) => {
  let n = 0;
  t.is(await until('n to reach 2', () => (++n >= 2 ? 'two' : null), { everyMs: 5 }), 'two');
  let seen = 0;
  const error = await t.throwsAsync(until(() => `3 messages (have ${seen})`, () => (seen++, false), { timeoutMs: 50, everyMs: 10 }));
  t.regex(error!.message, /^timed out after 50 ms waiting for 3 messages \(have [1-9]\d*\)$/);
});
