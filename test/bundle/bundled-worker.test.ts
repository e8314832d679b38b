/**
 * A worker that imports the package bundles with esbuild's ordinary flags for Node
 * ESM and runs from a folder with nothing else in it: one job end to end through the
 * platform transport, then the platform worker-process suite and a reliability suite
 * (handler pathologies in a worker process: throws, hangs, 5 MB outputs, cycles, log floods) run again with every worker process
 * as its bundle (SW_TEST_WORKER_BUNDLES, read by test/platform/worker-process.ts).
 */
import { rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJobRequest } from '../../src/job/index.js';
import { startWorkerApiServer, type RunningWorkerApi } from '../harness/http/worker-api/worker-api-server.js';
import { FIXTURE, killAllWorkers, startWorkerProcess } from '../platform/worker-process.js';
import { startReliabilityServer } from '../reliability/support/reliability-server.js';
import { RELIABILITY_WORKER } from '../reliability/support/worker-process.js';
import { waitFor, within } from '../kit/index.js';
import { bundleWorkers, REPO_ROOT, type BundledWorkers } from './bundle-workers.js';

/** Test files run again against the bundles, one file at a time (they start worker processes and read their logs). */
const SUITES = ['test/platform/platform-workers.test.ts', 'test/reliability/handler-pathologies.test.ts'];

let bundled: BundledWorkers;
let server: RunningWorkerApi | undefined;

const bundlesBefore = process.env.SW_TEST_WORKER_BUNDLES;

beforeAll(async () => {
  bundled = await bundleWorkers([FIXTURE, RELIABILITY_WORKER]);
  // startWorkerProcess runs `<bundles>/<fixture>.js` under plain node instead of the fixture through tsx.
  process.env.SW_TEST_WORKER_BUNDLES = bundled.dir;
}, 120_000);

afterAll(async () => {
  if (bundlesBefore === undefined) delete process.env.SW_TEST_WORKER_BUNDLES;
  else process.env.SW_TEST_WORKER_BUNDLES = bundlesBefore;
  await killAllWorkers();
  await server?.close();
  rmSync(bundled.dir, { recursive: true, force: true });
});

