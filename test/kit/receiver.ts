/**
 * @module test/kit/receiver
 * A webhook receiver for tests: a loopback HTTP server that records each JSON body it
 * gets, with its headers and arrival time, and answers as told.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook {
  readonly body: unknown;
  readonly headers: IncomingMessage['headers'];
  /** performance.now() when the request arrived. */
  readonly at: number;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedHook[];
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 answering the nth request with `answer(n)` (a status code, or 'hang': never, until close). */
export async function startReceiver(answer: (attempt: number) => number | 'hang'): Promise<WebhookReceiver> {
  const received: ReceivedHook[] = [];
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((request, response) => {
    const at = performance.now();
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      received.push({ body: JSON.parse(text) as unknown, headers: request.headers, at });
      const reply = answer(received.length);
      if (reply === 'hang') {
        hanging.push(response);
        return;
      }
      response.writeHead(reply, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
