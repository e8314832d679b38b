import { describe, expect, it } from 'vitest';
import { JOB_ID_MAX_BYTES, JobBoard, JobBoardReader } from '../../../src/transports/watchdog/index.js';

describe('the job board shared with the watchdog thread', () => {
  it('shows claimed jobs to the reader with their deadline and start, and forgets released ones', () => {
    const board = new JobBoard(3);
    const reader = new JobBoardReader(board.buffer);
    expect(reader.jobs()).toEqual([]);
    const a = board.claim('job-a', 10_000, 5_000);
    const b = board.claim('jöb-b ✓', 20_000, 6_000);
    expect(a).toBeGreaterThanOrEqual(0);
    expect(b).toBeGreaterThanOrEqual(0);
    expect(reader.jobs().sort((x, y) => x.deadlineAt - y.deadlineAt)).toEqual([
      { id: 'job-a', deadlineAt: 10_000, startedAt: 5_000 },
      { id: 'jöb-b ✓', deadlineAt: 20_000, startedAt: 6_000 },
    ]);
    board.release(a);
    expect(reader.jobs()).toEqual([{ id: 'jöb-b ✓', deadlineAt: 20_000, startedAt: 6_000 }]);
    // The freed slot is reused, and shows the new job only.
    const c = board.claim('c', 30_000, 7_000);
    expect(reader.jobs().map((job) => job.id).sort()).toEqual(['c', 'jöb-b ✓']);
    board.release(b);
    board.release(c);
    expect(reader.jobs()).toEqual([]);
  });

  it('answers -1 (not watched) when every slot is taken or the id is too long, and takes jobs again once one frees', () => {
    const board = new JobBoard(2);
    const reader = new JobBoardReader(board.buffer);
    const first = board.claim('one', 1, 0);
    board.claim('two', 2, 0);
    expect(board.claim('three', 3, 0)).toBe(-1);
    board.release(first);
    expect(board.claim('x'.repeat(JOB_ID_MAX_BYTES + 1), 4, 0)).toBe(-1);
    expect(board.claim('x'.repeat(JOB_ID_MAX_BYTES), 5, 0)).toBeGreaterThanOrEqual(0);
    expect(reader.jobs().map((job) => job.deadlineAt).sort()).toEqual([2, 5]);
  });

  it('carries the tick (the main thread last turn) and the fired flag, raised once', () => {
    const board = new JobBoard(1);
    const reader = new JobBoardReader(board.buffer);
    const before = Date.now();
    board.tick();
    expect(reader.lastTickAt()).toBeGreaterThanOrEqual(before - 1);
    expect(reader.lastTickAt()).toBeLessThanOrEqual(Date.now() + 1);
    expect(board.fired).toBe(false);
    expect(reader.markFired()).toBe(true);
    expect(reader.markFired()).toBe(false);
    expect(board.fired).toBe(true);
  });
});
