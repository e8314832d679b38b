/**
 * @module local/platform-package
 * The SDK reaches the local platform (the serverless-worker-platform package: the harness
 * server, --serve-api, build, the management CLI) only here, through a dynamic import by
 * package name, so that a worker image installs and starts with the SDK alone. Where the
 * package is missing, the caller gets SW_PLATFORM_MISSING: one line naming what to install;
 * where it is of another version than the SDK (the two are released together, and the
 * platform is built against exactly this SDK), SW_PLATFORM_VERSION_MISMATCH, naming both.
 */
import { ServerlessWorkerError } from '../job/index.js';
import type { PlatformEntry } from './platform-contract.js';
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

/** The error for `what` when the installed platform is of another version than this SDK. */
export function platformVersionMismatch(what: string, platformVersion: string): ServerlessWorkerError {
  return new ServerlessWorkerError(
    'SW_PLATFORM_VERSION_MISMATCH',
    `${what}: serverless-worker ${RUNTIME_VERSION} cannot use ${PLATFORM_PACKAGE} ${platformVersion}; the two packages are released together and must carry the same version: ${PLATFORM_INSTALL} (or move both to the same newer version)`,
    { package: PLATFORM_PACKAGE, sdkVersion: RUNTIME_VERSION, platformVersion },
  );
}

/** `entry` itself when its package is of this SDK's version; otherwise SW_PLATFORM_VERSION_MISMATCH. */
export function sameVersionPlatform<T extends PlatformEntry>(what: string, entry: T): T {
  const version: unknown = (entry as { PLATFORM_VERSION?: unknown }).PLATFORM_VERSION;
  if (version !== RUNTIME_VERSION) throw platformVersionMismatch(what, typeof version === 'string' ? version : 'of an unknown version (before 0.1.0)');
  return entry;
}

/**
 * Load one of the platform's entry points for `what`, of this SDK's version. `load` is the
 * literal `import()` of its entry (a bundler follows it and carries the module into the bundle).
 */
export async function loadPlatform<T extends PlatformEntry>(what: string, load: () => Promise<T>): Promise<T> {
  let entry: T;
  try {
    entry = await load();
  } catch (error) {
    if (isPlatformMissing(error)) throw platformMissing(what, error);
    throw error;
  }
  return sameVersionPlatform(what, entry);
}
