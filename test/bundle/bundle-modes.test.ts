/**
 * The bundles `serverless-worker build` makes, one file and `--splitting`, run in every
 * mode a worker has, each as a real child process under plain node from its outdir (no
 * node_modules above it): the echo example's dry run, `--serve-api` (/runsync, a webhook
 * sent, /ui, /docs, /metrics), the platform with the metrics port on (/metrics counts the
 * job); the load-balancing example (/ping, its app, /metrics); a blocked-loop job
 * TIMED_OUT by the watchdog thread; an S3 upload to s3rver.
 *
 * The split bundle once died at start with "TypeError: i is not a constructor" whenever
 * prom-client or undici loaded: a chunk of a CommonJS package exported only `default`
 * (build/commonjs-dynamic-import.ts). Each mode here loads one of them.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleWorker } from '../../packages/platform/src/build/bundle.js';
import { parseJobRequest } from '../../src/job/index.js';
import { isTerminal } from '../../src/job/states.js';
import { REPO_ROOT, jsonLines } from '../child-process.js';
import { startWorkerApiServer } from '../harness/http/worker-api/worker-api-server.js';
import { statusOf } from '../load-balancing/lb-process.js';
import { freePort, waitFor, within } from '../kit/index.js';
import { startReliabilityServer } from '../reliability/support/reliability-server.js';

/** The workers bundled, by the name of their outdir. */
const ENTRIES = {
  echo: 'examples/echo/worker.ts',
  lb: 'examples/load-balancing/worker.ts',
  reliability: 'test/reliability/fixtures/reliability-worker.ts',
  s3: 'test/fixtures/workers/s3-upload.ts',
} as const;
type EntryName = keyof typeof ENTRIES;

const MODES = [
  { mode: 'one file', splitting: false },
  { mode: '--splitting', splitting: true },
] as const;

let root: string;
/** `<root>/<mode>/<entry>/worker.js` by mode, then entry. */
const bundles = new Map<boolean, Record<EntryName, string>>();

let s3: S3rver;
let s3Endpoint: string;
const BUCKET = 'outputs';

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'sw-bundle-modes-'));
  for (const { splitting } of MODES) {
    const built: Partial<Record<EntryName, string>> = {};
    for (const [name, entry] of Object.entries(ENTRIES) as [EntryName, string][]) {
      const output = await bundleWorker({ entry, outdir: join(root, splitting ? 'split' : 'whole', name), splitting, cwd: REPO_ROOT });
      built[name] = output.bundle;
    }
    bundles.set(splitting, built as Record<EntryName, string>);
  }
  s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: join(root, 's3'), configureBuckets: [{ name: BUCKET }] });
  const { port } = await s3.run();
  s3Endpoint = `http://127.0.0.1:${port}`;
}, 240_000);

afterAll(async () => {
  await s3?.close();
  await rm(root, { recursive: true, force: true });
});

interface BundleChild {
  readonly child: ResultPromise<{ all: true; reject: false }>;
  /** stdout and stderr so far, interleaved. */
  output(): string;
  /** Wait for `pattern` in the output; answers its first group (or the match). */
  find(pattern: RegExp, what: string): Promise<string>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | undefined>;
}

/** `node --enable-source-maps <bundle> ...args` from the bundle's folder, with a clean environment and `env`. */
function runBundle(bundle: string, args: readonly string[], env: Record<string, string> = {}): BundleChild {
  const child = execa(process.execPath, ['--enable-source-maps', bundle, ...args], {
    cwd: join(bundle, '..'),
    all: true,
    reject: false,
    timeout: 90_000,
    // Nothing of this vitest worker's environment (no RUNPOD_* variables, no NODE_OPTIONS).
    extendEnv: false,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'info', SW_NODE_VERSION_WARNING: 'off', ...env },
  });
  let text = '';
  child.all.on('data', (data: Buffer) => (text += data.toString()));
  const self: BundleChild = {
    child,
    output: () => text,
    find: (pattern, what) =>
      waitFor(
        () => {
          alive(self, what);
          const match = pattern.exec(text);
          return match ? (match[1] ?? match[0]) : undefined;
        },
        `${what} (output: ${text.slice(-2_000)})`,
        30_000,
      ),
    stop: async () => {
      child.kill('SIGTERM');
      return (await within(child, 'the bundle to exit after SIGTERM', 30_000)).exitCode;
    },
  };
  return self;
}

