/**
 * A TCP proxy in front of a PostgreSQL server that counts the statements its clients
 * run: each Execute message (extended protocol) and each simple Query. A count read
 * from the wire, whatever the driver: what a store sends per job.
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface StatementCounter {
  /** The server's URL with the proxy's port. */
  readonly url: string;
  /** Statements run through the proxy so far. */
  count(): number;
  close(): Promise<void>;
}

/** Count the client's messages in `data`; `state` carries a message split across packets and whether the start-up is over. */
function countMessages(state: { pending: Buffer; started: boolean }, data: Buffer): number {
  let counted = 0;
  let buffer = state.pending.length > 0 ? Buffer.concat([state.pending, data]) : data;
  for (;;) {
    if (!state.started) {
      // Start-up messages have no type byte: int32 length, int32 code (80877103: SSLRequest, answered with one byte, then the real start-up).
      if (buffer.length < 8) break;
      const length = buffer.readInt32BE(0);
      if (buffer.length < length) break;
      if (buffer.readInt32BE(4) !== 80_877_103) state.started = true;
      buffer = buffer.subarray(length);
      continue;
    }
    if (buffer.length < 5) break;
    const length = buffer.readInt32BE(1) + 1;
    if (buffer.length < length) break;
    const type = String.fromCharCode(buffer[0] as number);
    if (type === 'E' || type === 'Q') counted++;
    buffer = buffer.subarray(length);
  }
  state.pending = Buffer.from(buffer);
  return counted;
}

export async function startStatementCounter(serverUrl: string): Promise<StatementCounter> {
  const target = new URL(serverUrl);
  let statements = 0;
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    const state = { pending: Buffer.alloc(0), started: false };
    client.on('data', (data: Buffer) => {
      statements += countMessages(state, data);
      upstream.write(data);
    });
    upstream.pipe(client);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const url = new URL(serverUrl);
  url.hostname = '127.0.0.1';
  url.port = String((proxy.address() as AddressInfo).port);
  return {
    url: url.toString(),
    count: () => statements,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
