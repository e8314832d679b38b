/**
 * @module bench/children/bare-runsync-server
 * The floor of a Node /runsync server on this machine: a bare `node:http` server (no
 * queue, no store, no worker, no isolation) that reads each POST body, parses it, and
 * answers a completed job's view, as `--serve-api` answers a no-op job. The runpod-python
 * bench runs it in place of ours with BENCH_SERVE_API_BARE=1: what any Node server can do
 * with the same clients on the same cores. `--port N`.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string' } } });
const server = createServer((request, response) => {
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', () => {
    const body = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as { input?: unknown };
    const view = JSON.stringify({
      delayTime: 0,
      executionTime: 0,
      id: `sync-${randomUUID()}`,
      output: body.input ?? null,
      status: 'COMPLETED',
      workerId: 'bare',
    });
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(view) });
    response.end(view);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(Number(values.port), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
