/**
 * The error registry across the two packages (src/job/error-codes.ts): the platform's own
 * table, registered when it loads, gives its codes their HTTP status and makes them known
 * to isServerlessWorkerError; a code is never in both tables, and a second table that
 * redefines a code is refused.
 */
import { describe, expect, it } from 'vitest';
import { PLATFORM_ERROR_CODES } from '../../packages/platform/src/job/platform-error-codes.js';
import { ERROR_CODES, errorCodeEntry, isKnownErrorCode, registerErrorCodes, ServerlessWorkerError } from '../../src/job/index.js';

describe('the error registry', () => {
  it("knows the platform's codes once its table is loaded, with their status", () => {
    expect(isKnownErrorCode('SW_UNAUTHORIZED')).toBe(true);
    expect(new ServerlessWorkerError('SW_UNAUTHORIZED', 'wrong key').status).toBe(401);
    expect(errorCodeEntry('SW_TEMPLATE_NOT_FOUND')).toBe(PLATFORM_ERROR_CODES.SW_TEMPLATE_NOT_FOUND);
    expect(isKnownErrorCode('SW_NO_SUCH_CODE')).toBe(false);
  });

  it('keeps every code in one table only', () => {
    expect(Object.keys(PLATFORM_ERROR_CODES).filter((code) => Object.hasOwn(ERROR_CODES, code))).toEqual([]);
  });

  it('refuses a table that redefines a code, and accepts the same table again', () => {
    expect(() => registerErrorCodes({ SW_JOB_NOT_FOUND: { status: 410, meaning: 'gone', fix: 'none' } })).toThrow(/SW_JOB_NOT_FOUND is registered twice/);
    expect(() => registerErrorCodes(PLATFORM_ERROR_CODES)).not.toThrow();
    expect(errorCodeEntry('SW_JOB_NOT_FOUND')?.status).toBe(404);
  });
});
