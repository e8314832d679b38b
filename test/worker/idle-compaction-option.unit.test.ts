/**
 * The serve() option `idleCompactionMs` (issue 46 item 5): the wait of the idle
 * compaction's full step on the platform, or `false`; anything else refused
 * SW_INVALID_OPTIONS naming the option.
 */
import { describe, expect, it } from 'vitest';
import { isServerlessWorkerError } from '../../src/job/index.js';
import { resolveOptions } from '../../src/worker/options.js';

function refusal(options: unknown): { code: unknown; message: string } {
  try {
    resolveOptions(options);
  } catch (error) {
    return { code: isServerlessWorkerError(error) ? error.code : undefined, message: (error as Error).message };
  }
  throw new Error('accepted');
}

describe('idleCompactionMs', () => {
  it('takes a wait in ms or false, default 30 s', () => {
    expect(resolveOptions({}).idleCompactionMs).toBe(30_000);
    expect(resolveOptions({ idleCompactionMs: 100 }).idleCompactionMs).toBe(100);
    expect(resolveOptions({ idleCompactionMs: false }).idleCompactionMs).toBe(false);
  });

  it.each([[true], [99], [1.5], ['60000'], [86_400_001]])('refuses %j with SW_INVALID_OPTIONS naming the option', (value) => {
    const { code, message } = refusal({ idleCompactionMs: value });
    expect(code).toBe('SW_INVALID_OPTIONS');
    expect(message).toContain('idleCompactionMs');
  });
});
