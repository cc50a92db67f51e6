// A transaction-level connection multiplexer (PgBouncer's "transaction mode") in front of a
// single-backend database. PGlite is one session: many clients share it, one transaction at a
// time. A client owns the backend from the first message it sends until a ReadyForQuery with
// status `I` ends its transaction; a client that goes away while it owns the backend is rolled
// back so that it leaves no lock and no half-written data.
//
// One client must not stall the others for long: an outside client's batch (anything but the
// service's own connections) is cancelled after `statementTimeoutMs` (see canceller.ts for how,
// and for what cannot be cancelled), a transaction left idle is cut off after
// `idleInTransactionTimeoutMs`. A running batch cannot be stopped from outside (a WASM backend
// has no interrupt): a client that disconnects or sends a CancelRequest while its batch runs is
// dealt with when the batch returns, so such a batch is bounded by the time-out; a batch still
// waiting for the backend is dropped (disconnect) or cancelled at once when it gets there
// (CancelRequest). The backend runs on another thread (server.ts), so start-ups are answered
// and messages queued while a batch runs.
//
// A non-superuser client (the analyst) runs under SET SESSION AUTHORIZATION and may not leave
// it: statements that could are refused (guard.ts) with an ERROR 42501, after which the
// connection is closed, and after each of its batches the session and current user are checked again; on
// a mismatch the reply is discarded, the transaction rolled back and the client disconnected.
//
// Named prepared statements work, as behind PgBouncer with max_prepared_statements: every
// client's statement names are put in a namespace of its own (`c<id>_`) in its Parse, Bind,
// Describe and Close messages, so that clients sharing the one session never meet each other's
// statements, and those a client leaves behind are closed when it goes. (The SQL commands
// PREPARE, EXECUTE and DEALLOCATE would reach every namespace: guard.ts refuses them to the analyst.)
import type { Socket } from 'node:net';
import {
  CANCEL_REQUEST, GSSENC_REQUEST, PROTOCOL_V3, SSL_REQUEST,
  authenticationOk, backendKeyData, copyInResponse, errorResponse, notificationChannel,
  dataRowValues, parameterStatus, parameterStatusOf, query, readyForQuery, splitMessages, splitStartupPacket,
  closeStatements, namespacedStatement, sqlText, sync, transactionStatus, type Message,
} from './protocol.ts';
import { refusal } from './guard.ts';

/**
 * Runs a batch of whole frontend messages on the backend and returns its whole reply. With a
 * `timeoutMs` the batch is cancelled (SQLSTATE 57014) after that long, or at once with 0.
 */
export type Backend = (batch: Buffer, timeoutMs?: number) => Promise<Uint8Array>;

export interface MultiplexerOptions {
  /** A client holding a transaction open this long without sending anything is disconnected. */
  idleInTransactionTimeoutMs: number;
  /** Longest batch of an outside client; 0: none. */
  statementTimeoutMs?: number;
  /** application_name values of the service's own connections, exempt from the time-out when they log in as the superuser */
  serviceApplicationNames?: string[];
  /** The role the backend runs as when a client does not ask for another one. */
  superuser: string;
  /** ParameterStatus values sent to every client at startup. */
  serverParameters: Record<string, string>;
  log?: (line: string) => void;
}

// COPY ... FROM STDIN must reach PGlite in one call together with its data: the backend cannot
// wait for more input between calls. The multiplexer collects the data first.
const COPY_FROM_STDIN = /^\s*copy\b[\s\S]*\bfrom\s+stdin\b/i;
/** Messages that may name a prepared statement. */
const STATEMENT_MESSAGES = new Set(['P', 'B', 'D', 'C']);
const LISTEN = /\b(un)?listen\s+("(?:[^"]|"")+"|[\w$]+|\*)/gi;

