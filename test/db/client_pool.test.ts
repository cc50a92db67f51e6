// The service's postgres.js client where patches/postgres+3.4.9.patch changes it.
// - Its pool under sustained load. postgres.js 3.4.9 keeps its connections in queues (src/queue.js)
//   whose array only shrinks when it empties: while every connection stays busy, each query dispatched
//   left one dead slot behind, and moving a connection between queues searched the whole array
//   (indexOf), so a query cost more the longer the pool had been saturated (31 → 92 µs of CPU a query
//   within 16 s on this machine). The patch compacts the array and searches only its live part.
// - A database lost as a connection opens. postgres.js looks the array types up first on each new
//   connection and dropped that lookup's promise (porsager/postgres#1192, #1223): the database killed
//   then, and the reconnection refused, was an unhandled rejection that ended the process (the chaos
//   run's stream holders died of it, "connect ECONNREFUSED" with only net frames). The patch handles it;
//   the connection's first query still fails, with the same error.
import { spawn } from 'node:child_process';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
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

/**
 * A loopback proxy to the database that cuts its first connection as postgres.js sends the array-type
 * lookup, and stops listening then: the reconnection is refused, as when the database is killed.
 */
async function cutAtTypeLookup(target: URL) {
  let cut = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      if (!cut && chunk.includes('pg_catalog.pg_type')) {
        cut = true;
        server.close();
        client.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    get cut() {
      return cut;
    },
    close() {
      server.close();
      for (const socket of sockets) socket.destroy();
    },
  };
}

test('a database lost while a new connection looks its types up fails that connection\'s query, and the process lives on', async (t) => {
  const proxy = await cutAtTypeLookup(new URL(db.url));
  // its own process: an unhandled rejection ends a Node process (and an ava worker would report it)
  const script = `
    const { createSql } = await import(${JSON.stringify(new URL('../../src/db/client.ts', import.meta.url).pathname)});
    const sql = createSql({ url: ${JSON.stringify(proxy.url)}, pooled: true, embedded: false }, { max: 1 });
    const outcome = await sql.unsafe('select 1 as n').then(() => 'answered', (error) => 'failed: ' + error.code);
    console.log(outcome);
    // an unhandled rejection would end the process within this wait
    await new Promise((resolve) => setTimeout(resolve, 500));
    console.log('alive');
    process.exit(0);
  `;
  try {
    const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    t.true(proxy.cut, 'the proxy cut the connection at the type lookup');
    t.is(stdout.trim().split('\n')[0], 'failed: ECONNREFUSED', 'the query that opened the connection fails with the lost connection');
    t.is(code, 0, `the process ended by itself (${code}): ${stderr.slice(0, 500)}`);
    t.regex(stdout, /alive/);
  } finally {
    proxy.close();
  }
});
