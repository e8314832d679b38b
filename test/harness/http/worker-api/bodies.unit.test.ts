/**
 * job-done and job-stream bodies (bodies.ts): the usual ones skip zod (issue 34, CPU per
 * job) and read the same as through the schema; the rest still go through it, with its
 * conversions and its errors.
 */
import { describe, expect, it } from 'vitest';
import { DoneBodySchema, StreamBodySchema, parseJsonObject } from '../../../../packages/platform/src/harness/worker-api/bodies.js';

describe('parseJsonObject of worker bodies', () => {
  it('reads the usual bodies as the schema does', () => {
    for (const body of [{ output: { ok: true } }, { error: 'boom' }, { status: 'IN_PROGRESS', output: 1 }, { output: [], stopPod: true, extra: 'kept' }]) {
      expect(parseJsonObject(DoneBodySchema, JSON.stringify(body), 'job-done')).toEqual(DoneBodySchema.parse(body));
    }
    for (const body of [{ output: 'chunk' }, { output: 'chunk', metrics: { tokens: 3 } }]) {
      expect(parseJsonObject(StreamBodySchema, JSON.stringify(body), 'job-stream')).toEqual(StreamBodySchema.parse(body));
    }
  });

  it('leaves the rest to the schema: its conversions and its errors', () => {
    expect(parseJsonObject(DoneBodySchema, '{"output":1,"stopPod":"true"}', 'job-done')).toEqual({ output: 1, stopPod: true });
    expect(() => parseJsonObject(DoneBodySchema, '{"status":5}', 'job-done')).toThrow(
      expect.objectContaining({ code: 'SW_INVALID_REQUEST', message: expect.stringContaining('job-done body') }),
    );
    expect(() => parseJsonObject(StreamBodySchema, '{"output":1,"metrics":[1]}', 'job-stream')).toThrow(
      expect.objectContaining({ code: 'SW_INVALID_REQUEST', message: expect.stringContaining('job-stream body') }),
    );
    expect(() => parseJsonObject(DoneBodySchema, '[1]', 'job-done')).toThrow(expect.objectContaining({ code: 'SW_INVALID_REQUEST' }));
  });
});
