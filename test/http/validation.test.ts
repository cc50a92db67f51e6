// The shared input helpers of src/http/validation.ts that need no database.
import test from 'ava';
import { firstValues } from '../../src/http/validation.ts';

test('a parameter given more than once counts by its first value; non-strings and absent values are left out', (t) => {
  const query = new URLSearchParams('theme=dark&theme=light&coin=bitcoin&empty=');
  const parsed: Record<string, string | string[] | undefined> = { theme: query.getAll('theme'), coin: query.get('coin')!, empty: '', gone: undefined };
  t.deepEqual(firstValues(parsed), { theme: 'dark', coin: 'bitcoin', empty: '' });
  // a form body: a nested name (qs's a[b]=1) and a repeated one whose first value is not text
  t.deepEqual(firstValues({ name: 'x', nested: { b: '1' }, odd: [{ b: '1' }, 'later'], list: ['a', 'b'] }), { name: 'x', list: 'a' });
  for (const none of [undefined, null, '', 'a=1', 7]) t.deepEqual(firstValues(none), {}, String(none));
});
