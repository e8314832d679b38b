/**
 * @module test/ui/dashboard-fixture
 * A harness on 127.0.0.1 port 0 with an API key and an in-process worker whose handler
 * does what the input asks (`mode`): echo, stream tokens, report progress steps, sleep
 * (cancellable), fail until retried; and a launcher (real processes) for endpoints made on templates
 * whose image is CRASH_IMAGE (a command that exits at once: scale-ups, crashes,
 * backoff). Shared by the browser tests and `npm run screenshot`. Also the
 * Chromium launcher: the browser test/setup/chromium.ts finds (the bundled one from
 * npm, CHROMIUM_PATH, or a system one); when there is none it fails saying how to get one.
 */
import { Writable } from 'node:stream';
import { chromium, type Browser } from 'playwright-core';
import pino from 'pino';
import { Harness } from '../../src/harness/index.js';
import type { HarnessServer } from '../../packages/platform/src/harness/server-api.js';
import type { EndpointInputSpec } from '../../packages/platform/src/harness/openapi/index.js';
import { JobLogBuffer, tapJobLogs, type DashboardGpuSource } from '../../packages/platform/src/harness/dashboard/index.js';
import { Launcher } from '../../packages/platform/src/harness/launcher/index.js';
import { InMemoryManagementStore } from '../../packages/platform/src/harness/management/index.js';
import { startLocalWorker, type LocalWorker } from '../../src/local/local-worker.js';
import { resolveOptions, type Handler } from '../../src/worker/index.js';
import { FIXTURE, REPO_ROOT } from '../platform/worker-process.js';
import { startHarnessServer } from '../kit/index.js';
import { nodeCommandFor } from '../compiled-fixtures.js';
import { findChromium } from '../setup/chromium.js';

export const API_KEY = 'dashboard-test-key';
export const ENDPOINT = 'local';
/** Templates with this imageName run `exit 3` under the fixture's launcher. */
export const CRASH_IMAGE = 'dashboard/crash:1';
/** Templates with this imageName run a command that writes an ImportError to stderr and exits 1 (a launch that fails on a missing library). */
export const IMPORT_ERROR_IMAGE = 'dashboard/import-error:1';
export const IMPORT_ERROR_LINE = 'ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory';
/** Templates with this imageName run the platform fixture worker (a real worker process over the worker API; it prints a line naming each job it starts). */
export const WORKER_IMAGE = 'dashboard/worker:1';

export interface FixtureInput {
  mode?: 'echo' | 'stream' | 'progress' | 'sleep' | 'fail-once' | 'big' | 'burst' | 'fail-long' | 'log';
  /** `log`: lines logged with ctx.log (info), one a step, `delayMs` apart. */
  lines?: string[];
  /** `log`: every line at once, no pause between (many in one millisecond). */
  together?: boolean;
  /** `big`: the output is a string of this many characters ("0123456789" repeated); `fail-long`: the error message's length. */
  chars?: number;
  /** `burst`: yield this many chunks ("c0 ", "c1 ", ...) without pausing. */
  count?: number;
  tokens?: Array<string | Record<string, unknown>>;
  /** `progress`: how many steps (each reported, then `delayMs`). */
  steps?: number;
  delayMs?: number;
  ms?: number;
  [key: string]: unknown;
}

const failedOnce = new Set<string>();
const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** The fixture worker's handler: a generator for `stream`, a plain async function otherwise. */
export const fixtureHandler: Handler<FixtureInput> = (job, context) => {
  const input = job.input;
  if (input.mode === 'burst') {
    return (async function* burst() {
      for (let i = 0; i < (input.count ?? 0) && !context.signal.aborted; i++) yield `c${i} `;
    })();
  }
  if (input.mode === 'stream') {
    return (async function* stream() {
      for (const token of input.tokens ?? []) {
        await sleep(input.delayMs ?? 50, context.signal);
        if (context.signal.aborted) return;
        yield token;
      }
    })();
  }
  return (async () => {
    if (input.mode === 'progress') {
      const steps = input.steps ?? 3;
      for (let step = 1; step <= steps && !context.signal.aborted; step++) {
        context.progress({ step, of: steps });
        await sleep(input.delayMs ?? 200, context.signal);
      }
      return { steps };
    }
    if (input.mode === 'sleep') {
      await sleep(input.ms ?? 60_000, context.signal);
      return { slept: input.ms };
    }
    if (input.mode === 'log') {
      for (const [step, line] of (input.lines ?? []).entries()) {
        context.log.info({ step }, line);
        if (input.together !== true) await sleep(input.delayMs ?? 0, context.signal);
      }
      return { logged: input.lines?.length ?? 0 };
    }
    if (input.mode === 'big') return '0123456789'.repeat(Math.ceil((input.chars ?? 0) / 10)).slice(0, input.chars ?? 0);
    if (input.mode === 'fail-long') throw new Error(`long failure ${'#'.repeat(input.chars ?? 0)}`);
    if (input.mode === 'fail-once' && !failedOnce.has(job.id)) {
      failedOnce.add(job.id);
      throw new Error(`fail-once: job ${job.id} fails on its first run`);
    }
    return { echo: input };
  })();
};

