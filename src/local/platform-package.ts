/**
 * @module local/platform-package
 * The SDK reaches the local platform (the serverless-worker-platform package: the harness
 * server, --serve-api, build, the management CLI) only here, through a dynamic import by
 * package name, so that a worker image installs and starts with the SDK alone. Where the
 * package is missing, the caller gets SW_PLATFORM_MISSING: one line naming what to install.
 */
import { ServerlessWorkerError } from '../job/index.js';
import { RUNTIME_VERSION } from '../version.js';

export const PLATFORM_PACKAGE = 'serverless-worker-platform';

/** The install line for the platform at the SDK's own version (the two move together). */
export const PLATFORM_INSTALL = `npm install --save-dev ${PLATFORM_PACKAGE}@${RUNTIME_VERSION}`;

/** True when `error` says that the platform package itself (not one of its dependencies) cannot be found. */
export function isPlatformMissing(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  return typeof message === 'string' && message.includes(`'${PLATFORM_PACKAGE}'`);
}

/** The error for `what` (a mode or a command) when the platform is not installed. */
export function platformMissing(what: string, cause?: unknown): ServerlessWorkerError {
  return new ServerlessWorkerError(
    'SW_PLATFORM_MISSING',
    `${what} needs the local platform package, which is not installed: ${PLATFORM_INSTALL}`,
    { package: PLATFORM_PACKAGE, version: RUNTIME_VERSION },
    { cause },
  );
}

/**
 * Load one of the platform's modules for `what`. `load` is the literal `import()` of its
 * entry (a bundler follows it and carries the module into the bundle).
 */
export async function loadPlatform<T>(what: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isPlatformMissing(error)) throw platformMissing(what, error);
    throw error;
  }
}