describe('a bundled worker', () => {
  it('imports nothing but Node built-ins at run time (every package is inside the bundle)', async () => {
    const builtins = new Set(builtinModules);
    const external = Object.values(bundled.metafile.outputs)
      .flatMap((output) => output.imports)
      .filter((entry) => entry.external)
      .map((entry) => entry.path);
    const foreign = external.filter((path) => !path.startsWith('node:') && !builtins.has(path));
    expect(foreign).toEqual([]);
    const inputs = Object.keys(bundled.metafile.inputs);
    // The package's own files are in it (not loaded from node_modules or src at run time).
    expect(inputs.some((path) => path.endsWith('src/serve.ts'))).toBe(true);
    // Only dependencies' own package.json may be inlined (pino reads thread-stream's); never ours.
    expect(inputs).not.toContain('package.json');
  });

  it('starts from a folder holding only the bundle and serves a job through the platform transport', { timeout: 90_000 }, async () => {
    server = await startWorkerApiServer({ liveness: { pingIntervalMs: 500, missedPings: 6 }, longPollMs: 5_000 });
    const worker = startWorkerProcess('bundled-1', server.envFor('bundled', 500));
    const endpoint = server.harness.endpoint('bundled');
    const job = await endpoint.submit(parseJobRequest({ input: { tag: 'from-bundle' } }));
    const view = await endpoint.waitForEnd(job.id, 60_000);
    expect(view, worker.stderr().slice(-2_000)).toMatchObject({ status: 'COMPLETED', output: { workerId: 'bundled-1', tag: 'from-bundle' } });
    worker.signal('SIGTERM');
    expect((await within(worker.exited, 'the bundled worker to exit', 20_000)).code).toBe(0);
  });

  it(
    'a job waiting before the worker starts and blocking the loop at once is watched all the same: pinged while blocked, TIMED_OUT by the watchdog thread, exit 1',
    { timeout: 120_000 },
    async () => {
      // A compiled thread's first take does not wait for the thread to boot (watchdog.ts `ready`): the
      // thread must come up and do its work on its own thread while the main one is already blocked.
      const reliability = await startReliabilityServer({ workerApi: { longPollMs: 2_000, liveness: { pingIntervalMs: 500, missedPings: 30 } } });
      try {
        const endpoint = reliability.harness.endpoint('blocked-at-once');
        const job = await endpoint.submit(parseJobRequest({ input: { mode: 'busy', ms: 30_000 } }));
        const worker = startWorkerProcess(
          'bundled-blocked',
          {
            ...reliability.envFor('blocked-at-once', 500),
            LOG_LEVEL: 'warn',
            DEFAULT_EXECUTION_TIMEOUT_MS: '3000',
            TIMEOUT_GRACE_MS: '1000',
            EVENT_LOOP_BLOCKED_MS: '60000',
          },
          RELIABILITY_WORKER,
        );
        const view = await endpoint.waitForEnd(job.id, 60_000);
        expect(view, worker.stderr().slice(-2_000)).toMatchObject({ status: 'TIMED_OUT' });
        expect((await within(worker.exited, 'the blocked bundled worker to exit', 20_000)).code).toBe(1);
        // The thread's heartbeat listed the job: it ran while the loop was blocked, from the first job on.
        expect(reliability.seen.pingedJobs).toContainEqual({ workerId: 'bundled-blocked', jobId: job.id });
        expect(reliability.seen.results.filter((result) => result.jobId === job.id).map((result) => result.ack.applied)).toEqual([true]);
        await worker.waitForStderr('"component":"watchdog"');
      } finally {
        await reliability.close();
      }
    },
  );

  it('serves /metrics from the bundle when SERVERLESS_WORKER_METRICS_PORT is set (prom-client is inside it)', { timeout: 90_000 }, async () => {
    server ??= await startWorkerApiServer({ liveness: { pingIntervalMs: 500, missedPings: 6 }, longPollMs: 5_000 });
    const worker = startWorkerProcess('bundled-metrics', { ...server.envFor('bundled-metrics', 500), SERVERLESS_WORKER_METRICS_PORT: '0', LOG_LEVEL: 'info' });
    const endpoint = server.harness.endpoint('bundled-metrics');
    const job = await endpoint.submit(parseJobRequest({ input: { tag: 'counted' } }));
    expect(await endpoint.waitForEnd(job.id, 60_000), worker.stderr().slice(-2_000)).toMatchObject({ status: 'COMPLETED' });
    const url = await waitFor(
      () => /metrics served at (http:\/\/[^"\s]+)/.exec(worker.stderr())?.[1],
      `the metrics URL in the log (stderr: ${worker.stderr().slice(-2_000)})`,
      30_000,
    );
    const text = await (await fetch(url)).text();
    expect(text).toMatch(/serverless_worker_jobs_total\{[^}]*status="COMPLETED"[^}]*\} 1/);
    expect(worker.stderr()).not.toContain('Cannot find module');
    worker.signal('SIGTERM');
    expect((await within(worker.exited, 'the bundled worker to exit', 20_000)).code).toBe(0);
  });

  it('prints pretty log lines on a terminal from the bundle (pino-pretty is inside it)', { timeout: 90_000 }, async () => {
    const bundle = bundled.files.get('platform-worker') ?? '';
    // `script` gives the worker a pseudo-terminal, so that it chooses pretty lines (a dry run: no platform variables).
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(bundle)} --test-input '{"input":{"tag":"tty"}}'`;
    const run = await execa('script', ['-qec', command, '/dev/null'], {
      reject: false,
      timeout: 60_000,
      extendEnv: false,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'info', TERM: 'xterm', SW_NODE_VERSION_WARNING: 'off' },
    });
    const text = run.stdout.replace(/\x1b\[[0-9;]*m/g, '');
    expect(run.exitCode, text.slice(-2_000)).toBe(0);
    expect(text).not.toContain('Cannot find module');
    // pino-pretty's line ("[time] INFO: dry run: ..."), not a JSON object.
    expect(text).toMatch(/INFO.*dry run/);
    expect(text).not.toMatch(/^\{"level":30/m);
  });

  it(`passes ${SUITES.join(' and ')} with every worker process as its bundle`, { timeout: 600_000 }, async () => {
    const run = await execa(process.execPath, [join(REPO_ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--no-file-parallelism', ...SUITES], {
      cwd: REPO_ROOT,
      reject: false,
      timeout: 580_000,
      all: true,
      // A clean environment: not this vitest worker's own (its VITEST_* variables change how the inner run behaves).
      extendEnv: false,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SW_TEST_WORKER_BUNDLES: bundled.dir, CI: 'true', NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    // Summary first: the suites print their own figures.
    const tail = (run.all ?? '').replace(/\x1b\[[0-9;]*m/g, '').slice(-4_000);
    console.log(`bundled suites: exit ${run.exitCode}\n${tail}`);
    expect(run.exitCode, tail).toBe(0);
    // "Tests  9 passed (9)": nothing failed or skipped.
    expect(tail).toMatch(/Tests\s+(\d+) passed \(\1\)/);
  });
});
