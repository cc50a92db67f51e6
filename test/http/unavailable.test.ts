// A database that is down, restarting or unreachable is a 503 service_unavailable with
// Retry-After, never a 500. The errors are real postgres.js errors: from a closed loopback port
// and from a loopback server speaking just enough of the protocol to fail the way a server does.
import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import test from 'ava';
import postgres from 'postgres';
import { loadConfig } from '../../src/config.ts';
import { authenticationOk, errorResponse, readyForQuery } from '../../src/db/embedded/protocol.ts';
import { createApp } from '../../src/http/app.ts';
import { served } from '../../src/service.ts';
import { toApiError } from '../../src/http/errors.ts';
import { captureLog } from '../helpers/log.ts';
import { sleep } from '../../dev/wait.ts';

const servers: Server[] = [];
test.after.always(() => servers.forEach((server) => server.close()));

async function listen(onConnection: (socket: Socket) => void): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    onConnection(socket);
  });
  servers.push(server);
  server.on('close', () => sockets.forEach((socket) => socket.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The error postgres.js rejects `select 1` with against that port. */
async function errorFrom(port: number, options: postgres.Options<{}> = {}): Promise<unknown> {
  // fetch_types off: the first query after the handshake is then this one.
  const sql = postgres({ host: '127.0.0.1', port, max: 1, connect_timeout: 2, fetch_types: false, onnotice: () => {}, ...options });
  try {
    await sql`select 1`;
    throw new Error('the query succeeded');
  } catch (error) {
    return error;
  } finally {
    await sql.end({ timeout: 0 });
  }
}

/** A server that fails the startup with one ErrorResponse, as a database shutting down or broken does. */
const failingStartup = (severity: 'ERROR' | 'FATAL', sqlstate: string, text: string) =>
  listen((socket) => socket.once('data', () => socket.end(errorResponse(severity, sqlstate, text))));

/** A server that accepts the session, then answers the first query with `reply` (or nothing). */
const failingQuery = (reply: (socket: Socket) => void) =>
  listen((socket) => {
    socket.once('data', () => {
      socket.write(Buffer.concat([authenticationOk(), readyForQuery('I')]));
      socket.once('data', () => reply(socket));
    });
  });

function assertUnavailable(t: import('ava').ExecutionContext, error: unknown, expectedCode: string | string[]) {
  const code = (error as { code?: string }).code!;
  t.true([expectedCode].flat().includes(code), `the error postgres.js really raises: ${code}`);
  const apiError = toApiError(error);
  t.is(apiError.status, 503, code);
  t.is(apiError.code, 'service_unavailable');
  t.regex(apiError.message, /database is unavailable/);
  t.deepEqual(apiError.headers, { 'Retry-After': '5' });
}

test('connection refused', async (t) => {
  assertUnavailable(t, await errorFrom(await closedPort()), 'ECONNREFUSED');
});

test('connection reset mid-query', async (t) => {
  assertUnavailable(t, await errorFrom(await failingQuery((socket) => socket.resetAndDestroy())), 'ECONNRESET');
});

test('connection closed mid-query', async (t) => {
  assertUnavailable(t, await errorFrom(await failingQuery((socket) => socket.destroy())), 'CONNECTION_CLOSED');
});

test('connect time-out', async (t) => {
  assertUnavailable(t, await errorFrom(await listen(() => {}), { connect_timeout: 1 }), 'CONNECT_TIMEOUT');
});

test('a pool that was ended, and one destroyed with a query in flight', async (t) => {
  const ended = postgres({ host: '127.0.0.1', port: await closedPort(), max: 1, onnotice: () => {} });
  await ended.end();
  assertUnavailable(t, await ended`select 1`.catch((error: unknown) => error), 'CONNECTION_ENDED');
  const destroyed = postgres({ host: '127.0.0.1', port: await failingQuery(() => {}), max: 1, fetch_types: false, onnotice: () => {} });
  const pending = destroyed`select 1`.catch((error: unknown) => error);
  await sleep(200);
  await destroyed.end({ timeout: 0 });
  assertUnavailable(t, await pending, 'CONNECTION_DESTROYED');
});

test('SQLSTATE class 08, 57P01-57P03 and the embedded multiplexer’s failure', async (t) => {
  for (const [sqlstate, text] of [
    ['08006', 'connection failure'],
    ['08001', 'could not connect'],
    ['08P01', 'protocol violation'],
    ['57P01', 'terminating connection due to administrator command'],
    ['57P02', 'terminating connection due to crash of another server process'],
    ['57P03', 'the database system is starting up'],
    ['XX000', 'embedded database failure'],
  ] as const) {
    assertUnavailable(t, await errorFrom(await failingStartup('FATAL', sqlstate, text)), sqlstate);
  }
  // Sent in answer to a query, as a server being shut down does (postgres.js may report the close).
  const shutdown = await failingQuery((socket) => socket.end(errorResponse('FATAL', '57P01', 'terminating connection due to administrator command')));
  assertUnavailable(t, await errorFrom(shutdown), ['57P01', 'CONNECTION_CLOSED']);
});

test('other database errors are not mistaken for an outage', async (t) => {
  const internal = await errorFrom(await failingStartup('FATAL', 'XX000', 'something else broke'));
  t.is(toApiError(internal).status, 500, 'an XX000 that is not the multiplexer’s');
  const undefinedTable = await errorFrom(await failingQuery((socket) => socket.write(Buffer.concat([errorResponse('ERROR', '42P01', 'relation does not exist'), readyForQuery('I')]))));
  t.is(toApiError(undefinedTable).status, 500);
  const duplicate = await errorFrom(await failingQuery((socket) => socket.write(Buffer.concat([errorResponse('ERROR', '23505', 'duplicate key'), readyForQuery('I')]))));
  t.is(toApiError(duplicate).status, 409);
  t.is(toApiError(Object.assign(new Error('not a database'), { code: 'ENOENT' })).status, 500);
});

test('the API answers 503 in the envelope with Retry-After and a request id while the database is unreachable', async (t) => {
  const sql = postgres({ host: '127.0.0.1', port: await closedPort(), max: 1, onnotice: () => {} });
  const config = loadConfig({ LOG_REQUESTS: 'false', WORKER: 'off', MARKET_SOURCE: 'none' });
  const log = captureLog();
  const server = createHttpServer(createApp({ sql, config }, { logger: log.logger }, served).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/ping`, { headers: { authorization: `Bearer mdk_${'x'.repeat(43)}` } });
    t.is(response.status, 503);
    t.is(response.headers.get('retry-after'), '5');
    t.truthy(response.headers.get('x-request-id'));
    const body = await response.json();
    t.is(body.error.code, 'service_unavailable');
    t.deepEqual(body.error.details, {});
    t.false(JSON.stringify(body).includes('ECONNREFUSED'), 'no internals in the response');
    t.true(log.text().includes('ECONNREFUSED'), 'the cause is logged for the operator');
  } finally {
    server.close();
    await sql.end({ timeout: 0 });
  }
});
