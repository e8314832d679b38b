/**
 * The SDK loads the platform package only at its own version (src/local/platform-package.ts):
 * an entry point of another version, or of none, is refused with SW_PLATFORM_VERSION_MISMATCH
 * naming both versions and the install line; a missing package is SW_PLATFORM_MISSING. The
 * packed packages' test (test/package/packed-package.test.ts) does the same with an installed
 * platform of another version.
 */
import { describe, expect, it } from 'vitest';
import { isServerlessWorkerError } from '../../src/job/index.js';
import { loadPlatform, PLATFORM_INSTALL } from '../../src/local/platform-package.js';
import { RUNTIME_VERSION } from '../../src/version.js';

async function refusal(load: () => Promise<{ PLATFORM_VERSION: string }>): Promise<unknown> {
  try {
    await loadPlatform('--serve-api', load);
  } catch (error) {
    return error;
  }
  throw new Error('loadPlatform accepted the entry point');
}

describe('loading the platform package', () => {
  it('answers an entry point of the same version as it is', async () => {
    const entry = { PLATFORM_VERSION: RUNTIME_VERSION, runServeApi: () => 'ran' };
    await expect(loadPlatform('--serve-api', () => Promise.resolve(entry))).resolves.toBe(entry);
  });

  it('refuses one of another version, naming both versions and the fix', async () => {
    const error = await refusal(() => Promise.resolve({ PLATFORM_VERSION: '9.9.9' }));
    expect(isServerlessWorkerError(error) && error.code).toBe('SW_PLATFORM_VERSION_MISMATCH');
    expect((error as Error).message).toContain(`serverless-worker ${RUNTIME_VERSION} cannot use serverless-worker-platform 9.9.9`);
    expect((error as Error).message).toContain(PLATFORM_INSTALL);
    expect((error as { details?: unknown }).details).toEqual({ package: 'serverless-worker-platform', sdkVersion: RUNTIME_VERSION, platformVersion: '9.9.9' });
  });

  it('refuses one that carries no version (older than the check)', async () => {
    const error = await refusal(() => Promise.resolve({} as { PLATFORM_VERSION: string }));
    expect(isServerlessWorkerError(error) && error.code).toBe('SW_PLATFORM_VERSION_MISMATCH');
    expect((error as Error).message).toContain('of an unknown version');
  });

  it('says what to install where the package is missing', async () => {
    const missing = Object.assign(new Error("Cannot find package 'serverless-worker-platform' imported from /x"), { code: 'ERR_MODULE_NOT_FOUND' });
    const error = await refusal(() => Promise.reject(missing));
    expect(isServerlessWorkerError(error) && error.code).toBe('SW_PLATFORM_MISSING');
    expect((error as Error).message).toContain(PLATFORM_INSTALL);
  });
});
