// The processes a chaos run starts: each is a real `mdapi db`, `mdapi worker` or `node bin/main.ts`,
// its output appended to a log file of its own, killed and started again by the run, and always
// ended when the run ends (whatever way it ends).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;

/** A free loopback port (bound once, then released for the process that will use it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The parent pid of a process (Linux /proc), or null when it is gone. */
export function parentOf(pid: number): number | null {
  try {
    // the command name (2nd field) may hold spaces: the fields after its closing parenthesis
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** One long-running process of the service, started again after every kill. */
export class Managed {
  child: ChildProcess | null = null;
  starts = 0;
  /** called when the process ends without a kill of ours */
  onUnexpectedExit: (code: number | null, signal: NodeJS.Signals | null) => void = () => {};
  private killing = false;
  readonly log: string;
  readonly name: string;
  private readonly args: string[];
  private readonly env: NodeJS.ProcessEnv;

  constructor(name: string, args: string[], env: NodeJS.ProcessEnv, logDir: string, registry: Set<Managed>) {
    this.name = name;
    this.args = args;
    this.env = env;
    this.log = join(logDir, `${name}.log`);
    registry.add(this);
  }

  get pid(): number | null {
    return this.running ? this.child!.pid ?? null : null;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    if (this.running) throw new Error(`${this.name} is already running`);
    const fd = openSync(this.log, 'a');
    try {
      this.child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', ...this.args], {
        cwd: ROOT,
        env: this.env,
        stdio: ['ignore', fd, fd],
      });
    } finally {
      closeSync(fd);
    }
    this.starts++;
    this.killing = false;
    this.child.once('exit', (code, signal) => {
      if (!this.killing) this.onUnexpectedExit(code, signal);
    });
  }

  /** Sends a signal without waiting (the exit that follows is expected). */
  signal(signal: NodeJS.Signals): void {
    if (!this.running) return;
    this.killing = true;
    this.child!.kill(signal);
  }

  exited(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => child.once('exit', () => resolve()));
  }

  /** Sends the signal and waits for the exit; a process still there after `graceMs` is SIGKILLed. */
  async kill(signal: NodeJS.Signals, graceMs = 15_000): Promise<{ tookMs: number; forced: boolean }> {
    const started = Date.now();
    if (!this.running) return { tookMs: 0, forced: false };
    this.killing = true;
    this.child!.kill(signal);
    let forced = false;
    const timer = setTimeout(() => {
      forced = true;
      this.child?.kill('SIGKILL');
    }, graceMs);
    await this.exited();
    clearTimeout(timer);
    return { tookMs: Date.now() - started, forced };
  }
}

/** The output a process left in its log, for a failure message. */
export function tail(path: string, lines = 15): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Ctrl-C or SIGTERM during a run: stop every process it started (cleanup), then exit. */
export function cleanUpOnSignal(cleanup: () => Promise<unknown>) {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stdout.write(`\n${signal}: stopping every process of the run\n`);
      void cleanup().finally(() => process.exit(130));
    });
  }
}

/** The loopback replay of the venues as `make venues-replay COINS=…` serves it, in a process of its own. */
export interface ReplayProcess {
  managed: Managed;
  /** its first line: what it serves */
  served: string;
  /** the environment it prints for `make start` (MARKET_SOURCE, EXCHANGES, EXCHANGE_URLS, ECB_URL, COINPAPRIKA_URL, …) */
  env: Record<string, string>;
}

/** Starts the replay of `coins` coins (dev/venues/serve.ts, `args` added) and waits for the environment line it prints. */
export async function startReplay(coins: number, logDir: string, registry: Set<Managed>, args: string[] = [], timeoutMs = 300_000): Promise<ReplayProcess> {
  const managed = new Managed('replay', ['dev/venues/serve.ts', '--port', String(await freePort()), '--coins', String(coins), ...args], process.env, logDir, registry);
  managed.start();
  const started = Date.now();
  for (;;) {
    if (!managed.running) throw new Error(`the replay exited:\n${tail(managed.log)}`);
    const lines = readFileSync(managed.log, 'utf8').split('\n');
    const line = lines.find((one) => one.endsWith(' make start'));
    if (line) {
      const env = Object.fromEntries(line.replace(/ make start$/, '').split(' ').map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
      return { managed, served: lines[0]!, env };
    }
    if (Date.now() - started > timeoutMs) throw new Error(`the replay printed no environment in ${timeoutMs} ms:\n${tail(managed.log)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
