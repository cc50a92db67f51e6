// A ccxt pro WebSocket client whose connection closed under it (the venue or the network went away):
// its next send fails, and ccxt pro 4.5.84 sends throttled subscriptions without handling that
// promise. Through the holder's prepared instances the failure reaches the client's watches
// (onError), never the process as an unhandled rejection (which ended the chaos run's holders).
import test from 'ava';
import { WebSocketServer } from 'ws';
import type { AddressInfo } from 'node:net';
import { prepareStreams } from '../../src/sources/stream/clients.ts';
import { until } from '../../dev/wait.ts';

test('a send on a connection that closed fails the client\'s watches, not the process', async (t) => {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  // the server drops every connection once it opened
  server.on('connection', (socket) => socket.terminate());
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', record);
  const { default: ccxt } = await import('ccxt');
  const exchange = new ccxt.pro.binance();
  try {
    prepareStreams(exchange, undefined, 'binance');
    // a plain ws:// URL needs ccxt's http agent, as the feeds load it for a loopback replay
    await (exchange as unknown as { loadHttpProxyAgent(): Promise<unknown> }).loadHttpProxyAgent();
    const client = exchange.client(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`) as unknown as {
      connect(): Promise<unknown>;
      send(message: unknown): Promise<unknown>;
      onError(error: Error): void;
      connection: { readyState: number };
    };
    const errors: Error[] = [];
    const onError = client.onError.bind(client);
    client.onError = (error) => {
      errors.push(error);
      onError(error);
    };
    await client.connect().catch(() => {});
    await until('the server to close the connection', () => client.connection.readyState === 3, { timeoutMs: 5_000, everyMs: 20 });
    // as ccxt pro sends a throttled subscription: the send's promise dropped
    void Promise.resolve().then(() => {
      void client.send({ method: 'SUBSCRIBE', params: ['btcusdt@kline_1m'], id: 1 });
    });
    await until('the failed send to reach the client', () => errors.length > 0, { timeoutMs: 5_000, everyMs: 20 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    t.regex(errors[0]!.message, /not open/);
    t.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', record);
    await exchange.close().catch(() => {});
    server.close();
  }
});