interface Unit {
  bytes: Buffer;
  /** a COPY FROM STDIN with its data: the client has already been sent a CopyInResponse */
  copy: boolean;
  /** the startup reply, held back until the client's role has been checked on the backend */
  startup?: Buffer;
  /** a refused statement: the client is told why and closed when its turn comes */
  refusal?: string;
}

class Client {
  inbox: Buffer = Buffer.alloc(0);
  started = false;
  role = '';
  /** a connection of the service itself: no statement time-out */
  service = false;
  secret = 0;
  /** a CancelRequest named this client: its next batch is cancelled */
  cancelRequested = false;
  pending: Unit[] = [];
  copyCollect: Buffer[] | null = null;
  channels = new Set<string>();
  /** its named prepared statements, as named on the backend */
  statements = new Set<string>();
  closed = false;
  idleTimer: NodeJS.Timeout | null = null;
  readonly id: number;
  readonly socket: Socket;
  /** where its statement names live on the backend: a digit can never end it, so no two overlap */
  readonly namespace: string;
  constructor(id: number, socket: Socket) {
    this.id = id;
    this.socket = socket;
    this.namespace = `c${id}_`;
  }

  send(bytes: Buffer | Uint8Array) {
    if (!this.closed && bytes.length > 0) this.socket.write(bytes);
  }
}

function channelName(token: string): string {
  return token.startsWith('"') ? token.slice(1, -1).replaceAll('""', '"') : token.toLowerCase();
}

export class Multiplexer {
  private owner: Client | null = null;
  /** clients with work to run, in arrival order */
  private waiting: Client[] = [];
  /** named statements of departed clients, closed when the backend is next free */
  private orphanedStatements: string[] = [];
  private busy = false;
  private backendRole: string;
  private nextId = 1;
  readonly clients = new Set<Client>();
  private readonly backend: Backend;
  private readonly options: MultiplexerOptions;

  constructor(backend: Backend, options: MultiplexerOptions) {
    this.backend = backend;
    this.options = options;
    this.backendRole = options.superuser;
  }

  /** Number of connected clients, for tests and status output. */
  get connections() {
    return this.clients.size;
  }

