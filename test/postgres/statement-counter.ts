/**
 * A TCP proxy in front of a PostgreSQL server that counts the statements its clients
 * run: each Execute message (extended protocol) and each simple Query. A count read
 * from the wire, whatever the driver: what a store sends per job. Statements whose text
 * calls pg_notify (the job store's events: notification-only statements of
 * notification-outbox.ts, and the hot statements that carry their own, statement-notices.ts)
 * are also counted apart. The driver's type question on each new connection is not counted.
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface StatementCounter {
  /** The server's URL with the proxy's port. */
  readonly url: string;
  /** Statements run through the proxy so far. */
  count(): number;
  /** Of them, those whose text calls pg_notify. */
  notifications(): number;
  /** The texts of the statements run so far, in the order they were sent (the last 1 000). */
  texts(): readonly string[];
  close(): Promise<void>;
}

interface WireState {
  pending: Buffer;
  started: boolean;
  /** The text of each prepared statement, by name ('' the unnamed one). */
  readonly statements: Map<string, string>;
  /** The statement of the last Bind: what the next Execute runs. */
  bound: string;
}

/** A null-terminated string at `offset`, and the offset after it. */
function cString(buffer: Buffer, offset: number): [string, number] {
  const end = buffer.indexOf(0, offset);
  return [buffer.toString('utf8', offset, end), end + 1];
}

/** Count the client's statements in `data` (`notify`: those calling pg_notify); `state` carries a message split across packets. */
function countMessages(state: WireState, data: Buffer): { all: number; notify: number; texts: string[] } {
  const counted = { all: 0, notify: 0, texts: [] as string[] };
  let buffer = state.pending.length > 0 ? Buffer.concat([state.pending, data]) : data;
  const run = (text: string): void => {
    // The driver's own question when a connection opens (the array types), not the store's.
    if (text.includes('pg_catalog.pg_type')) return;
    counted.all++;
    counted.texts.push(text);
    if (text.includes('pg_notify')) counted.notify++;
  };
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
    if (type === 'P') {
      const [name, next] = cString(buffer, 5);
      state.statements.set(name, cString(buffer, next)[0]);
    } else if (type === 'B') {
      const [, next] = cString(buffer, 5);
      state.bound = cString(buffer, next)[0];
    } else if (type === 'E') {
      run(state.statements.get(state.bound) ?? '');
    } else if (type === 'Q') {
      run(cString(buffer, 5)[0]);
    }
    buffer = buffer.subarray(length);
  }
  state.pending = Buffer.from(buffer);
  return counted;
}

export async function startStatementCounter(serverUrl: string): Promise<StatementCounter> {
  const target = new URL(serverUrl);
  let statements = 0;
  let notifications = 0;
  let texts: string[] = [];
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    const state: WireState = { pending: Buffer.alloc(0), started: false, statements: new Map(), bound: '' };
    client.on('data', (data: Buffer) => {
      const counted = countMessages(state, data);
      statements += counted.all;
      notifications += counted.notify;
      texts.push(...counted.texts);
      if (texts.length > 2_000) texts = texts.slice(-1_000);
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
    notifications: () => notifications,
    texts: () => texts.slice(-1_000),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
