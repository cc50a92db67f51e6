// The service's postgres.js pool under sustained load. postgres.js 3.4.9 keeps its connections in
// queues (src/queue.js) whose array only shrinks when it empties: while every connection stays busy,
// each query dispatched left one dead slot behind, and moving a connection between queues searched
// the whole array (indexOf), so a query cost more the longer the pool had been saturated (31 → 92 µs
// of CPU a query within 16 s on this machine). patches/postgres+3.4.9.patch compacts the array and
// searches only its live part; this test watches the searches a saturated pool makes.
import test from 'ava';
import { createSql } from '../../src/db/client.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
});
test.after.always(async () => {
  await db?.close();
});

/** Runs `work` recording the length of every array searched for one of postgres.js's connections. */
async function searchedLengths(work: () => Promise<void>): Promise<number[]> {
  const lengths: number[] = [];
  const indexOf = Array.prototype.indexOf;
  // a connection is the only element of those queues with a `queue` property (the queue it is in)
  Array.prototype.indexOf = function (this: unknown[], element: unknown, ...rest: [number?]) {
    if (element !== null && typeof element === 'object' && 'queue' in element && 'execute' in element) lengths.push(this.length);
    return indexOf.call(this, element, ...rest);
  } as typeof Array.prototype.indexOf;
  try {
    await work();
  } finally {
    Array.prototype.indexOf = indexOf;
  }
  return lengths;
}

test('a pool kept saturated searches queues no longer than the pool, however many queries it has run', async (t) => {
  // the service's own client (prepared statements where the database allows them): two
  // connections, sixteen callers each running queries back to back
  const pooled = db.embedded !== null;
  const sql = createSql({ url: db.url, pooled, embedded: pooled }, { max: 2 });
  try {
    const queries = 3000;
    let started = 0;
    let answered = 0;
    const lengths = await searchedLengths(async () => {
      await Promise.all(Array.from({ length: 16 }, async () => {
        while (started++ < queries) {
          // without parameters, or prepared (a server's pool), a query is pipelined on a busy connection
          const [row] = await sql<{ n: number }[]>`select 1 as n`;
          if (row) answered++;
        }
      }));
    });
    t.is(answered, queries);
    // connections moved between queues while every one was busy: the case that grew
    t.true(lengths.length >= queries / 2, `${lengths.length} searches`);
    const longest = Math.max(...lengths);
    // a few dozen at most: dead slots are dropped once there are 32 and as many as the live ones
    // (unpatched, the longest was 2 943 slots here)
    t.true(longest <= 64, `the longest queue searched held ${longest} slots after ${queries} queries`);
  } finally {
    await sql.end({ timeout: 5 });
  }
});