export interface DashboardFixture {
  readonly harness: Harness;
  readonly server: HarnessServer;
  readonly worker: LocalWorker;
  readonly launcher: Launcher;
  /** `<url>/ui` */
  readonly uiUrl: string;
  close(): Promise<void>;
}

/**
 * Start the harness (key required), its worker and its launcher; `testInput` prefills
 * the submit form (null: none), `endpointInputs` gives endpoints input schemas, `gpu`
 * is the dashboard's GPU source (default none).
 */
export async function startDashboardFixture(
  options: {
    testInput?: unknown;
    concurrency?: number;
    endpointInputs?: Record<string, EndpointInputSpec>;
    gpu?: DashboardGpuSource;
    /** Load-balancing settings (e.g. a short forgetAfterMs); default the server's. */
    loadBalancing?: { pingIntervalMs?: number; forgetAfterMs?: number };
  } = {},
): Promise<DashboardFixture> {
  const logger = pino({ level: 'silent' });
  const jobLogs = new JobLogBuffer();
  const harness = new Harness();
  const store = new InMemoryManagementStore();
  const testInput = options.testInput === undefined ? { input: { mode: 'echo', prompt: 'hello' } } : options.testInput;
  const launcher = new Launcher(
    {
      images: {
        [CRASH_IMAGE]: { command: 'exit 3' },
        [IMPORT_ERROR_IMAGE]: { command: `echo 'Traceback (most recent call last):' >&2; echo '${IMPORT_ERROR_LINE}' >&2; exit 1` },
        [WORKER_IMAGE]: { command: nodeCommandFor(FIXTURE), cwd: REPO_ROOT },
      },
      tickMs: 100,
      backoff: { baseMs: 300, maxMs: 2_000, unhealthyAfter: 3 },
    },
    { harness, store, logger },
  );
  const server = await startHarnessServer({
    harness,
    apiKey: API_KEY,
    dashboard: { ...(testInput === null ? {} : { testInput }), ...(options.gpu ? { gpu: options.gpu } : {}), jobLogs },
    management: { store },
    launchedWorkers: launcher,
    ...(options.endpointInputs ? { endpointInputs: options.endpointInputs } : {}),
    ...(options.loadBalancing ? { loadBalancing: options.loadBalancing } : {}),
  });
  launcher.start({ url: server.url, apiKey: API_KEY });
  const config = resolveOptions({
    endpointId: ENDPOINT,
    concurrency: options.concurrency ?? 8,
    shutdownTimeoutMs: 2_000,
    timeoutGraceMs: 500,
    logger,
  });
  // The worker's job lines reach the job page as with --serve-api (job-log-tap.ts); written nowhere else.
  const workerLogger = tapJobLogs(pino({ level: 'info' }, new Writable({ write: (_chunk, _encoding, done) => done() })), jobLogs);
  const worker = startLocalWorker(fixtureHandler as Handler<unknown>, config, workerLogger, harness);
  return {
    harness,
    server,
    worker,
    launcher,
    uiUrl: `${server.url}/ui`,
    close: async () => {
      await launcher.close();
      await server.close();
      await worker.stop();
      await harness.close();
    },
  };
}

/** Launch headless Chromium, or throw naming the fix. */
export async function launchChromium(): Promise<Browser> {
  const { executablePath, env, source } = await findChromium();
  try {
    return await chromium.launch({
      executablePath,
      // A fixed locale: under LANG=C.UTF-8 (Debian's default) the bundled build reports the
      // language 'en-US@posix', which Intl (toLocaleTimeString) rejects.
      env: { ...process.env, LANG: 'en_US.UTF-8', ...env },
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
  } catch (error) {
    throw new Error(`Chromium (${source}, ${executablePath}) did not start; set CHROMIUM_PATH to another Chromium or Chrome: ${String(error)}`, {
      cause: error,
    });
  }
}
