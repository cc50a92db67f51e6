// A real webhook receiver on 127.0.0.1 for the tests and benches: answers each request with the next scripted
// reply (the last one repeats) and records what arrived, raw body included.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { until } from './wait.ts';

export interface Received {
  /** Date.now() on arrival */
  at: number;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: { id: string; type: string; created_at: string; test: boolean; data: Record<string, unknown> };
}

/** A status to answer with (and a body), or 'hang' to never answer (a time-out, or a worker killed meanwhile). */
export type Reply = number | { status: number; body: string } | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  /** replaces the script; the last reply repeats */
  reply(...replies: Reply[]): void;
  /** resolves once `count` requests have arrived in all */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(...initial: Reply[]): Promise<Receiver> {
  let script: Reply[] = initial.length ? initial : [204];
  let index = 0;
  const received: Received[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      received.push({ at: Date.now(), headers: request.headers, rawBody, body: JSON.parse(rawBody) });
      const reply = script[Math.min(index++, script.length - 1)]!;
      if (reply === 'hang') hanging.add(response);
      else if (typeof reply === 'number') response.writeHead(reply).end();
      else response.writeHead(reply.status, { 'content-type': 'text/plain; charset=utf-8' }).end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  return {
    url,
    received,
    reply(...replies) {
      script = replies;
      index = 0;
    },
    async waitFor(count, timeoutMs = 15_000) {
      await until(() => `${count} requests (the receiver got ${received.length})`, () => received.length >= count, { timeoutMs, everyMs: 20 });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
