// PostgreSQL v3 wire-protocol framing: just enough for the multiplexer to cut client
// streams into whole messages and to speak the few server messages it writes itself.

export const PROTOCOL_V3 = 196608;
export const SSL_REQUEST = 80877103;
export const GSSENC_REQUEST = 80877104;
export const CANCEL_REQUEST = 80877102;

export interface Message {
  type: string;
  /** the whole message, type byte and length included */
  bytes: Buffer;
}

/** Splits whole typed messages off the front of `buffer`; returns them and the unread rest. */
export function splitMessages(buffer: Buffer): { messages: Message[]; rest: Buffer } {
  const messages: Message[] = [];
  let offset = 0;
  while (buffer.length - offset >= 5) {
    const length = buffer.readInt32BE(offset + 1);
    if (length < 4) throw new Error('malformed message length');
    const end = offset + 1 + length;
    if (end > buffer.length) break;
    messages.push({ type: String.fromCharCode(buffer[offset]!), bytes: buffer.subarray(offset, end) });
    offset = end;
  }
  return { messages, rest: buffer.subarray(offset) };
}

/** Reads the untyped startup-phase packet (SSLRequest, StartupMessage, CancelRequest). */
export function splitStartupPacket(
  buffer: Buffer,
): { code: number; params: Record<string, string>; cancel?: { pid: number; secret: number }; rest: Buffer } | null {
  if (buffer.length < 8) return null;
  const length = buffer.readInt32BE(0);
  if (length < 8 || length > 10_000) throw new Error('malformed startup packet');
  if (buffer.length < length) return null;
  const code = buffer.readInt32BE(4);
  const params: Record<string, string> = {};
  if (code === PROTOCOL_V3) {
    const fields = buffer.subarray(8, length).toString('utf8').split('\0');
    for (let i = 0; i + 1 < fields.length && fields[i] !== ''; i += 2) params[fields[i]!] = fields[i + 1]!;
  }
  const cancel = code === CANCEL_REQUEST && length >= 16 ? { pid: buffer.readInt32BE(8), secret: buffer.readInt32BE(12) } : undefined;
  return { code, params, cancel, rest: buffer.subarray(length) };
}

export function message(type: string, body: Buffer = Buffer.alloc(0)): Buffer {
  const out = Buffer.alloc(5 + body.length);
  out.write(type, 0, 'latin1');
  out.writeInt32BE(4 + body.length, 1);
  body.copy(out, 5);
  return out;
}

export const cstring = (text: string) => Buffer.from(text + '\0', 'utf8');

export const query = (text: string) => message('Q', cstring(text));
export const sync = () => message('S');

/**
 * A Parse, Bind, Describe or Close message with its prepared statement's name (when it has one:
 * the unnamed statement is left alone) in the namespace `prefix`; returns the message and the
 * name it now carries (null for the unnamed statement and for portals). Portals are not renamed:
 * a named portal lives only as long as its transaction, which one client holds.
 */
export function namespacedStatement(msg: Message, prefix: string): { bytes: Buffer; name: string | null } {
  const body = msg.bytes.subarray(5);
  let start: number;
  if (msg.type === 'P') start = 0;
  else if (msg.type === 'B') start = body.indexOf(0) + 1; // after the portal's name
  else if ((msg.type === 'D' || msg.type === 'C') && body[0] === 0x53 /* S */) start = 1;
  else return { bytes: msg.bytes, name: null };
  const end = body.indexOf(0, start);
  if (end <= start) return { bytes: msg.bytes, name: null };
  const name = prefix + body.subarray(start, end).toString('utf8');
  const bytes = message(msg.type, Buffer.concat([body.subarray(0, start), Buffer.from(name, 'utf8'), body.subarray(end)]));
  return { bytes, name };
}

/** Close (statement) messages for these names, and the Sync that runs them. */
export const closeStatements = (names: string[]) =>
  Buffer.concat([...names.map((name) => message('C', Buffer.concat([Buffer.from('S'), cstring(name)]))), sync()]);

/** The SQL text of a Query or Parse message, for the lexical checks the multiplexer makes. */
export function sqlText(msg: Message): string | null {
  if (msg.type === 'Q') return msg.bytes.subarray(5, msg.bytes.length - 1).toString('utf8');
  if (msg.type === 'P') {
    const body = msg.bytes.subarray(5);
    const nameEnd = body.indexOf(0);
    const textEnd = body.indexOf(0, nameEnd + 1);
    return body.subarray(nameEnd + 1, textEnd).toString('utf8');
  }
  return null;
}

export function authenticationOk(): Buffer {
  const body = Buffer.alloc(4);
  return message('R', body);
}

export function parameterStatus(name: string, value: string): Buffer {
  return message('S', Buffer.concat([cstring(name), cstring(value)]));
}

export function backendKeyData(pid: number, secret: number): Buffer {
  const body = Buffer.alloc(8);
  body.writeInt32BE(pid, 0);
  body.writeInt32BE(secret | 0, 4);
  return message('K', body);
}

export function readyForQuery(status: 'I' | 'T' | 'E'): Buffer {
  return message('Z', Buffer.from(status, 'latin1'));
}

/** CopyInResponse in text format; the column count is not known before the COPY runs. */
export function copyInResponse(): Buffer {
  return message('G', Buffer.from([0, 0, 0]));
}

export function errorResponse(severity: 'ERROR' | 'FATAL', sqlstate: string, text: string): Buffer {
  return message(
    'E',
    Buffer.concat([
      Buffer.from('S'), cstring(severity),
      Buffer.from('V'), cstring(severity),
      Buffer.from('C'), cstring(sqlstate),
      Buffer.from('M'), cstring(text),
      Buffer.from([0]),
    ]),
  );
}

/** Channel and payload of a NotificationResponse. */
export function notificationChannel(msg: Message): string {
  const body = msg.bytes.subarray(9);
  return body.subarray(0, body.indexOf(0)).toString('utf8');
}

/** The status byte of a ReadyForQuery message. */
export const transactionStatus = (msg: Message) => String.fromCharCode(msg.bytes[5]!) as 'I' | 'T' | 'E';

/** Name and value of a ParameterStatus message. */
export function parameterStatusOf(msg: Message): [string, string] {
  const fields = msg.bytes.subarray(5).toString('utf8').split('\0');
  return [fields[0]!, fields[1] ?? ''];
}

/** The text columns of a DataRow (null for SQL NULL). */
export function dataRowValues(msg: Message): (string | null)[] {
  const values: (string | null)[] = [];
  const count = msg.bytes.readInt16BE(5);
  let offset = 7;
  for (let i = 0; i < count; i++) {
    const length = msg.bytes.readInt32BE(offset);
    offset += 4;
    if (length < 0) values.push(null);
    else {
      values.push(msg.bytes.subarray(offset, offset + length).toString('utf8'));
      offset += length;
    }
  }
  return values;
}

/** Replaces the message text of every ErrorResponse with this SQLSTATE in a reply. */
export function rewriteErrors(reply: Buffer, sqlstate: string, text: string): Buffer {
  const { messages } = splitMessages(reply);
  return Buffer.concat(
    messages.map((msg) => {
      if (msg.type !== 'E') return msg.bytes;
      const fields = msg.bytes.subarray(5, msg.bytes.length - 1).toString('utf8').split('\0').filter(Boolean);
      if (!fields.includes(`C${sqlstate}`)) return msg.bytes;
      const body = fields.map((field) => (field.startsWith('M') ? `M${text}` : field)).join('\0');
      return message('E', Buffer.concat([Buffer.from(body, 'utf8'), Buffer.from([0, 0])]));
    }),
  );
}
