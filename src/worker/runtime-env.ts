/**
 * @module worker/runtime-env
 * The runtime variables every mode reads, checked the same way in every mode at start:
 * SERVERLESS_WORKER_EXPECT_GPU, SERVERLESS_WORKER_METRICS_PORT, SERVERLESS_WORKER_METRICS_HOST
 * and SW_LOG_LEVEL (settings/worker-env.ts). The platform mode refused a bad value while
 * the dry run and `--serve-api` ran with it, so an image's CI dry run stayed green for an
 * image that could not start on the platform.
 */
import { parseOnceOrThrow } from '../job/index.js';
import { workerEnvSchema } from '../settings/worker-env.js';

const RuntimeEnvSchema = workerEnvSchema('expectGpu', 'metricsPort', 'metricsHost', 'logLevel');

/** Throws SW_INVALID_ENV naming each bad variable, its value and what it takes. */
export function checkRuntimeEnv(env: NodeJS.ProcessEnv): void {
  parseOnceOrThrow(RuntimeEnvSchema, env, 'SW_INVALID_ENV', 'environment');
}
