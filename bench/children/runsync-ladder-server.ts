/**
 * @module bench/children/runsync-ladder-server
 * One rung of the `/runsync` cost ladder (bench/runsync-ladder.ts), all in this one
 * process, a no-op handler, `POST /runsync` on 127.0.0.1:`--port`. The first rung, a bare
 * `node:http` server, is bare-runsync-server.ts (the runpod-python bench's floor too).
 * - `core`: a `node:http` server, each body submitted to the harness core (memory store)
 *   and answered when the job ends, a plain in-process loop taking and completing the jobs;
 * - `sdk`: the same, the jobs run by the SDK's worker runtime (in-process transport,
 *   concurrency 8) instead of the plain loop;
 * - `harness`: the harness's own HTTP server (the lean `/runsync` path at its root) with
 *   the SDK's worker in process.
 * The ladder's last rung, `--serve-api` with its worker in a child process, is the bench
 * worker itself. Ends on SIGTERM.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Harness, startLocalWorker } from '../../src/exports/harness.js';
import { createLogger, resolveOptions } from '../../src/exports/runtime.js';
import { createHarnessServer } from '../../packages/platform/src/harness/server-api.js';

const LAYERS = ['core', 'sdk', 'harness'] as const;
type Layer = (typeof LAYERS)[number];
const { values } = parseArgs({ options: { port: { type: 'string' }, layer: { type: 'string' } }, strict: true });
const layer = values.layer as Layer;
if (!LAYERS.includes(layer)) throw new Error(`--layer must be one of ${LAYERS.join(', ')}; got ${String(values.layer)}`);
const port = Number(values.port);
const ENDPOINT = 'ladder';
const logger = createLogger({ level: 'warn' });
const harness = new Harness({ endpoints: [ENDPOINT] });
const endpoint = harness.endpoint(ENDPOINT);

if (layer === 'core') {
  // Takes what is queued (up to 8 at once, as a worker of concurrency 8), completes each.
  void (async () => {
    for (;;) {
      const jobs = await endpoint.take('ladder-worker', 8);
      await Promise.all(jobs.map((job) => endpoint.complete(job.id, 'ladder-worker', { kind: 'output', output: {} }, job.attempt)));
    }
  })();
} else {
  startLocalWorker(async () => ({}), resolveOptions({ concurrency: 8, gpuSampling: false, endpointId: ENDPOINT }), logger, { harness });
}

if (layer === 'harness') {
  await createHarnessServer({ harness, port, host: '127.0.0.1', rateLimits: false, management: false, rootEndpoint: ENDPOINT, logger });
} else {
  createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const input = (JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as { input?: Record<string, unknown> }).input ?? {};
      void endpoint.submitAndWait({ input }, { sync: true }, 90_000).then((view) => {
        const text = JSON.stringify(view);
        response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
        response.end(text);
      });
    });
  }).listen(port, '127.0.0.1');
}
process.on('SIGTERM', () => process.exit(0));
