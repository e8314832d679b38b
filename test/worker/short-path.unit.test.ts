/**
 * SW_OUTPUT_TOO_DEEP names where a value passes the depth limit in a short path (issue 32
 * item 8): a run of one step is written once with its count, and no path is longer than
 * SHORT_PATH_MAX_CHARS (it used to be a 3 KB `[0][0]...`).
 */
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/job/limits.js';
import { isServerlessWorkerError } from '../../src/job/errors.js';
import { toJsonForm } from '../../src/worker/serializable-check.js';
import { SHORT_PATH_MAX_CHARS, shortPath } from '../../src/worker/short-path.js';

describe('shortPath', () => {
  it('writes a run of one step once with its count, and keeps short paths as they are', () => {
    expect(shortPath(`output${'[0]'.repeat(1000)}.a`)).toBe('output[0]×1000.a');
    expect(shortPath('output.items[3].n')).toBe('output.items[3].n');
    expect(shortPath('output[0][0][0].x')).toBe('output[0][0][0].x');
    expect(shortPath(`output${'.k'.repeat(5)}["a b"]`)).toBe('output.k×5["a b"]');
  });

  it('clips a path without runs to SHORT_PATH_MAX_CHARS around an ellipsis', () => {
    const long = `output${Array.from({ length: 400 }, (_, i) => `[${i}]`).join('')}`;
    const short = shortPath(long);
    expect(short.length).toBeLessThanOrEqual(SHORT_PATH_MAX_CHARS);
    expect(short.startsWith('output[0][1]')).toBe(true);
    expect(short.endsWith('[399]')).toBe(true);
    expect(short).toContain('…');
  });
});

describe('SW_OUTPUT_TOO_DEEP', () => {
  it('names a value 3 000 levels deep in a message under 400 characters', () => {
    let deep: unknown = 0;
    for (let i = 0; i < 3_000; i++) deep = [deep];
    let caught: unknown;
    try {
      toJsonForm({ deep }, 'output', 'Handler output');
    } catch (error) {
      caught = error;
    }
    expect(isServerlessWorkerError(caught) && caught.code).toBe('SW_OUTPUT_TOO_DEEP');
    const error = caught as Error & { details?: { found?: string } };
    expect(error.message.length).toBeLessThan(400);
    expect(error.details?.found).toBe(`output.deep[0]×${MAX_JSON_DEPTH - 1}`);
  });
});
