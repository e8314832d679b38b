/**
 * Issue 46, burst after idle: which flag keeps optimized code through V8's memory reducer on
 * each V8 line (metrics/memory-reducer.ts), that a user's own memory-reducer flag wins, and
 * that the switch sets it once, at once when asked. What the flag does in a real server is
 * test/local/reducer-keeps-code.system.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { codeKeepingReducerFlag, keepOptimizedCodeOnceReduced } from '../../src/metrics/memory-reducer.js';

describe('codeKeepingReducerFlag', () => {
  it('names --no-memory-reducer-favors-memory on V8 13 (Node 24) alone: V8 12 and 14 have no such flag', () => {
    expect(codeKeepingReducerFlag('13.6.233.17-node.63', [])).toBe('--no-memory-reducer-favors-memory');
    expect(codeKeepingReducerFlag('11.3.244.8-node.38', [])).toBeUndefined();
    expect(codeKeepingReducerFlag('12.4.254.21-node.33', [])).toBeUndefined();
    expect(codeKeepingReducerFlag('14.6.202.34-node.40', [])).toBeUndefined();
  });

  it('leaves V8 as it is where the command line or NODE_OPTIONS names a memory-reducer flag', () => {
    for (const given of [
      ['--memory-reducer-favors-memory'],
      ['--no-memory-reducer'],
      ['--memory_reducer_favors_memory'],
      ['--gc-interval=5', '--no-memory-reducer-for-small-heaps'],
    ]) {
      expect(codeKeepingReducerFlag('13.6.233.17-node.63', given), given.join(' ')).toBeUndefined();
    }
    expect(codeKeepingReducerFlag('13.6.233.17-node.63', ['--max-old-space-size=512', '--gc-memory-reducer-start-delay-ms=1'])).toBe(
      '--no-memory-reducer-favors-memory',
    );
  });
});

describe('keepOptimizedCodeOnceReduced', () => {
  it('sets its flag when asked, once', () => {
    // A flag V8 knows on every line, at its default value.
    const reducer = keepOptimizedCodeOnceReduced('--no-trace-gc');
    expect(reducer.switched).toBe(false);
    reducer.now();
    expect(reducer.switched).toBe(true);
    reducer.now();
    expect(reducer.switched).toBe(true);
    reducer.stop();
  });

  it('sets its flag by itself afterMs later', async () => {
    const reducer = keepOptimizedCodeOnceReduced('--no-trace-gc', 50);
    expect(reducer.switched).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(reducer.switched).toBe(true);
  });

  it('sets nothing where there is no flag', () => {
    const reducer = keepOptimizedCodeOnceReduced(undefined);
    reducer.now();
    expect(reducer.switched).toBe(false);
    reducer.stop();
  });
});
