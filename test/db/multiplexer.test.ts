// The embedded database's multiplexer: isolation at transaction boundaries, rollback of a client
// that dies inside a transaction, the idle-in-transaction timeout, NOTIFY routing, COPY and psql.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import test from 'ava';
import { connect as connectSocket } from 'node:net';
import postgres from 'postgres';
import { message, query, splitMessages, sync } from '../../src/db/embedded/protocol.ts';
import { embeddedOnly } from '../helpers/targets.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { poll, sleep, until } from '../../dev/wait.ts';

const embedded = embeddedOnly(test, 'the multiplexer stands in front of the embedded database alone');

const run = promisify(execFile);
let db: TestDatabase;

const connect = (max = 1) => postgres(db.url, { prepare: false, max, onnotice: () => {} });

test.before(async () => {
  db = await testDatabase({ idleInTransactionTimeoutMs: 1500 });
  await db.sql`create table public.counter (id int primary key, value int not null)`;
  await db.sql`insert into public.counter values (1, 0)`;
  await db.sql`create table public.items (id serial primary key, note text not null)`;
});
test.after.always(() => db?.close());

embedded.serial('read-modify-write transactions from 8 connections never interleave', async (t) => {
  const clients = Array.from({ length: 8 }, () => connect());
  await Promise.all(
    clients.flatMap((sql) =>
      Array.from({ length: 25 }, () =>
        sql.begin(async (tx) => {
          const [row] = await tx`select value from public.counter where id = 1`;
          await tx`update public.counter set value = ${row!.value + 1} where id = 1`;
        }),
      ),
    ),
  );
  const [row] = await db.sql`select value from public.counter where id = 1`;
  t.is(row!.value, 200);
  await Promise.all(clients.map((sql) => sql.end()));
});

embedded.serial('a client waits for another client’s open transaction and then sees only committed data', async (t) => {
  const a = connect();
  const b = connect();
  const events: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const inside = new Promise<void>((resolve) => (started = resolve));
  const writer = a.begin(async (tx) => {
    await tx`insert into public.items (note) values ('from a')`;
    started();
    await held;
    events.push('a commits');
  });
  await inside;
  const reader = b`select count(*)::int as n from public.items where note = 'from a'`.then(([row]) => {
    events.push('b reads');
    return row!.n;
  });
  await sleep(300);
  t.deepEqual(events, [], 'the reader must wait while the writer holds its transaction');
  release();
  await writer;
  t.is(await reader, 1);
  t.deepEqual(events, ['a commits', 'b reads']);
  await Promise.all([a.end(), b.end()]);
});

