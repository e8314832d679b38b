/**
 * @module bench/children/bare-runsync-server
 * The floor of a Node /runsync server on this machine: a bare `node:http` server (no
 * queue, no store, no worker) that reads each POST body, parses it, and answers a
 * completed job's view, as `--serve-api` answers a no-op job. The runpod-python bench
 * runs it in place of ours with BENCH_SERVE_API_BARE=1: what any Node server can do with
 * the same clients on the same cores. `--port N`.
 *
 * `--child` (BENCH_SERVE_API_BARE=child): the floor of an isolated handler. The server
 * forks itself once, and each request's body goes to that child over the IPC channel and
 * its output comes back the same way, the messages of one turn of the event loop sent as
 * one (as `--serve-api`'s channel does): what a local API whose handler runs in another
 * process cannot go below, whatever its queue costs.
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string' }, child: { type: 'boolean' }, 'as-child': { type: 'boolean' } } });

type Job = readonly [id: number, body: string];
type Output = readonly [id: number, output: unknown];

/** Messages queued within one turn, sent as one at its end. */
function batcher<Message>(send: (batch: Message[]) => void): (message: Message) => void {
  let queued: Message[] = [];
  const flush = (): void => {
    const batch = queued;
    queued = [];
    send(batch);
  };
  return (message) => {
    if (queued.push(message) === 1) setImmediate(flush);
  };
}

function answer(response: ServerResponse, output: unknown): void {
  const view = JSON.stringify({ delayTime: 0, executionTime: 0, id: `sync-${randomUUID()}`, output, status: 'COMPLETED', workerId: 'bare' });
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(view) });
  response.end(view);
}

function outputOf(body: string): unknown {
  return (JSON.parse(body || '{}') as { input?: unknown }).input ?? null;
}

if (values['as-child']) {
  const reply = batcher<Output>((batch) => process.send?.(batch));
  process.on('message', (batch: Job[]) => {
    for (const [id, body] of batch) reply([id, outputOf(body)]);
  });
} else {
  const child = values.child ? fork(process.argv[1] ?? '', ['--as-child']) : undefined;
  const waiting = new Map<number, ServerResponse>();
  let nextId = 0;
  const toChild = child ? batcher<Job>((batch) => child.send(batch)) : undefined;
  child?.on('message', (batch: Output[]) => {
    for (const [id, output] of batch) {
      const response = waiting.get(id);
      waiting.delete(id);
      if (response) answer(response, output);
    }
  });
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      if (toChild === undefined) return answer(response, outputOf(body));
      const id = nextId++;
      waiting.set(id, response);
      toChild([id, body]);
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(Number(values.port), '127.0.0.1');
  process.on('SIGTERM', () => {
    child?.kill();
    server.close(() => process.exit(0));
  });
}
