/**
 * `--store`'s PostgreSQL connection string: an `sslmode` that is not one of libpq's modes
 * is refused with the modes named (issue 49 item 8: `sslmode=bogus` was taken silently,
 * as a verified TLS connection), before any connection is tried.
 */
import { describe, expect, it } from 'vitest';
import { openJobStore, SSL_MODES, sslModeProblem } from '../../../packages/platform/src/harness/open-store.js';

const url = (query: string): string => `postgres://sw:pw-Secret@db.internal:5432/jobs${query}`;

describe('the store spec', () => {
  it('refuses sslmode=bogus naming the allowed modes, without the password, before connecting', async () => {
    const error = (await openJobStore(url('?sslmode=bogus')).then(
      () => new Error('opened'),
      (caught: unknown) => caught,
    )) as Error & { code?: string };
    expect(error.code).toBe('SW_INVALID_OPTIONS');
    expect(error.message).toContain('sslmode=bogus');
    expect(error.message).toContain('disable, allow, prefer, require, verify-ca, verify-full');
    expect(error.message).not.toContain('pw-Secret');
  });

  it("takes each of libpq's modes and none; checks every sslmode given", () => {
    for (const mode of SSL_MODES) expect(sslModeProblem(url(`?sslmode=${mode}`)), mode).toBeUndefined();
    expect(sslModeProblem(url(''))).toBeUndefined();
    expect(sslModeProblem(url('?sslmode=verify-full&sslmode=Require'))).toContain('sslmode=Require');
  });
});
