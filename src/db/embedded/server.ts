// The embedded database process: PGlite with TimescaleDB, persisted under DATA_DIR and served
// on a loopback port through the multiplexer. It runs in a process of its own, and PGlite on a
// thread of its own (engine.ts), because a WASM query blocks the thread it runs on.
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { APPLICATION_NAME, WORKER_APPLICATION_NAME } from '../client.ts';
import type { EngineReply, EngineRequest } from './engine.ts';
import { Multiplexer } from './multiplexer.ts';

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  idleInTransactionTimeoutMs: number;
  /** limit of one batch of an outside client (0: none); the service's own connections have none */
  statementTimeoutMs: number;
  /** PostgreSQL's shared_buffers (such as 16MB) instead of PGlite's 128MB */
  sharedBuffers?: string;
}

export interface RunningEmbedded {
  port: number;
  close(): Promise<void>;
}

const SUPERUSER = 'postgres';
const ENGINE = new URL('./engine.ts', import.meta.url);

export async function startEmbedded(options: EmbeddedOptions): Promise<RunningEmbedded> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  // PGlite runs on the engine's thread (engine.ts); this one stays free for the clients.
  const engine = new Worker(ENGINE, { workerData: { dataDir, sharedBuffers: options.sharedBuffers } });
  const send = (request: EngineRequest) => engine.postMessage(request);
  const calls = new Map<number, { resolve: (bytes: Uint8Array) => void; reject: (error: Error) => void }>();
  let nextCall = 1;
  let closed: (() => void) | null = null;
  const { version, cancellable } = await new Promise<{ version: string; cancellable: boolean }>((ready, fail) => {
    engine.once('error', fail);
    engine.on('message', (reply: EngineReply) => {
      if (reply.kind === 'ready') ready(reply);
      else if (reply.kind === 'closed') closed?.();
      else {
        const call = calls.get(reply.id)!;
        calls.delete(reply.id);
        if (reply.kind === 'reply') call.resolve(reply.bytes);
        else {
          call.reject(new Error(reply.message));
          // A trap inside the WASM backend leaves it unusable: end the process (its clients get their
          // FATAL first) and let the supervisor (launcher.ts) start a fresh one on the same data.
          if (reply.crashed) {
            process.stderr.write(`[embedded-db] backend crashed: ${reply.message}; exiting for a restart\n`);
            setImmediate(() => process.exit(70));
          }
        }
      }
    });
  });
  let closing = false;
  engine.on('error', (error) => {
    process.stderr.write(`[embedded-db] backend thread failed: ${error.message}; exiting for a restart\n`);
    process.exit(70);
  });
  engine.on('exit', (code) => {
    if (closing) return;
    process.stderr.write(`[embedded-db] backend thread exited (${code}); exiting for a restart\n`);
    process.exit(70);
  });
  if (!cancellable) process.stderr.write('[embedded-db] statement time-outs and cancels are unavailable on this PGlite build\n');

  // One call at a time reaches PGlite: the engine queues them in order.
  const backend = (batch: Buffer, timeoutMs?: number) =>
    new Promise<Uint8Array>((resolve, reject) => {
      // a client gone while closing leaves statements to close: on a closed PGlite that traps (a "crash")
      if (closing) return reject(new Error('the embedded database is shutting down'));
      const id = nextCall++;
      calls.set(id, { resolve, reject });
      send({ kind: 'run', id, batch, timeoutMs });
    });

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
    // once closing, what departing clients leave undone is moot
    log: (line) => void (closing || process.stderr.write(`[embedded-db] ${line}\n`)),
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
      closing = true;
      await new Promise<void>((done) => {
        server.close(() => done());
        for (const client of multiplexer.clients) client.socket.destroy();
      });
      await new Promise<void>((done) => {
        closed = done;
        send({ kind: 'close' });
      });
      await engine.terminate();
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
    sharedBuffers: process.env.EMBEDDED_SHARED_BUFFERS || undefined,
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
