/**
 * Running built images on the test engine (test/docker/engine/) the way the platform and
 * a worker author would: a dry run, `--serve-api`, a platform worker joined to a harness
 * child process, a load-balancing worker registered with it. Every container runs on the
 * host network (the engine has no bridge) and is removed by `ContainerList.removeAll()`.
 */
import { expect } from 'vitest';
import { jsonLines, type ChildList, type TsChild } from '../child-process.js';
import { call, freePort, startHarnessProcess, waitFor } from '../kit/index.js';
import type { TestDockerEngine } from './engine/use-docker-engine.js';

/** The containers a test file started. */
export class ContainerList {
  readonly #ids: string[] = [];
  constructor(readonly engine: TestDockerEngine) {}

  /** `docker run -d --network host <args>`; answers the container id. */
  async start(args: readonly string[]): Promise<string> {
    const { stdout } = await this.engine.docker(['run', '-d', '--network', 'host', ...args]);
    const id = String(stdout).trim();
    this.#ids.push(id);
    return id;
  }

  async removeAll(): Promise<void> {
    const ids = this.#ids.splice(0);
    if (ids.length > 0) await this.engine.docker(['rm', '-f', ...ids], { reject: false });
  }
}

/** `docker run --rm --network host <args>`: exit code, stdout, stderr. */
export async function runOnce(engine: TestDockerEngine, args: readonly string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const result = await engine.docker(['run', '--rm', '--network', 'host', ...args], { reject: false, timeout: 120_000 });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** The last JSON line a dry run printed (its final record). */
export function finalRecord(stdout: string): unknown {
  return jsonLines(stdout).at(-1);
}

/** State of a container: running, and its exit code once it stopped. */
export async function containerState(engine: TestDockerEngine, id: string): Promise<{ running: boolean; exitCode: number }> {
  const { stdout } = await engine.docker(['inspect', '-f', '{{.State.Running}} {{.State.ExitCode}}', id]);
  const [running, exitCode] = String(stdout).trim().split(' ');
  return { running: running === 'true', exitCode: Number(exitCode) };
}

export async function logsOf(engine: TestDockerEngine, id: string): Promise<string> {
  const result = await engine.docker(['logs', id], { reject: false, all: true });
  return String(result.all).slice(-4_000);
}

/** Wait until `url` answers (any HTTP status); fails early, with the logs, if the container stops. */
export async function untilAnswers(engine: TestDockerEngine, id: string, url: string, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    async () => {
      const state = await containerState(engine, id);
      if (!state.running)
        throw new Error(`the container stopped (exit code ${state.exitCode}) before ${url} answered; its output:\n${await logsOf(engine, id)}`);
      return fetch(url).then(
        (answer) => answer.status > 0,
        () => false,
      );
    },
    `${url} to answer`,
    timeoutMs,
    200,
  );
}

/** The image's `--serve-api` answers /runsync with `input`, /ui and /docs. Answers the /runsync body. */
export async function checkServeApi(containers: ContainerList, tag: string, input: unknown): Promise<unknown> {
  const port = await freePort();
  const id = await containers.start([tag, '--serve-api', '--host', '127.0.0.1', '--port', String(port)]);
  const base = `http://127.0.0.1:${port}`;
  await untilAnswers(containers.engine, id, `${base}/health`);
  const runsync = await call('POST', `${base}/v2/local/runsync`, { body: { input } });
  expect(runsync.status, runsync.text).toBe(200);
  const ui = await call('GET', `${base}/ui`);
  expect(ui.status).toBe(200);
  expect(ui.headers.get('content-type')).toContain('text/html');
  const docs = await call('GET', `${base}/docs`);
  expect(docs.status).toBe(200);
  expect(docs.text.toLowerCase()).toContain('swagger');
  await containers.engine.docker(['stop', '-t', '20', id]);
  expect(await containerState(containers.engine, id)).toEqual({ running: false, exitCode: 0 });
  return runsync.json;
}

export interface Harness {
  readonly child: TsChild;
  readonly url: string;
  /** The RUNPOD_* variables it prints for workers, for endpoint `endpoint`. */
  workerEnv(endpoint: string): Record<string, string>;
}

/** `serverless-worker harness` on 127.0.0.1, port 0, with these endpoints. */
export async function startHarness(children: ChildList, endpoints: readonly string[]): Promise<Harness> {
  const { child, url, workerEnv: printed } = await startHarnessProcess(children, ['--no-rate-limit', '--endpoint', ...endpoints], { timeoutMs: 600_000 });
  return {
    child,
    url,
    workerEnv: (endpoint) => {
      const env: Record<string, string> = {};
      for (const [name, value] of Object.entries(printed)) env[name] = value.replace(/\/v2\/[^/]+\//, `/v2/${endpoint}/`);
      env.RUNPOD_ENDPOINT_ID = endpoint;
      return env;
    },
  };
}

/** `-e NAME=value` arguments. */
export function envArgs(env: Record<string, string>): string[] {
  return Object.entries(env).flatMap(([name, value]) => ['-e', `${name}=${value}`]);
}

/** Poll a job's status until it is final. */
export async function finalStatus(endpointUrl: string, jobId: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  return waitFor(
    async () => {
      const answer = await call('GET', `${endpointUrl}/status/${jobId}`);
      const body = answer.json as Record<string, unknown>;
      return ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(String(body.status)) ? body : undefined;
    },
    `job ${jobId} to end`,
    timeoutMs,
    100,
  );
}

/** Wait for a container to stop; answers its exit code. */
export async function exitCodeOf(engine: TestDockerEngine, id: string): Promise<number> {
  const { stdout } = await engine.docker(['wait', id], { timeout: 120_000 });
  return Number(String(stdout).trim());
}