embedded.serial('a client killed inside a transaction leaves no lock and no half-written data', async (t) => {
  const script = `
    import postgres from 'postgres';
    const sql = postgres(${JSON.stringify(db.url)}, { prepare: false, max: 1 });
    await sql.unsafe("begin; insert into public.items (note) values ('half-written'); lock table public.counter in access exclusive mode").simple();
    process.stdout.write('holding\\n');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk) => String(chunk).includes('holding') && resolve());
    child.once('exit', (code) => reject(new Error(`the client process exited early (${code})`)));
  });
  child.kill('SIGKILL');
  const other = connect();
  const [locked] = await other.begin(async (tx) => {
    await tx`lock table public.counter in access exclusive mode nowait`;
    return tx`select count(*)::int as n from public.items where note = 'half-written'`;
  });
  t.is(locked!.n, 0);
  const [state] = await other`select count(*)::int as n from pg_locks where locktype = 'relation' and relation = 'public.counter'::regclass`;
  t.is(state!.n, 0);
  await other.end();
});

embedded.serial('a client idle inside a transaction past the timeout is disconnected and rolled back', async (t) => {
  const idle = connect();
  const error = await t.throwsAsync(
    idle.begin(async (tx) => {
      await tx`insert into public.items (note) values ('idle')`;
      await sleep(2500);
      await tx`select 1`;
    }),
  );
  t.truthy(error);
  const [row] = await db.sql`select count(*)::int as n from public.items where note = 'idle'`;
  t.is(row!.n, 0);
  await idle.end().catch(() => {});
});

embedded.serial('NOTIFY reaches the connections that LISTEN on the channel', async (t) => {
  const listener = connect();
  const received: string[] = [];
  await listener.listen('mdapi_test', (payload) => received.push(payload));
  const quiet = connect();
  await quiet.listen('other_channel', (payload) => received.push(`wrong: ${payload}`));
  await db.sql`select pg_notify('mdapi_test', 'hello')`;
  await poll(() => received.length, (n) => n > 0, { timeoutMs: 1000, everyMs: 20 });
  t.deepEqual(received, ['hello']);
  await Promise.all([listener.end(), quiet.end()]);
});

embedded.serial('fifty clients at once all get their answers', async (t) => {
  const clients = Array.from({ length: 50 }, () => connect());
  const results = await Promise.all(clients.map((sql, i) => sql`select ${i}::int as i, pg_sleep(0.001)`));
  t.deepEqual(results.map(([row]) => row!.i), Array.from({ length: 50 }, (_, i) => i));
  await Promise.all(clients.map((sql) => sql.end()));
});

embedded.serial('psql connects, runs the extended protocol alongside, and COPY works both ways', async (t) => {
  const { stdout } = await run('psql', ['-X', '-At', db.url, '-c', 'select 40 + 2']);
  t.is(stdout.trim(), '42');
  const copyIn = spawn('psql', ['-X', '-v', 'ON_ERROR_STOP=1', db.url, '-c', "\\copy public.items (note) from stdin"]);
  copyIn.stdin.end('copied one\ncopied two\n');
  const code = await new Promise((resolve) => copyIn.on('close', resolve));
  t.is(code, 0);
  const { stdout: out } = await run('psql', ['-X', '-At', db.url, '-c', "copy (select note from public.items where note like 'copied%' order by note) to stdout"]);
  t.deepEqual(out.trim().split('\n'), ['copied one', 'copied two']);
  const extended = await db.sql`select ${'a'}::text || ${'b'}::text as joined`;
  t.is(extended[0]!.joined, 'ab');
});

embedded.serial('an unknown role is refused, and a failed statement leaves the backend usable', async (t) => {
  const stranger = postgres(db.urlAs('nobody_here'), { prepare: false, max: 1, onnotice: () => {} });
  await t.throwsAsync(stranger`select 1`);
  await stranger.end().catch(() => {});
  await t.throwsAsync(db.sql`select 1 / 0`);
  const [row] = await db.sql`select 1 as ok`;
  t.is(row!.ok, 1);
});

embedded.serial('an extended-protocol batch left open behind a finished query keeps the backend', async (t) => {
  // postgres.js sends Parse/Describe/Flush and waits for the parameter types before its Bind;
  // pipelined behind another query, that batch's reply ends after a ReadyForQuery.
  const { socket, waitFor, clear, received: reply } = await rawClient();
  clear();
  const other = connect();
  await other`select 1`;
  socket.write(Buffer.concat([
    query('select 1'),
    message('P', Buffer.concat([Buffer.from('\0select $1::int + 1000\0'), int16(0)])),
    message('D', Buffer.from('S\0')),
    message('H'),
  ]));
  await waitFor('t');
  // Another client's unnamed statement must not replace ours before our Bind arrives.
  const otherDone = other`select ${'other'}::text as value`.execute();
  await sleep(200);
  clear();
  socket.write(bindExecute('', '5'));
  await waitFor('Z');
  const { messages } = splitMessages(reply());
  t.false(messages.some((msg) => msg.type === 'E'), 'the Bind found its own statement');
  const row = messages.find((msg) => msg.type === 'D')!;
  t.is(row.bytes.subarray(11).toString(), '1005');
  t.is((await otherDone)[0]!.value, 'other');
  socket.end();
  await other.end();
});

const int16 = (n: number) => Buffer.from([n >> 8, n & 255]);
/** Parse of a named (or, with '', the unnamed) statement taking one untyped parameter. */
const parse = (name: string, text: string) => message('P', Buffer.concat([Buffer.from(`${name}\0${text}\0`), int16(0)]));
/** Bind of a statement to the unnamed portal with one text parameter, its Execute and a Sync. */
function bindExecute(name: string, parameter: string) {
  const value = Buffer.from(parameter);
  const length = Buffer.alloc(4);
  length.writeInt32BE(value.length);
  return Buffer.concat([
    message('B', Buffer.concat([Buffer.from(`\0${name}\0`), int16(0), int16(1), length, value, int16(0)])),
    message('E', Buffer.concat([Buffer.from('\0'), Buffer.alloc(4)])),
    sync(),
  ]);
}

/** A connection speaking the wire protocol by hand, logged in as the superuser. */
async function rawClient() {
  const socket = connectSocket({ host: '127.0.0.1', port: db.embeddedPort! });
  let received = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
  const waitFor = (type: string) => until(`a ${type} message`, () => splitMessages(received).messages.some((msg) => msg.type === type), { timeoutMs: 2000, everyMs: 10 });
  const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
  const startup = Buffer.alloc(8);
  startup.writeInt32BE(8 + params.length, 0);
  startup.writeInt32BE(196608, 4);
  socket.write(Buffer.concat([startup, params]));
  await waitFor('Z');
  received = Buffer.alloc(0);
  /** Sends a batch ending in a Sync and returns the DataRow values and errors of its reply. */
  const exchange = async (batch: Buffer) => {
    received = Buffer.alloc(0);
    socket.write(batch);
    await waitFor('Z');
    const { messages } = splitMessages(received);
    return {
      rows: messages.filter((msg) => msg.type === 'D').map((msg) => msg.bytes.subarray(11).toString()),
      errors: messages.filter((msg) => msg.type === 'E').map((msg) => msg.bytes.toString('utf8', 5).split('\0').find((field) => field.startsWith('M'))),
    };
  };
  return { socket, waitFor, exchange, clear: () => (received = Buffer.alloc(0)), received: () => received };
}

embedded.serial('named prepared statements: each connection has its own, and those of a connection that goes are closed', async (t) => {
  const prepared = async () => (await db.sql`select count(*)::int as n from pg_prepared_statements where name like '%probe'`)[0]!.n;
  const before = await prepared();
  const a = await rawClient();
  const b = await rawClient();
  // the same name on two connections: without a namespace each, the second Parse fails ("already exists")
  t.deepEqual(await a.exchange(Buffer.concat([parse('probe', 'select $1::int + 1000'), sync()])), { rows: [], errors: [] });
  t.deepEqual(await b.exchange(Buffer.concat([parse('probe', 'select $1::int + 2000'), sync()])), { rows: [], errors: [] });
  // a third connection's statements cannot be reached by name
  const c = await rawClient();
  const foreign = await c.exchange(bindExecute('probe', '1'));
  t.is(foreign.rows.length, 0);
  t.regex(foreign.errors[0] ?? '', /does not exist/);
  for (let i = 0; i < 3; i++) {
    t.deepEqual(await a.exchange(bindExecute('probe', String(i))), { rows: [String(1000 + i)], errors: [] });
    t.deepEqual(await b.exchange(bindExecute('probe', String(i))), { rows: [String(2000 + i)], errors: [] });
  }
  t.is(await prepared(), before + 2);
  // Close ends one by its own name; a departed connection's are closed by the multiplexer
  t.deepEqual(await b.exchange(Buffer.concat([message('C', Buffer.from('Sprobe\0')), sync()])), { rows: [], errors: [] });
  t.is(await prepared(), before + 1);
  a.socket.end();
  t.is(await poll(prepared, (n) => n <= before, { timeoutMs: 2000, everyMs: 20 }), before);
  b.socket.end();
  c.socket.end();
});

embedded.serial('postgres.js with named prepared statements: eight connections, repeated queries, the right answers', async (t) => {
  const sql = postgres(db.url, { prepare: true, max: 8, onnotice: () => {} });
  const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => sql`select ${i}::int * 2 as doubled, ${`n${i}`}::text as name`));
  t.deepEqual(answers.map(([row]) => ({ ...row })), Array.from({ length: 200 }, (_, i) => ({ doubled: i * 2, name: `n${i}` })));
  await sql.end();
});
