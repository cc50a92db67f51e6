// ws (a dependency of ccxt) ships no types and @types/ws is not installed: what the tests use of it.
declare module 'ws' {
  import type { IncomingMessage } from 'node:http';
  import type { Duplex } from 'node:stream';
  export class WebSocket {
    send(data: string): void;
    terminate(): void;
    on(event: 'message', listener: (data: Buffer) => void): this;
    on(event: 'close', listener: () => void): this;
  }
  export class WebSocketServer {
    constructor(options: { noServer: true });
    handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, callback: (ws: WebSocket) => void): void;
  }
}
