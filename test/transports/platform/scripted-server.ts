/**
 * @module test/transports/platform/scripted-server
 * A bare node:http server on 127.0.0.1 port 0 whose answers a test scripts, recording
 * every request exactly as it arrived (method, path with query, headers, body). For
 * checking the platform transport's wire format against the protocol, and the answers
 * a real platform gives that the harness never does (400, an HTML page, 429).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Hold the answer this long, ms. */
  delayMs?: number;
}

/** Answers a request; undefined means 404. */
export type Script = (request: SeenRequest) => ScriptedAnswer | undefined | Promise<ScriptedAnswer | undefined>;

export interface ScriptedServer {
  readonly origin: string;
  readonly requests: SeenRequest[];
  /** Requests whose path contains `segment`. */
  to(segment: string): SeenRequest[];
  script: Script;
  close(): Promise<void>;
}

export function json(value: unknown, status = 200): ScriptedAnswer {
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) };
}

export async function startScriptedServer(script: Script = () => ({ status: 204 })): Promise<ScriptedServer> {
  const requests: SeenRequest[] = [];
  const state: { script: Script } = { script };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const parsed = new URL(req.url ?? '/', 'http://127.0.0.1');
      const seen: SeenRequest = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        path: parsed.pathname,
        query: parsed.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(seen);
      void Promise.resolve(state.script(seen)).then(async (answer) => {
        const reply = answer ?? { status: 404 };
        if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
        if (res.destroyed) return;
        res.writeHead(reply.status, reply.headers ?? {});
        res.end(reply.body ?? '');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    to: (segment) => requests.filter((request) => request.path.includes(segment)),
    get script() {
      return state.script;
    },
    set script(next: Script) {
      state.script = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
