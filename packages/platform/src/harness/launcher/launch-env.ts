/**
 * @module harness/launcher/launch-env
 * The environment of one launched worker: the harness's own environment, the
 * template's `env`, the worker API variables, the worker's id, its GPU and CPU counts,
 * and its GPUs in the vendor's visible-devices variable.
 */
import { workerEnvFor } from '../worker-api/worker-env.js';
import type { Endpoint, Template } from '../management/index.js';
import type { GpuPool } from './gpu-pool.js';

export interface LaunchEnvInput {
  /** The harness's origin, like http://127.0.0.1:8000. */
  url: string;
  apiKey?: string | undefined;
  pingIntervalMs?: number | undefined;
  endpoint: Pick<Endpoint, 'id' | 'computeType' | 'vcpuCount'>;
  template: Pick<Template, 'env'>;
  workerId: string;
  /** The worker's GPUs ([] for none). */
  gpus: readonly string[];
  /** The machine's GPU pool; undefined when no GPUs are known. */
  pool: Pick<GpuPool, 'variable'> | undefined;
  /** The harness's environment; default process.env. */
  base?: NodeJS.ProcessEnv;
}

/** The variables a launched worker starts with (later entries win). */
export function launchEnv(input: LaunchEnvInput): NodeJS.ProcessEnv {
  const { endpoint, workerId, gpus, pool } = input;
  return {
    ...(input.base ?? process.env),
    ...input.template.env,
    ...workerEnvFor(input.url, endpoint.id, {
      ...(input.apiKey !== undefined ? { apiKey: input.apiKey } : {}),
      ...(input.pingIntervalMs !== undefined ? { pingIntervalMs: input.pingIntervalMs } : {}),
    }),
    RUNPOD_POD_ID: workerId,
    RUNPOD_POD_HOSTNAME: workerId,
    RUNPOD_GPU_COUNT: String(gpus.length),
    ...(endpoint.computeType === 'CPU' ? { RUNPOD_CPU_COUNT: String(endpoint.vcpuCount) } : {}),
    // A CPU worker on a GPU machine sees no GPU; a GPU worker sees only its own.
    ...(pool ? { [pool.variable]: gpus.join(',') } : {}),
  };
}

/**
 * What a worker is started with that a change of settings alters: the endpoint's
 * release (template updates bump it), its template, compute type, GPUs and vCPUs per
 * worker, the template's image and env, and what its backend runs (launch-backend.ts
 * `runKey`: the process command, or the container's entrypoint, command and volume). A worker
 * whose key differs from the endpoint's current one is rolled like a release: idle ones
 * stop, busy ones once idle. Scaling settings (workersMin/Max, idleTimeout, scaler) are
 * not in it: they change how many workers run, not how each runs.
 */
export function launchKey(
  endpoint: Pick<Endpoint, 'version' | 'templateId' | 'computeType' | 'gpuCount' | 'vcpuCount'>,
  template: Pick<Template, 'imageName' | 'env'>,
  run: unknown,
): string {
  return JSON.stringify([
    endpoint.version,
    endpoint.templateId,
    endpoint.computeType,
    endpoint.computeType === 'GPU' ? endpoint.gpuCount : 0,
    endpoint.computeType === 'CPU' ? endpoint.vcpuCount : 0,
    template.imageName,
    Object.entries(template.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    run,
  ]);
}
