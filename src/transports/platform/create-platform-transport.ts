/**
 * @module transports/platform/create-platform-transport
 * A platform transport made from the process environment (the RUNPOD_* variables).
 */
import { parsePlatformEnv } from './platform-env.js';
import { PlatformTransport } from './platform-transport.js';
import type { PlatformTransportOptions } from './options.js';

/** Options of createPlatformTransport: the transport's, with the environment unparsed. */
export type CreatePlatformTransportOptions = Omit<PlatformTransportOptions, 'env'> & {
  /** Variables to read; default process.env. */
  readonly processEnv?: NodeJS.ProcessEnv;
};

/**
 * A platform transport from the environment variables.
 * @throws ServerlessWorkerError SW_INVALID_ENV naming a malformed variable, SW_INVALID_OPTIONS naming a bad setting.
 */
export function createPlatformTransport(options: CreatePlatformTransportOptions): PlatformTransport {
  const { processEnv, ...rest } = options;
  return new PlatformTransport({ ...rest, env: parsePlatformEnv(processEnv ?? process.env) });
}
