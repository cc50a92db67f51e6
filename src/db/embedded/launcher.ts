// Finds the embedded database on its port, or starts it in a child process, waits until it
// listens and supervises it: a database process that dies is started again on the same port,
// with backoff, while its clients reconnect. The API, the CLI and the tests all reach it this way.
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { connect } from 'node:net';

export interface EmbeddedHandle {
  port: number;
  /** true when this call started the server (and stop() will end it) */
  started: boolean;
  /** 'exit' (code, signal) when the database process dies unasked, 'restart' once it answers again */
  events: EventEmitter;
  /** pid of the database process now running, when this handle started it */
  pid(): number | null;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  idleInTransactionTimeoutMs?: number;
  /** outside clients' statements are cancelled after this long (0: never) */
  statementTimeoutMs?: number;
  /** first restart delay; doubled after each failed start, up to 10 s */
  restartDelayMs?: number;
  /** PostgreSQL's shared_buffers instead of PGlite's 128MB (server.ts) */
  sharedBuffers?: string;
  /**
   * V8's optimising WASM tier for the database even where the caller runs on the baseline compiler
   * alone (the tests' --liftoff-only, ava.config.mjs): it pays for a database that works for tens of
   * seconds, not for one that answers a few queries
   */
  optimisedWasm?: boolean;
}

const SERVER = new URL('./server.ts', import.meta.url).pathname;
/** How long a stopping database process may take before it is killed. */
const STOP_GRACE_MS = 5_000;
const MAX_RESTART_DELAY_MS = 10_000;

export function portAnswers(port: number): Promise<boolean> {
  return new Promise((answer) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      answer(true);
    });
    socket.once('error', () => answer(false));
  });
}

function spawnServer(options: EmbeddedOptions, port: number): { child: ChildProcess; ready: Promise<number> } {
  const child = fork(SERVER, [], {
    env: {
      ...process.env,
      DATA_DIR: options.dataDir,
      EMBEDDED_DB_PORT: String(port),
      EMBEDDED_IDLE_TX_TIMEOUT_MS: String(options.idleInTransactionTimeoutMs ?? 10_000),
      EMBEDDED_STATEMENT_TIMEOUT_MS: String(options.statementTimeoutMs ?? 5_000),
      EMBEDDED_SHARED_BUFFERS: options.sharedBuffers ?? '',
    },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    execArgv: options.optimisedWasm ? process.execArgv.filter((arg) => arg !== '--liftoff-only') : process.execArgv,
    // A process group of its own: a Ctrl-C in the terminal reaches the service, which stops its
    // worker first (giving back its jobs) and the database last, instead of all at once.
    detached: true,
  });
  const ready = new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /ready (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`embedded database exited with code ${code} before it was ready`)));
  });
  return { child, ready };
}

export async function ensureEmbedded(options: EmbeddedOptions): Promise<EmbeddedHandle> {
  const events = new EventEmitter();
  if (options.port !== 0 && (await portAnswers(options.port))) {
    return { port: options.port, started: false, events, pid: () => null, stop: async () => {} };
  }
  let { child, ready } = spawnServer(options, options.port);
  const port = await ready;
  let stopping = false;
  let restartTimer: NodeJS.Timeout | null = null;
  let delay = options.restartDelayMs ?? 500;

  const supervise = (running: ChildProcess) => {
    running.once('exit', (code, signal) => {
      if (stopping) return;
      events.emit('exit', code, signal);
      restartTimer = setTimeout(restart, delay);
    });
  };
  const restart = async () => {
    restartTimer = null;
    if (stopping) return;
    const next = spawnServer(options, port);
    child = next.child;
    supervise(child);
    try {
      await next.ready;
      delay = options.restartDelayMs ?? 500;
      events.emit('restart', port);
    } catch {
      // its exit handler schedules the next try
      delay = Math.min(delay * 2, MAX_RESTART_DELAY_MS);
    }
  };
  supervise(child);

  return {
    port,
    started: true,
    events,
    pid: () => (child.exitCode === null && child.signalCode === null ? child.pid ?? null : null),
    async stop() {
      stopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      const running = child;
      if (running.exitCode !== null || running.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        // A WASM statement blocks the database's thread and its SIGTERM handler with it.
        const kill = setTimeout(() => running.kill('SIGKILL'), STOP_GRACE_MS);
        running.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        running.kill('SIGTERM');
      });
    },
  };
}
