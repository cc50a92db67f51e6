// Does the database answer at all? A health check whose query found no answer in time must tell a
// database that is busy (the embedded one behind a long statement of the first-start backfill, a
// server under load) from one that is down: here, whether it answers a new connection's start-up
// packet, which PostgreSQL's postmaster and the embedded multiplexer both do while queries run.
import { connect } from 'node:net';
import { cstring, PROTOCOL_V3 } from './embedded/protocol.ts';

/** true: an authentication request or an error came back; false: refused, reset or silent for `ms`. */
export function databaseAnswers(url: string, ms: number): Promise<boolean> {
  const target = new URL(url);
  const host = target.searchParams.get('host') ?? (decodeURIComponent(target.hostname) || 'localhost');
  const port = Number(target.port || 5432);
  const user = decodeURIComponent(target.username) || 'postgres';
  const database = decodeURIComponent(target.pathname.slice(1)) || user;
  const body = Buffer.concat([Buffer.alloc(4), cstring('user'), cstring(user), cstring('database'), cstring(database), cstring('')]);
  body.writeInt32BE(PROTOCOL_V3, 0);
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length + 4, 0);
  return new Promise((resolve) => {
    // a host that is a directory is a Unix socket's, as libpq reads it
    const socket = host.startsWith('/') ? connect(`${host}/.s.PGSQL.${port}`) : connect(port, host);
    const done = (answered: boolean) => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(ms, () => done(false));
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
    socket.once('connect', () => socket.write(Buffer.concat([length, body])));
    // 'R' asks for authentication (or says it is done), 'E' refuses: either way, it answered
    socket.once('data', (data) => done(data[0] === 0x52 || data[0] === 0x45));
  });
}
