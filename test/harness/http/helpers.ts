/**
 * @module test/harness/http/helpers
 * For the harness HTTP tests: an in-process worker for a harness, a job submitter and
 * a webhook receiver. Everything talks to loopback only. The harness server, the HTTP
 * client and bounded waits: test/kit.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { Harness } from '../../../src/harness/index.js';
import { startLocalWorker, type LocalWorker } from '../../../src/local/local-worker.js';
import { resolveOptions, type Handler, type ServeOptions } from '../../../src/worker/index.js';
import { call } from '../../kit/index.js';

export const silent = pino({ level: 'silent' });

/** An in-process worker on `endpointId` of `harness`. */
export function startTestWorker(
  harness: Harness,
  handler: Handler<never>,
  options: ServeOptions = {},
): LocalWorker & { stop(): Promise<void> } {
  const config = resolveOptions({ endpointId: 'ep', shutdownTimeoutMs: 1_000, timeoutGraceMs: 500, ...options, logger: silent });
  const local = startLocalWorker(handler as Handler<unknown>, config, silent, harness);
  return Object.assign(local, { stop: async () => void (await local.runtime.stop()) });
}

/** POST /run to an endpoint URL and answer the new job's id. */
export async function submit(url: string, body: unknown = { input: {} }): Promise<string> {
  return ((await call('POST', `${url}/run`, { body })).json as { id: string }).id;
}

export interface ReceivedHook {
  readonly body: unknown;
  readonly headers: IncomingMessage['headers'];
}

export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedHook[];
  close(): Promise<void>;
}

/** A local webhook receiver answering the nth request with `answer(n)` (a status code, or 'hang'). */
export async function startReceiver(answer: (attempt: number) => number | 'hang'): Promise<WebhookReceiver> {
  const received: ReceivedHook[] = [];
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      received.push({ body: JSON.parse(text) as unknown, headers: request.headers });
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