  accept(socket: Socket) {
    const client = new Client(this.nextId++, socket);
    this.clients.add(client);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(client, chunk));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.disconnect(client));
  }

  private receive(client: Client, chunk: Buffer) {
    client.inbox = client.inbox.length ? Buffer.concat([client.inbox, chunk]) : chunk;
    try {
      if (!client.started && !this.startup(client)) return;
      const { messages, rest } = splitMessages(client.inbox);
      client.inbox = rest;
      for (const msg of messages) {
        if (client.closed) break;
        this.take(client, msg);
      }
    } catch (error) {
      this.options.log?.(`client ${client.id}: ${(error as Error).message}`);
      client.send(errorResponse('FATAL', '08P01', 'protocol violation'));
      client.socket.destroy();
      return;
    }
    this.schedule();
  }

  /** Handles the untyped startup phase; returns true once the client may send queries. */
  private startup(client: Client): boolean {
    for (;;) {
      const packet = splitStartupPacket(client.inbox);
      if (!packet) return false;
      client.inbox = packet.rest;
      if (packet.code === SSL_REQUEST || packet.code === GSSENC_REQUEST) {
        client.send(Buffer.from('N'));
        continue;
      }
      if (packet.code === CANCEL_REQUEST) {
        if (packet.cancel) this.cancel(packet.cancel.pid, packet.cancel.secret);
        client.socket.destroy();
        return false;
      }
      if (packet.code !== PROTOCOL_V3) throw new Error(`unsupported protocol ${packet.code}`);
      client.role = packet.params.user || this.options.superuser;
      client.service = client.role === this.options.superuser &&
        (this.options.serviceApplicationNames ?? []).includes(packet.params.application_name ?? '');
      client.secret = Math.floor(Math.random() * 2 ** 31);
      client.started = true;
      const parameters = { ...this.options.serverParameters, application_name: packet.params.application_name ?? '' };
      const reply = Buffer.concat([
          authenticationOk(),
          ...Object.entries(parameters).map(([name, value]) => parameterStatus(name, value)),
          parameterStatus('session_authorization', client.role),
          parameterStatus('is_superuser', client.role === this.options.superuser ? 'on' : 'off'),
          backendKeyData(client.id, client.secret),
          readyForQuery('I'),
      ]);
      // Another role is checked when the client first gets the backend, as a server would at login.
      if (client.role === this.options.superuser) client.send(reply);
      else this.enqueue(client, { bytes: Buffer.alloc(0), copy: false, startup: reply });
      return true;
    }
  }

  private take(client: Client, msg: Message) {
    if (client.copyCollect) {
      client.copyCollect.push(msg.bytes);
      if (msg.type === 'c' || msg.type === 'f') {
        this.enqueue(client, { bytes: Buffer.concat(client.copyCollect), copy: true });
        client.copyCollect = null;
      }
      return;
    }
    if (msg.type === 'X') {
      client.socket.end();
      return;
    }
    const text = sqlText(msg);
    if (client.role !== this.options.superuser) {
      // FunctionCall names a function by oid: nothing to check, so nothing for these clients.
      const why = msg.type === 'F' ? 'the FunctionCall message' : text === null ? null : refusal(text);
      if (why) {
        // In turn, after the replies to what the client sent before (its startup reply first).
        const refusal = `permission denied for role "${client.role}" on the embedded database: ${why}`;
        client.copyCollect = null;
        this.enqueue(client, { bytes: Buffer.alloc(0), copy: false, refusal });
        client.socket.pause();
        return;
      }
    }
    if (text !== null) this.trackListen(client, text);
    if (msg.type === 'Q' && text !== null && COPY_FROM_STDIN.test(text)) {
      client.send(copyInResponse());
      client.copyCollect = [msg.bytes];
      return;
    }
    this.enqueue(client, { bytes: this.namespaced(client, msg), copy: false });
  }

  /** The message with its statement's name in the client's namespace, keeping count of what it prepared. */
  private namespaced(client: Client, msg: Message): Buffer {
    if (!STATEMENT_MESSAGES.has(msg.type)) return msg.bytes;
    const { bytes, name } = namespacedStatement(msg, client.namespace);
    if (name !== null && msg.type === 'P') client.statements.add(name);
    else if (name !== null && msg.type === 'C') client.statements.delete(name);
    return bytes;
  }

  /** Ends a client that tried to leave its role; the disconnect rolls back what it holds. */
  private refuse(client: Client, text: string) {
    this.options.log?.(`client ${client.id} (${client.role}) refused: ${text}`);
    // An ERROR closed by a ReadyForQuery, which drivers wait for before they report the error;
    // then the connection is closed (end, not destroy: the reply must be flushed first).
    client.send(Buffer.concat([errorResponse('ERROR', '42501', text), readyForQuery('I')]));
    client.pending = [];
    client.socket.end(() => client.socket.destroy());
    this.disconnect(client);
  }

  /** A CancelRequest: the named client's batch, waiting or (seen too late) running, is cancelled. */
  private cancel(pid: number, secret: number) {
    for (const client of this.clients) {
      if (client.id !== pid || client.secret !== secret) continue;
      if (client.pending.length > 0) client.cancelRequested = true;
    }
  }

  private trackListen(client: Client, text: string) {
    for (const match of text.matchAll(LISTEN)) {
      const channel = channelName(match[2]!);
      if (!match[1]) client.channels.add(channel);
      else if (channel === '*') client.channels.clear();
      else client.channels.delete(channel);
    }
  }

  private enqueue(client: Client, unit: Unit) {
    client.pending.push(unit);
    if (client.idleTimer) {
      clearTimeout(client.idleTimer);
      client.idleTimer = null;
    }
    if (this.owner !== client && !this.waiting.includes(client)) this.waiting.push(client);
  }

  private schedule() {
    if (this.busy) return;
    if (!this.owner && this.orphanedStatements.length > 0) {
      void this.closeOrphanedStatements();
      return;
    }
    if (!this.owner) {
      const next = this.waiting.shift();
      if (!next) return;
      this.owner = next;
    }
    const client = this.owner;
    if (client.pending.length === 0) return;
    void this.run(client);
  }

  private async run(client: Client) {
    this.busy = true;
    let status: 'I' | 'T' | 'E' | null = null;
    try {
      if (client.role !== this.backendRole) {
        const switched = await this.setRole(client.role);
        if (!switched) {
          client.send(errorResponse('FATAL', '28000', `role "${client.role}" does not exist`));
          client.pending = [];
          client.socket.destroy();
          status = 'I';
          return;
        }
      }
      if (client.pending[0]?.startup) {
        client.send(client.pending.shift()!.startup!);
        status = 'I';
        return;
      }
      if (client.pending[0]?.refusal) {
        // status stays null: the release that follows rolls back whatever the client holds.
        this.refuse(client, client.pending[0].refusal);
        return;
      }
      // Whole units up to and including the first COPY (its CopyInResponse must be stripped),
      // and before any refused statement.
      const copyAt = client.pending.findIndex((unit) => unit.copy);
      const refusedAt = client.pending.findIndex((unit) => unit.refusal);
      const end = Math.min(copyAt === -1 ? Infinity : copyAt + 1, refusedAt === -1 ? Infinity : refusedAt);
      const units = client.pending.splice(0, end === Infinity ? client.pending.length : end);
      const timeoutMs = client.cancelRequested ? 0 : this.timeoutFor(client);
      client.cancelRequested = false;
      const reply = Buffer.from(await this.backend(Buffer.concat(units.map((unit) => unit.bytes)), timeoutMs));
      if (client.role !== this.options.superuser && !(await this.stillInRole(client, reply))) {
        await this.backend(Buffer.concat([sync(), query('rollback')]));
        this.backendRole = '';
        await this.setRole(this.options.superuser);
        this.options.log?.(`client ${client.id} (${client.role}) left its role: reply discarded, rolled back, disconnected`);
        this.refuse(client, `permission denied: role "${client.role}" may not change its role`);
        status = 'I';
        return;
      }
      status = this.deliver(client, reply, units.some((unit) => unit.copy));
    } catch (error) {
      this.options.log?.(`backend error for client ${client.id}: ${(error as Error).message}`);
      client.send(errorResponse('FATAL', 'XX000', 'embedded database failure'));
      client.socket.destroy();
    } finally {
      this.busy = false;
      this.afterRun(client, status);
    }
  }

  private timeoutFor(client: Client): number | undefined {
    const limit = this.options.statementTimeoutMs ?? 0;
    return client.service || limit <= 0 ? undefined : limit;
  }

  /**
   * Whether the backend still runs as the client's role after its batch: no ParameterStatus in
   * the reply says otherwise, and, when the transaction state lets a query run, session_user
   * and current_user say so.
   */
  private async stillInRole(client: Client, reply: Buffer): Promise<boolean> {
    let status: 'I' | 'T' | 'E' | null = null;
    for (const msg of splitMessages(reply).messages) {
      if (msg.type === 'S') {
        const [name, value] = parameterStatusOf(msg);
        if (name === 'session_authorization' && value !== client.role) return false;
        if (name === 'is_superuser' && value !== 'off') return false;
      } else if (msg.type === 'Z') status = transactionStatus(msg);
      else status = null;
    }
    if (status !== 'I' && status !== 'T') return true;
    const { messages } = splitMessages(Buffer.from(await this.backend(query('select session_user, current_user'))));
    const row = messages.find((msg) => msg.type === 'D');
    return row !== undefined && dataRowValues(row).every((name) => name === client.role);
  }

  /** Forwards a reply to its client, routing notifications to their listeners; returns the last status. */
  private deliver(client: Client, reply: Buffer, copy: boolean): 'I' | 'T' | 'E' | null {
    const { messages } = splitMessages(reply);
    let status: 'I' | 'T' | 'E' | null = null;
    const forward: Buffer[] = [];
    for (const msg of messages) {
      if (msg.type === 'A') {
        this.notify(msg);
        continue;
      }
      if (copy && msg.type === 'G') continue;
      // Only a ReadyForQuery that ends the reply frees the backend: messages after it belong
      // to an extended-protocol batch still open (Parse/Describe/Flush, awaiting its Bind).
      if (msg.type === 'Z') status = transactionStatus(msg);
      else if (msg.type !== 'N' && msg.type !== 'S') status = null;
      forward.push(msg.bytes);
    }
    client.send(Buffer.concat(forward));
    return status;
  }

  private notify(msg: Message) {
    const channel = notificationChannel(msg);
    for (const listener of this.clients) if (listener.channels.has(channel)) listener.send(msg.bytes);
  }

  private afterRun(client: Client, status: 'I' | 'T' | 'E' | null) {
    if (client.closed) {
      void this.release(client, status);
      return;
    }
    if (status === 'I') {
      this.owner = null;
      if (client.pending.length > 0) this.waiting.push(client);
    } else if (client.pending.length === 0) {
      this.armIdleTimer(client);
    }
    this.schedule();
  }

  private armIdleTimer(client: Client) {
    const timeout = this.options.idleInTransactionTimeoutMs;
    if (timeout <= 0) return;
    client.idleTimer = setTimeout(() => {
      client.send(
        errorResponse('FATAL', '25P03', 'terminating connection due to idle-in-transaction timeout'),
      );
      client.socket.destroy();
    }, timeout);
    client.idleTimer.unref();
  }

  private disconnect(client: Client) {
    if (client.closed) return;
    client.closed = true;
    if (client.idleTimer) clearTimeout(client.idleTimer);
    this.clients.delete(client);
    this.waiting = this.waiting.filter((other) => other !== client);
    this.orphanedStatements.push(...client.statements);
    client.statements.clear();
    // An owner in the middle of a batch is released when the batch returns (afterRun).
    if (this.owner === client && !this.busy) void this.release(client, null);
    this.schedule();
  }

  /** Closes the statements departed clients left (on a free backend: no transaction is open). */
  private async closeOrphanedStatements() {
    this.busy = true;
    const names = this.orphanedStatements.splice(0);
    try {
      await this.backend(closeStatements(names));
    } catch (error) {
      this.options.log?.(`closing ${names.length} prepared statements failed: ${(error as Error).message}`);
    } finally {
      this.busy = false;
      this.schedule();
    }
  }

  /** Ends whatever the departed owner left open, then frees the backend. */
  private async release(client: Client, status: 'I' | 'T' | 'E' | null) {
    if (this.owner !== client) return;
    if (status !== 'I') {
      this.busy = true;
      try {
        // Sync closes an unfinished extended-protocol batch; ROLLBACK ends any transaction.
        await this.backend(Buffer.concat([sync(), query('rollback')]));
      } catch (error) {
        this.options.log?.(`rollback after disconnect failed: ${(error as Error).message}`);
      } finally {
        this.busy = false;
      }
    }
    this.owner = null;
    this.schedule();
  }

  private async setRole(role: string): Promise<boolean> {
    // A session authorization, unlike SET ROLE, cannot be left by RESET ROLE or SET ROLE. The
    // superuser is named rather than RESET: PGlite's reset value follows the last SET.
    const statement = `reset role; set session authorization "${role.replaceAll('"', '""')}"`;
    const { messages } = splitMessages(Buffer.from(await this.backend(query(statement))));
    if (messages.some((msg) => msg.type === 'E')) return false;
    this.backendRole = role;
    return true;
  }
}
