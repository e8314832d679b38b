/**
 * @module worker/platform-extras
 * What the worker adds on the platform beyond taking jobs: which GPU the image
 * expects (the start-up check), and where to serve /metrics. Each comes from an
 * option, overridden by an environment variable, so an image can be tuned at deploy
 * time without a rebuild.
 */
import type { GpuExpectation } from '../gpu/index.js';
import { parseOnceOrThrow } from '../job/index.js';
import type { WorkerConfig } from './options.js';
import { DEFAULT_HARNESS_RETURN_WAIT_MS, workerEnvSchema } from '../settings/worker-env.js';

const ExtrasEnvSchema = workerEnvSchema('expectGpu', 'metricsPort', 'metricsHost', 'harnessReturnWaitMs');

export interface PlatformExtras {
  /** The GPU the start-up check requires, or undefined for no check. */
  readonly expectGpu: GpuExpectation | undefined;
  /** Port for /metrics, or undefined when off. */
  readonly metricsPort: number | undefined;
  readonly metricsHost: string;
  /** A launched worker whose harness is gone: how long it keeps its results for a harness that comes back, ms (local/harness-gone.ts). */
  readonly harnessReturnWaitMs: number;
}

/** Set and not explicitly empty: the NVIDIA container toolkit's "no GPU" values. */
function nvidiaRequested(value: string | undefined): boolean {
  return value !== undefined && !['', 'void', 'none'].includes(value.trim().toLowerCase());
}

/**
 * `auto`: an image built on a CUDA base sets NVIDIA_VISIBLE_DEVICES, a ROCm one sets
 * HIP_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES at run time; a CPU image sets neither
 * and gets no check.
 */
export function autoGpuExpectation(env: NodeJS.ProcessEnv): GpuExpectation | undefined {
  if (nvidiaRequested(env.NVIDIA_VISIBLE_DEVICES)) return 'nvidia';
  if (env.HIP_VISIBLE_DEVICES !== undefined || env.ROCR_VISIBLE_DEVICES !== undefined) return 'amd';
  return undefined;
}

/** Resolve the platform extras from the options and the environment; throws SW_INVALID_ENV naming a bad variable. */
export function resolvePlatformExtras(config: Pick<WorkerConfig, 'expectGpu' | 'metricsPort' | 'metricsHost'>, env: NodeJS.ProcessEnv): PlatformExtras {
  const parsed = parseOnceOrThrow(ExtrasEnvSchema, env, 'SW_INVALID_ENV', 'environment');
  const expect = parsed.SERVERLESS_WORKER_EXPECT_GPU ?? config.expectGpu;
  const metricsPort = parsed.SERVERLESS_WORKER_METRICS_PORT ?? config.metricsPort;
  return {
    expectGpu: expect === 'auto' ? autoGpuExpectation(env) : expect === 'none' ? undefined : expect,
    metricsPort,
    metricsHost: parsed.SERVERLESS_WORKER_METRICS_HOST ?? config.metricsHost,
    harnessReturnWaitMs: parsed.SERVERLESS_WORKER_HARNESS_RETURN_WAIT_MS ?? DEFAULT_HARNESS_RETURN_WAIT_MS,
  };
}