/** Throws once `worker` has exited: a probe for waitFor, so that a crash fails the test at once with the worker's output. */
function alive(worker: BundleChild, what: string): void {
  if (worker.child.exitCode !== null) throw new Error(`the bundle exited (${worker.child.exitCode}) before ${what}:\n${worker.output().slice(-3_000)}`);
}

/** A loopback server that keeps the bodies POSTed to it (webhook deliveries). */
async function webhookReceiver(): Promise<{ url: string; bodies: unknown[]; close(): Promise<void> }> {
  const bodies: unknown[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      bodies.push(JSON.parse(body) as unknown);
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { url: `http://127.0.0.1:${port}/hook`, bodies, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe.each(MODES)('a bundle built as $mode', { timeout: 180_000 }, ({ splitting }) => {
  const bundle = (name: EntryName): string => bundles.get(splitting)?.[name] ?? '';

  it('runs the echo example dry (a test input on the command line)', async () => {
    // The split build is split: what the worker loads on demand sits in chunks/.
    expect(existsSync(join(bundle('echo'), '..', 'chunks'))).toBe(splitting);
    const run = await runBundle(bundle('echo'), ['--test-input', JSON.stringify({ input: { message: 'dry' } })]).child;
    expect(run.exitCode, run.all).toBe(0);
    expect(jsonLines(run.stdout).at(-1)).toMatchObject({ status: 'COMPLETED', output: { echo: 'dry' } });
  });

  it('serves --serve-api: /runsync, a job webhook sent (undici), /ui, /docs and /metrics (prom-client)', async () => {
    const receiver = await webhookReceiver();
    const worker = runBundle(bundle('echo'), ['--serve-api', '--port', '0']);
    try {
      const base = await worker.find(/(http:\/\/127\.0\.0\.1:\d+)\/v2\/local/, 'the serve-api banner');
      const answer = await fetch(`${base}/v2/local/runsync`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: { message: 'api' } }),
      });
      expect(await answer.json()).toMatchObject({ status: 'COMPLETED', output: { echo: 'api' } });
      const run = await fetch(`${base}/v2/local/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: { message: 'hooked' }, webhook: receiver.url }),
      });
      const { id } = (await run.json()) as { id: string };
      await waitFor(
        () => (alive(worker, 'the webhook'), receiver.bodies.length > 0),
        `the webhook of job ${id} (output: ${worker.output().slice(-2_000)})`,
        30_000,
      );
      expect(receiver.bodies[0]).toMatchObject({ id, status: 'COMPLETED', output: { echo: 'hooked' } });
      const ui = await fetch(`${base}/ui`);
      expect(ui.status).toBe(200);
      expect(await ui.text()).toContain('<html');
      const docs = await fetch(`${base}/docs`);
      expect(docs.status).toBe(200);
      expect(await docs.text()).toMatch(/swagger/i);
      expect(await (await fetch(`${base}/metrics`)).text()).toMatch(/serverless_worker_jobs_total\{[^}]*status="COMPLETED"[^}]*\} 2/);
      expect(await worker.stop()).toBe(0);
    } finally {
      worker.child.kill('SIGKILL');
      await receiver.close();
    }
  });

  it('works a job on the platform with SERVERLESS_WORKER_METRICS_PORT set: /metrics counts it', async () => {
    const server = await startWorkerApiServer({ liveness: { pingIntervalMs: 500, missedPings: 10 }, longPollMs: 5_000 });
    const worker = runBundle(bundle('echo'), [], {
      ...server.envFor('metrics', 500),
      RUNPOD_POD_ID: 'metrics-1',
      SERVERLESS_WORKER_METRICS_PORT: '0',
      SERVERLESS_WORKER_METRICS_HOST: '127.0.0.1',
    });
    try {
      const endpoint = server.harness.endpoint('metrics');
      const job = await endpoint.submit(parseJobRequest({ input: { message: 'counted' } }));
      const ended = await waitFor(
        () => (alive(worker, `job ${job.id} ended`), endpoint.waitForEnd(job.id, 500).then((view) => (isTerminal(view.status) ? view : undefined))),
        `job ${job.id} to end`,
        60_000,
      );
      expect(ended, worker.output().slice(-2_000)).toMatchObject({ status: 'COMPLETED', output: { echo: 'counted', workerId: 'metrics-1' } });
      const url = await worker.find(/metrics served at (http:\/\/[^"\s]+)/, 'the metrics URL in the log');
      expect(await (await fetch(url)).text()).toMatch(/serverless_worker_jobs_total\{[^}]*status="COMPLETED"[^}]*\} 1/);
      expect(await worker.stop()).toBe(0);
    } finally {
      worker.child.kill('SIGKILL');
      await server.close();
    }
  });

  it('serves the load-balancing example: /ping 200 once init is done, its app, /metrics', async () => {
    const port = await freePort();
    const worker = runBundle(bundle('lb'), [], {
      PORT: String(port),
      SERVERLESS_WORKER_HOST: '127.0.0.1',
      SERVERLESS_WORKER_EXPECT_GPU: 'none',
      MODEL_LOAD_MS: '100',
      SERVERLESS_WORKER_METRICS_PORT: '0',
      SERVERLESS_WORKER_METRICS_HOST: '127.0.0.1',
    });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitFor(
        async () => (alive(worker, '/ping answered 200'), (await statusOf(`${base}/ping`)) === 200),
        `/ping to answer 200 (output: ${worker.output().slice(-2_000)})`,
        30_000,
        50,
      );
      const chat = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(chat.status).toBe(200);
      expect(await chat.json()).toMatchObject({ object: 'chat.completion' });
      const url = await worker.find(/metrics served at (http:\/\/[^"\s]+)/, 'the metrics URL in the log');
      expect(await (await fetch(url)).text()).toMatch(/serverless_worker_http_requests_total\{code="200"\} 1/);
      expect(await worker.stop()).toBe(0);
    } finally {
      worker.child.kill('SIGKILL');
    }
  });

  it('a job that blocks the event loop is TIMED_OUT by the watchdog thread, which ends the worker (exit 1)', async () => {
    const reliability = await startReliabilityServer({ workerApi: { longPollMs: 2_000, liveness: { pingIntervalMs: 500, missedPings: 30 } } });
    const worker = runBundle(bundle('reliability'), [], {
      ...reliability.envFor('blocked', 500),
      RUNPOD_POD_ID: 'blocked-1',
      DEFAULT_EXECUTION_TIMEOUT_MS: '3000',
      TIMEOUT_GRACE_MS: '1000',
      EVENT_LOOP_BLOCKED_MS: '60000',
    });
    try {
      const endpoint = reliability.harness.endpoint('blocked');
      const job = await endpoint.submit(parseJobRequest({ input: { mode: 'busy', ms: 30_000 } }));
      expect(await endpoint.waitForEnd(job.id, 60_000), worker.output().slice(-2_000)).toMatchObject({ status: 'TIMED_OUT' });
      expect((await within(worker.child, 'the blocked worker to exit', 30_000)).exitCode).toBe(1);
      // Heartbeats come from the thread, and it listed the job while the loop was blocked.
      expect(reliability.seen.pingedJobs).toContainEqual({ workerId: 'blocked-1', jobId: job.id });
    } finally {
      worker.child.kill('SIGKILL');
      await reliability.close();
    }
  });

  it('uploads a job output to S3 (s3rver) and answers a presigned URL that reads it back', async () => {
    const request = {
      input: { text: 'from a bundle' },
      s3Config: { accessId: 'S3RVER', accessSecret: 'S3RVER', bucketName: BUCKET, endpointUrl: s3Endpoint, objectPath: 'jobs' },
    };
    const run = await runBundle(bundle('s3'), ['--test-input', JSON.stringify(request)]).child;
    expect(run.exitCode, run.all).toBe(0);
    const record = jsonLines(run.stdout).at(-1) as { status: string; output: { url: string } };
    expect(record.status).toBe('COMPLETED');
    expect(await (await fetch(record.output.url)).text()).toBe('from a bundle');
  });
});
