/**
 * This repository's images, built by a real Docker engine (test/docker/engine/) from
 * Dockerfile.cpu and Dockerfile.gpu, on stand-in bases (node:24-bookworm-slim and a
 * Debian stand-in for the CUDA runtime: it proves the recipe, not CUDA), with the probe
 * example (examples/probe) and the load-balancing example; then run for real:
 *
 * - the dry run (exit code, final record), and a stream;
 * - `--serve-api`: /runsync, /ui, /docs (the split bundle's chunks load here);
 * - a platform worker joined to a harness on 127.0.0.1 with the metrics port on: /metrics,
 *   a streamed job, a cancel, PID 1's reaping of an orphan, and a job that blocks the event
 *   loop, ended TIMED_OUT by the deadline watchdog thread inside the container (which then
 *   exits 1, as on the platform);
 * - `docker stop` during a job: it drains and exits 0 (no SIGKILL at the stop timeout);
 * - a load-balancing worker: /ping, a request through the harness's /lb/...;
 * - Node as PID 1 without tini: signals still work, but orphans stay zombies (why the
 *   images start under tini).
 *
 * Each image is built once and shared by the tests of this file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildList, REPO_ROOT } from '../child-process.js';
import { submit } from '../harness/http/helpers.js';
import { call, freePort, waitFor } from '../kit/index.js';
import {
  checkServeApi,
  ContainerList,
  containerState,
  envArgs,
  exitCodeOf,
  finalRecord,
  finalStatus,
  runOnce,
  startHarness,
  untilAnswers,
  type Harness,
} from './containers.js';
import { standInBase, useDockerEngine, type TestDockerEngine } from './engine/use-docker-engine.js';

const BUILD_TIMEOUT = 900_000;
const IMAGES = { cpu: 'sw-test/probe:cpu', gpu: 'sw-test/probe:gpu', lb: 'sw-test/lb:cpu' } as const;

let engine: TestDockerEngine;
let containers: ContainerList;
const children = new ChildList();
let harness: Harness;
const buildSeconds: Record<string, number> = {};

beforeAll(async () => {
  engine = await useDockerEngine();
  containers = new ContainerList(engine);
  const [node, cuda] = await Promise.all([standInBase('node', 24), standInBase('cuda')]);
  // One after the other: they share the build stage's layers (npm ci), built once.
  const timed = async (name: string, build: () => Promise<string>) => {
    const started = performance.now();
    await build();
    buildSeconds[name] = Math.round((performance.now() - started) / 100) / 10;
  };
  await timed('cpu', () => engine.build('Dockerfile.cpu', REPO_ROOT, { tag: IMAGES.cpu, args: { NODE_IMAGE: node, WORKER: 'examples/probe' } }));
  await timed('gpu', () =>
    engine.build('Dockerfile.gpu', REPO_ROOT, { tag: IMAGES.gpu, args: { NODE_IMAGE: node, BASE_IMAGE: cuda, WORKER: 'examples/probe' } }),
  );
  await timed('lb', () => engine.build('Dockerfile.cpu', REPO_ROOT, { tag: IMAGES.lb, args: { NODE_IMAGE: node, WORKER: 'examples/load-balancing' } }));
  console.log(`[images] build seconds: ${JSON.stringify(buildSeconds)}`);
  harness = await startHarness(children, ['cpu', 'gpu', 'stop', 'lb']);
}, BUILD_TIMEOUT);

afterAll(async () => {
  await containers?.removeAll();
  await children.killAll();
});

describe.each(['cpu', 'gpu'] as const)('the %s image', (kind) => {
  const tag = IMAGES[kind];

  it('runs as a non-root user on Node 24, under tini as PID 1, with only dist/ and the test input in /app', async () => {
    const run = await runOnce(engine, ['--entrypoint', 'sh', tag, '-c', 'id -u; node -p process.versions.node; ls /app']);
    expect(run.exitCode, run.stderr).toBe(0);
    const [uid, node, ...files] = run.stdout.trim().split('\n');
    expect(uid).not.toBe('0');
    expect(node).toMatch(/^24\./);
    expect(files.sort()).toEqual(['dist', 'test_input.json']);
    const { stdout } = await engine.docker(['image', 'inspect', '-f', '{{json .Config.Entrypoint}}', tag]);
    expect(JSON.parse(String(stdout))).toEqual(['/usr/bin/tini', '--', 'node', '--enable-source-maps', 'dist/worker.js']);
  });

  it('dry run: test_input.json by default, exit 0 and the final record; a stream; an invalid input exits 1', async () => {
    const plain = await runOnce(engine, [tag]);
    expect(plain.exitCode, plain.stderr).toBe(0);
    expect(finalRecord(plain.stdout)).toMatchObject({ status: 'COMPLETED', output: { echo: 'hello' } });
    const stream = await runOnce(engine, [tag, '--test-input', JSON.stringify({ input: { mode: 'stream', words: ['a', 'b', 'c'], delayMs: 1 } })]);
    expect(stream.exitCode, stream.stderr).toBe(0);
    expect(finalRecord(stream.stdout)).toMatchObject({ status: 'COMPLETED', output: ['a', 'b', 'c'] });
    const bad = await runOnce(engine, [tag, '--test-input', JSON.stringify({ input: { mode: 'nope' } })]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stdout + bad.stderr).toContain('SW_INPUT_VALIDATION');
  });

  it('PID 1 (tini) reaps the orphan of a process the handler spawned', async () => {
    const run = await runOnce(engine, [tag, '--test-input', JSON.stringify({ input: { mode: 'orphan' } })]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(finalRecord(run.stdout)).toMatchObject({ status: 'COMPLETED', output: { pid1: 'tini', state: 'reaped' } });
  });

  it('--serve-api answers /runsync, /ui and /docs, and stops on docker stop with exit code 0', { timeout: 120_000 }, async () => {
    expect(await checkServeApi(containers, tag, { mode: 'echo', message: 'served' })).toMatchObject({ status: 'COMPLETED', output: { echo: 'served' } });
  });

  describe('as a platform worker joined to a harness, metrics port on', () => {
    let id: string;
    let metricsPort: number;
    const endpoint = () => `${harness.url}/v2/${kind}`;

    beforeAll(async () => {
      metricsPort = await freePort();
      id = await containers.start([
        ...envArgs({
          ...harness.workerEnv(kind),
          RUNPOD_POD_ID: `image-${kind}`,
          SERVERLESS_WORKER_METRICS_PORT: String(metricsPort),
          SERVERLESS_WORKER_METRICS_HOST: '127.0.0.1',
        }),
        tag,
      ]);
      await untilAnswers(engine, id, `http://127.0.0.1:${metricsPort}/metrics`);
    }, 60_000);

    it('serves /metrics and completes a job', async () => {
      const answer = await call('POST', `${endpoint()}/runsync`, { body: { input: { mode: 'echo', message: 'platform' } } });
      expect(answer.json).toMatchObject({ status: 'COMPLETED', output: { echo: 'platform' } });
      const metrics = await call('GET', `http://127.0.0.1:${metricsPort}/metrics`);
      expect(metrics.status).toBe(200);
      expect(metrics.text).toMatch(/^# HELP /m);
    });

    it('streams a job', async () => {
      const jobId = await submit(endpoint(), { input: { mode: 'stream', words: ['one', 'two', 'three'], delayMs: 50 } });
      const chunks: unknown[] = [];
      await waitFor(
        async () => {
          const answer = (await call('GET', `${endpoint()}/stream/${jobId}`)).json as { status: string; stream?: Array<{ output: unknown }> };
          chunks.push(...(answer.stream ?? []).map((chunk) => chunk.output));
          return answer.status === 'COMPLETED';
        },
        'the streamed job to complete',
        30_000,
        50,
      );
      expect(chunks).toEqual(['one', 'two', 'three']);
    });

    it('cancels a running job', async () => {
      const jobId = await submit(endpoint(), { input: { mode: 'wait', ms: 60_000 } });
      await waitFor(
        async () => ((await call('GET', `${endpoint()}/status/${jobId}`)).json as { status: string }).status === 'IN_PROGRESS',
        'the job to start',
        30_000,
        50,
      );
      await call('POST', `${endpoint()}/cancel/${jobId}`);
      expect(await finalStatus(endpoint(), jobId)).toMatchObject({ status: 'CANCELLED' });
      // The worker is free again: the next job completes.
      expect((await call('POST', `${endpoint()}/runsync`, { body: { input: { mode: 'echo', message: 'after' } } })).json).toMatchObject({
        status: 'COMPLETED',
      });
    });

    it('a job that blocks the event loop past its deadline ends TIMED_OUT by the watchdog; the container exits 1', { timeout: 90_000 }, async () => {
      // 5 s: the platform's shortest execution timeout.
      const run = await call('POST', `${endpoint()}/run`, { body: { input: { mode: 'block', ms: 120_000 }, policy: { executionTimeout: 5_000 } } });
      expect(run.status, run.text).toBe(200);
      const jobId = (run.json as { id: string }).id;
      expect(await finalStatus(endpoint(), jobId)).toMatchObject({ status: 'TIMED_OUT' });
      expect(await exitCodeOf(engine, id)).toBe(1);
    });
  });
});

describe('docker stop', () => {
  it('a platform worker with a job running drains it and exits 0 within the stop timeout', { timeout: 120_000 }, async () => {
    const id = await containers.start([...envArgs({ ...harness.workerEnv('stop'), RUNPOD_POD_ID: 'image-stop' }), IMAGES.cpu]);
    const endpoint = `${harness.url}/v2/stop`;
    const jobId = await submit(endpoint, { input: { mode: 'wait', ms: 1_500 } });
    await waitFor(
      async () => ((await call('GET', `${endpoint}/status/${jobId}`)).json as { status: string }).status === 'IN_PROGRESS',
      'the job to start',
      30_000,
      50,
    );
    // 20 s to stop; a SIGKILL at its end would give exit code 137.
    await engine.docker(['stop', '-t', '20', id]);
    expect(await containerState(engine, id)).toEqual({ running: false, exitCode: 0 });
    expect(await finalStatus(endpoint, jobId)).toMatchObject({ status: 'COMPLETED', output: { waited: 1_500, aborted: false } });
  });

  it('Node as PID 1 (no tini): SIGTERM still drains and exits 0, but an orphan stays a zombie', { timeout: 120_000 }, async () => {
    const orphan = await runOnce(engine, ['--entrypoint', 'node', IMAGES.cpu, 'dist/worker.js', '--test-input', JSON.stringify({ input: { mode: 'orphan' } })]);
    expect(finalRecord(orphan.stdout)).toMatchObject({ status: 'COMPLETED', output: { pid1: 'node', state: 'zombie' } });
    const port = await freePort();
    const id = await containers.start(['--entrypoint', 'node', IMAGES.cpu, 'dist/worker.js', '--serve-api', '--port', String(port)]);
    await untilAnswers(engine, id, `http://127.0.0.1:${port}/health`);
    // The supervised worker up and serving (a job done) before the stop.
    expect((await call('POST', `http://127.0.0.1:${port}/runsync`, { body: { input: { mode: 'echo', message: 'pid 1' } } })).json).toMatchObject({
      status: 'COMPLETED',
    });
    await engine.docker(['stop', '-t', '20', id]);
    expect(await containerState(engine, id)).toEqual({ running: false, exitCode: 0 });
  });
});

describe('the load-balancing image', () => {
  it('answers /ping, serves a request through the harness /lb/..., and exits 0 on docker stop', { timeout: 120_000 }, async () => {
    const [port, health] = [await freePort(), await freePort()];
    const id = await containers.start([
      ...envArgs({
        PORT: String(port),
        PORT_HEALTH: String(health),
        SERVERLESS_WORKER_HARNESS_URL: harness.url,
        SERVERLESS_WORKER_ADVERTISE_HOST: '127.0.0.1',
        RUNPOD_ENDPOINT_ID: 'lb',
        MODEL_LOAD_MS: '100',
      }),
      IMAGES.lb,
    ]);
    await untilAnswers(engine, id, `http://127.0.0.1:${health}/ping`);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${health}/ping`)).status === 200, 'the worker to be ready', 30_000, 100);
    const chat = { messages: [{ role: 'user', content: 'hello there' }] };
    const answer = await waitFor(
      async () => {
        const reply = await call('POST', `${harness.url}/lb/lb/v1/chat/completions`, { body: chat });
        return reply.status === 200 ? reply : undefined;
      },
      'the harness to route /lb/lb/ to the registered worker',
      30_000,
      200,
    );
    expect(answer.json).toMatchObject({ object: 'chat.completion', choices: [{ message: { role: 'assistant' } }] });
    await engine.docker(['stop', '-t', '20', id]);
    expect(await containerState(engine, id)).toEqual({ running: false, exitCode: 0 });
  });
});
