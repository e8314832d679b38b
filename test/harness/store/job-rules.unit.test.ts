/**
 * The job rules (job-rules.ts) as pure functions: the change each event makes to a job,
 * or its refusal. Both stores apply these; the conformance suite checks the stores.
 */
import { describe, expect, it } from 'vitest';
import {
  cancelChange,
  changeEvents,
  completeChange,
  endChange,
  expiryStop,
  giveBackChange,
  requeueChange,
  retryChange,
  timeoutChange,
  type JobFacts,
} from '../../../src/harness/store/job-rules.js';

const running: JobFacts = {
  id: 'job-1',
  endpointId: 'ep',
  status: 'IN_PROGRESS',
  workerId: 'w1',
  startedAt: 100,
  attempt: 2,
  lost: 1,
  retries: 1,
  retentionMs: 1_000,
  executionTimeoutMs: 500,
};
const queued: JobFacts = { id: 'job-2', endpointId: 'ep', status: 'IN_QUEUE', attempt: 0, lost: 0, retries: 0, retentionMs: 1_000 };

describe('job rules', () => {
  it('completes a running job: output, end time, retention, the worker released, resultFrom for a repeat', () => {
    const change = completeChange(running, 'w1', { kind: 'output', output: { n: 1 } }, 200);
    expect(change).toEqual({
      kind: 'ended',
      counted: 'completed',
      releasedFrom: 'w1',
      dropsChunks: false,
      fields: {
        status: 'COMPLETED',
        output: { n: 1 },
        endedAt: 200,
        deleteAt: 1_200,
        workerId: undefined,
        executionDeadline: undefined,
        resultFrom: { workerId: 'w1', attempt: 2 },
      },
    });
    expect(changeEvents(running, change)).toEqual([
      { type: 'worker', endpointId: 'ep', workerId: 'w1' },
      { type: 'changed', endpointId: 'ep', jobId: 'job-1', status: 'COMPLETED' },
    ]);
  });

  it('fails or times out a job by its result, counted as failed', () => {
    const error = { error_type: 'E', error_message: 'boom', hostname: 'h', worker_id: 'w1', runtime_version: '' };
    expect(completeChange(running, 'w1', { kind: 'error', error }, 200).fields).toMatchObject({ status: 'FAILED', error });
    expect(completeChange(running, 'w1', { kind: 'error', error, timedOut: true }, 200)).toMatchObject({ counted: 'failed', fields: { status: 'TIMED_OUT' } });
  });

  it('cancels a queued job without an end time or a stop, and a running one with a stop to its worker', () => {
    const inQueue = cancelChange(queued, 50);
    expect(inQueue).toMatchObject({ kind: 'ended', fields: { status: 'CANCELLED', deleteAt: 1_050 } });
    expect(inQueue.kind === 'ended' && 'endedAt' in inQueue.fields).toBe(false);
    expect(inQueue.kind === 'ended' && inQueue.counted).toBeUndefined();
    const inProgress = cancelChange(running, 300);
    expect(inProgress).toMatchObject({ kind: 'ended', stop: 'cancelled', releasedFrom: 'w1', fields: { status: 'CANCELLED', endedAt: 300 } });
    if (inProgress.kind !== 'ended') throw new Error('not ended');
    expect(changeEvents(running, inProgress).at(-1)).toEqual({
      type: 'stop',
      endpointId: 'ep',
      workerId: 'w1',
      jobId: 'job-1',
      reason: 'cancelled',
      attempt: 2,
    });
  });

  it('refuses to cancel an ended job, and leaves a cancelled one as it is', () => {
    const refused = cancelChange({ ...running, status: 'COMPLETED' }, 0);
    expect(refused.kind === 'refused' && refused.error.code).toBe('SW_CANCEL_NOT_ALLOWED');
    expect(cancelChange({ ...running, status: 'CANCELLED' }, 0)).toEqual({ kind: 'unchanged' });
  });

  it('requeues a lost job at the end of the queue with its attempt traces cleared and its chunks dropped', () => {
    const change = requeueChange(running, 'requeue', 3, 400);
    expect(change).toEqual({
      kind: 'requeued',
      counted: 'retried',
      releasedFrom: 'w1',
      dropsChunks: true,
      fields: {
        status: 'IN_QUEUE',
        lost: 2,
        retries: 2,
        queuedAt: 400,
        chunkCount: 0,
        workerId: undefined,
        output: undefined,
        error: undefined,
        startedAt: undefined,
        endedAt: undefined,
        resultFrom: undefined,
        executionDeadline: undefined,
        deleteAt: undefined,
        reportedAt: undefined,
      },
    });
    expect(changeEvents(running, change).map((event) => event.type)).toEqual(['worker', 'changed', 'queued']);
  });

  it('ends a job lost more than maxRequeues times FAILED with SW_REQUEUE_LIMIT, its lost count kept', () => {
    const change = requeueChange(running, 'requeue', 1, 400);
    expect(change).toMatchObject({
      kind: 'ended',
      counted: 'failed',
      fields: { status: 'FAILED', lost: 2, endedAt: 400, error: { error_code: 'SW_REQUEUE_LIMIT', worker_id: 'w1' } },
    });
  });

  it('retries only a FAILED or TIMED_OUT job, its lost count starting over', () => {
    expect(retryChange({ ...running, status: 'FAILED', workerId: undefined }, 10)).toMatchObject({
      kind: 'requeued',
      fields: { status: 'IN_QUEUE', lost: 0, retries: 2 },
    });
    expect(retryChange({ ...running, status: 'TIMED_OUT', workerId: undefined }, 10).kind).toBe('requeued');
    const refused = retryChange(running, 10);
    expect(refused.kind === 'refused' && refused.error.code).toBe('SW_RETRY_NOT_ALLOWED');
  });

  it('gives a job back at its place, its attempt undone, nothing counted', () => {
    expect(giveBackChange(running)).toEqual({
      kind: 'returned',
      releasedFrom: 'w1',
      dropsChunks: false,
      fields: {
        status: 'IN_QUEUE',
        attempt: 1,
        workerId: undefined,
        startedAt: undefined,
        executionDeadline: undefined,
        executionTimeoutMs: undefined,
        reportedAt: undefined,
      },
    });
  });

  it('times a running job out with SW_EXECUTION_TIMEOUT and a stop; a ttl stops only a running job', () => {
    expect(timeoutChange(running, 600)).toMatchObject({
      stop: 'timeout',
      counted: 'failed',
      fields: { status: 'TIMED_OUT', error: { error_code: 'SW_EXECUTION_TIMEOUT' } },
    });
    expect(expiryStop(running)).toBe('expired');
    expect(expiryStop(queued)).toBeUndefined();
  });

  it('refuses a change the state table does not allow', () => {
    expect(() => endChange({ ...running, status: 'COMPLETED' }, 'complete', {}, 0)).toThrow();
  });
});
