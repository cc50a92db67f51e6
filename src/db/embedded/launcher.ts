// Finds the embedded database on its port, or starts it in a child process and waits until it
// listens. The API, the CLI and the tests all reach it this way.
import { fork } from 'node:child_process';
import { connect } from 'node:net';

export interface EmbeddedHandle {
  port: number;
  /** true when this call started the server (and stop() will end it) */
  started: boolean;
  stop(): Promise<void>;
}

const SERVER = new URL('./server.ts', import.meta.url).pathname;

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

export async function ensureEmbedded(options: { dataDir: string; port: number; idleInTransactionTimeoutMs?: number; statementTimeoutMs?: number }): Promise<EmbeddedHandle> {
  if (options.port !== 0 && (await portAnswers(options.port))) {
    return { port: options.port, started: false, stop: async () => {} };
  }
  const child = fork(SERVER, [], {
    env: {
      ...process.env,
      DATA_DIR: options.dataDir,
      EMBEDDED_DB_PORT: String(options.port),
      EMBEDDED_IDLE_TX_TIMEOUT_MS: String(options.idleInTransactionTimeoutMs ?? 10_000),
      EMBEDDED_STATEMENT_TIMEOUT_MS: String(options.statementTimeoutMs ?? 5_000),
    },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /ready (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`embedded database exited with code ${code} before it was ready`)));
  });
  return {
    port,
    started: true,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
