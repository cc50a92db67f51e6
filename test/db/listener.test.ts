// The one LISTEN connection of a process (src/db/listener.ts): notifications reach the subscribers
// of their channel only; a killed connection is opened again by itself, each subscriber is told
// once to resynchronise, and notifications sent after that arrive again.
import test from 'ava';
import { Listener } from '../../src/db/listener.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { onServer } from '../helpers/targets.ts';
import { poll, until } from '../../dev/wait.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
});
test.after.always(async () => {
  await db?.close();
});

/** A subscriber that records what it hears and how often it was told to resynchronise. */
function recorder() {
  const heard: string[] = [];
  let resyncs = 0;
  return { heard, resyncs: () => resyncs, subscription: { message: (payload: string) => void heard.push(payload), resync: () => void resyncs++ } };
}

const notify = (channel: string, payload: string) => db.sql`select pg_notify(${channel}, ${payload})`;

/**
 * Kills the listening connection: on a server its backend (the one whose last statement was the
 * LISTEN); the embedded database is one backend behind a multiplexer, so its process is killed
 * (the supervisor starts it again) and every connection with it.
 */
async function killListeningConnection() {
  if (onServer) {
    const killed = await db.sql<{ pid: number }[]>`
      select pid from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and query ilike 'listen %' and pg_terminate_backend(pid)`;
    return killed.length;
  }
  const database = db.embedded!;
  const restarted = new Promise((resolve) => database.events.once('restart', resolve));
  process.kill(database.pid()!, 'SIGKILL');
  await restarted;
  return 1;
}

test.serial('two subscribers on different channels hear only their own; after the connection is killed each resynchronises once and hears again', async (t) => {
  const listener = new Listener(db.sql, { firstRetryMs: 50, maxRetryMs: 500 });
  const alpha = recorder();
  const beta = recorder();
  listener.subscribe('alpha', alpha.subscription);
  listener.subscribe('beta', beta.subscription);
  try {
    await until('both channels listened to', () => alpha.resyncs() === 1 && beta.resyncs() === 1);
    await notify('alpha', 'a1');
    await notify('beta', 'b1');
    await notify('gamma', 'g1');
    await until('the first notifications', () => alpha.heard.length > 0 && beta.heard.length > 0);
    t.deepEqual(alpha.heard, ['a1']);
    t.deepEqual(beta.heard, ['b1']);

    t.is(await killListeningConnection(), 1, 'the listening connection was killed');
    await until('both resynchronised after the reconnection', () => alpha.resyncs() === 2 && beta.resyncs() === 2, { timeoutMs: 30_000 });
    t.true(listener.connected);
    // the notifications after the reconnection arrive
    await poll(() => notify('alpha', 'a2').catch(() => null), Boolean, { timeoutMs: 30_000, everyMs: 100 });
    await notify('beta', 'b2');
    await until('the notifications after the reconnection', () => alpha.heard.includes('a2') && beta.heard.includes('b2'));
    t.deepEqual(alpha.heard, ['a1', 'a2']);
    t.deepEqual(beta.heard, ['b1', 'b2']);
    // and it was once: a while later still two each
    await new Promise((resolve) => setTimeout(resolve, 500));
    t.is(alpha.resyncs(), 2, 'alpha resynchronised once after the reconnection');
    t.is(beta.resyncs(), 2, 'beta resynchronised once after the reconnection');
  } finally {
    await listener.close();
  }
});

test.serial('a second subscriber of a listened channel resynchronises at once; an unsubscribed one hears nothing more', async (t) => {
  const listener = new Listener(db.sql);
  const first = recorder();
  const second = recorder();
  const unsubscribeFirst = listener.subscribe('shared', first.subscription);
  try {
    await until('the channel listened to', () => first.resyncs() === 1);
    listener.subscribe('shared', second.subscription);
    await until('the second subscriber told', () => second.resyncs() === 1);
    await notify('shared', 'one');
    await until('both heard it', () => first.heard.length === 1 && second.heard.length === 1);
    unsubscribeFirst();
    await notify('shared', 'two');
    await until('the second heard it', () => second.heard.length === 2);
    t.deepEqual(first.heard, ['one']);
    t.deepEqual(second.heard, ['one', 'two']);
    t.is(first.resyncs(), 1);
  } finally {
    await listener.close();
  }
});
