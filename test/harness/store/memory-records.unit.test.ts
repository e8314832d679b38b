import { describe, expect, it } from 'vitest';
import { parseJobRequest } from '../../../src/job/index.js';
import { queuedJob } from '../../../src/harness/store/job-rules.js';
import { newMemoryJob } from '../../../src/harness/store/memory-records.js';
import type { StoredJob } from '../../../src/harness/store/store-types.js';

/** Every field of a StoredJob the memory store keeps on its record (tsc fails here when StoredJob gains one). */
const FIELDS: Record<Exclude<keyof StoredJob, 'unreadChunkCount'>, true> = {
  id: true,
  endpointId: true,
  request: true,
  sync: true,
  status: true,
  submittedAt: true,
  queuedAt: true,
  startedAt: true,
  endedAt: true,
  workerId: true,
  output: true,
  error: true,
  retries: true,
  attempt: true,
  lost: true,
  resultFrom: true,
  cancelledFrom: true,
  chunkCount: true,
  expiresAt: true,
  executionDeadline: true,
  executionTimeoutMs: true,
  retentionMs: true,
  deleteAt: true,
  reportedAt: true,
};

describe('the memory store record of a new job', () => {
  it('holds every field a change may assign from the start (assigned later, never added: one compact shape for every retained job)', () => {
    const { unreadChunkCount: _none, ...queued } = queuedJob(
      { id: 'j1', endpointId: 'e', request: parseJobRequest({ input: { a: 1 } }), sync: false, waitMs: undefined },
      1_000,
    );
    const record = newMemoryJob(queued, 12);
    const keys = Object.keys(record);
    for (const field of Object.keys(FIELDS)) expect(keys, field).toContain(field);
    expect(keys).toContain('unread');
    expect(record).toMatchObject({ ...queued, unread: [], requestBytes: 12 });
    expect(record.startedAt).toBeUndefined();
  });
});
