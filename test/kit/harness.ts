/**
 * @module test/kit/harness
 * A harness for tests, two ways: in process (a `Harness` and its HTTP server on
 * 127.0.0.1, port 0) or as the real `serverless-worker harness` CLI in a child process,
 * started once its banner is printed.
 */
import { join } from 'node:path';
import { Harness, type HarnessOptions } from '../../src/harness/index.js';
import { createHarnessServer, type HarnessServer, type HarnessServerOptions } from '../../packages/platform/src/harness/server-api.js';
import { createMetrics } from '../../src/metrics/index.js';
import { REPO_ROOT, runTs, type ChildList, type TsChild } from '../child-process.js';

/**
 * A harness server on 127.0.0.1 (port 0 unless given) for `harness` (default a new one);
 * rate limits off and a metrics registry of its own unless given (tests of other things
 * must not trip the limits, nor share counters).
 */
export async function startHarnessServer(options: Partial<Omit<HarnessServerOptions, 'harness'>> & { harness?: Harness } = {}): Promise<HarnessServer> {
  return createHarnessServer({
    rateLimits: false,
    metrics: createMetrics({ defaultMetrics: false }),
    ...options,
    harness: options.harness ?? new Harness(),
    host: '127.0.0.1',
    port: options.port ?? 0,
  });
}

export interface TestServer {
  readonly harness: Harness;
  readonly server: HarnessServer;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `http://127.0.0.1:<port>/v2/<endpoint>` */
  endpointUrl(endpointId?: string): string;
  /** Close the server, then the harness. */
  close(): Promise<void>;
}

/** A harness (with `harnessOptions`) and its server on port 0; see startHarnessServer. */
export async function startTestServer(options: Partial<Omit<HarnessServerOptions, 'harness'>> = {}, harnessOptions: HarnessOptions = {}): Promise<TestServer> {
  const harness = new Harness(harnessOptions);
  const server = await startHarnessServer({ ...options, harness, port: 0 });
  return {
    harness,
    server,
    url: server.url,
    endpointUrl: (endpointId = 'ep') => `${server.url}/v2/${endpointId}`,
    close: async () => {
      await server.close();
      await harness.close();
    },
  };
}

const CLI = join(REPO_ROOT, 'src/cli/main.ts');

/**
 * Wait for a `serverless-worker harness` child to print its address, and for its banner
 * to contain `readyText` too; answers the address and the banner read so far. Rejects
 * when the child exits first, with its stderr.
 */
export function harnessListening(child: TsChild, readyText: string): Promise<{ url: string; banner: string }> {
  let banner = '';
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (data: Buffer) => {
      banner += data.toString('utf8');
      const match = /harness listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner);
      if (match?.[1] && banner.includes(readyText)) resolve({ url: match[1], banner });
    });
    void child.then((result) => reject(new Error(`harness exited early (${String(result.exitCode)}): ${String(result.stderr)}`)));
  });
}

export interface HarnessProcess {
  readonly child: TsChild;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** What it printed on stdout up to the ready text. */
  readonly banner: string;
  /** The RUNPOD_* variables it printed for workers (`export NAME='value'` lines). */
  readonly workerEnv: Record<string, string>;
  /** Its stderr so far. */
  stderr(): string;
}

export interface HarnessProcessOptions {
  /** The port (default 0: any). */
  port?: number;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Started once the banner contains this too (default `RUNPOD_WEBHOOK_PING`, the last worker variable). */
  readyText?: string;
  /** Kill it after this long (default runTs's, 60 s). */
  timeoutMs?: number;
}

/** `serverless-worker harness --port <port> ...args` as a child process (added to `children`), once its banner is out. */
export async function startHarnessProcess(children: ChildList, args: readonly string[], options: HarnessProcessOptions = {}): Promise<HarnessProcess> {
  const child = runTs(CLI, ['harness', '--port', String(options.port ?? 0), ...args], {
    env: options.env ?? {},
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
  });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (data: Buffer) => (stderr += data.toString('utf8')));
  const { url, banner } = await harnessListening(child, options.readyText ?? 'RUNPOD_WEBHOOK_PING');
  const workerEnv = Object.fromEntries(
    [...banner.matchAll(/export (RUNPOD_\w+)='([^']*)'/g)].map((match) => [match[1] as string, match[2] as string] as const),
  );
  return { child, url, banner, workerEnv, stderr: () => stderr };
}
