/**
 * Issue 34 item 3: what `--serve-api` does for its memory. Both processes give back the heap a
 * busy spell grew once it is over (local/idle-compaction.ts), without a `gc` in the global
 * scope; the worker child gets a capped young generation unless the user chose one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { compactWhenIdle, type IdleCompaction } from '../../src/local/idle-compaction.js';
import { collector } from '../../src/metrics/garbage-collector.js';
import { CHILD_V8_FLAGS, childBaseEnv, childCommand } from '../../packages/platform/src/local/supervisor.js';
import { TIERING_FLAGS, tieringFlagsFor } from '../../packages/platform/src/local/tiering.js';

describe('compactWhenIdle', () => {
  let compaction: IdleCompaction | undefined;
  afterEach(() => compaction?.stop());

  it('runs a young collection once the process has been quiet, a full one once quiet for longer, and leaves no gc in the global scope', async () => {
    const hadGc = typeof (globalThis as { gc?: unknown }).gc === 'function';
    compaction = compactWhenIdle({ quietMs: 30, fullAfterMs: 30, minGrowthBytes: 0 });
    expect(typeof (globalThis as { gc?: unknown }).gc === 'function').toBe(hadGc);
    work();
    await until(() => compaction!.compactions > 0);
    expect(compaction.compactions).toBeGreaterThanOrEqual(1);
    expect(compaction.youngCollections).toBeGreaterThanOrEqual(1);
  });

  it('runs no full collection until quiet for fullAfterMs after the young one: a burst soon after runs on a heap not compacted', async () => {
    compaction = compactWhenIdle({ quietMs: 30, fullAfterMs: 600_000, minGrowthBytes: 0 });
    work();
    await until(() => compaction!.youngCollections >= 1);
    expect(compaction.youngCollections).toBeGreaterThanOrEqual(1);
    // Busy again, quiet again: another young collection, and still no full one.
    const before = compaction.youngCollections;
    work();
    await until(() => compaction!.youngCollections >= before + 1);
    expect(compaction.youngCollections).toBeGreaterThan(before);
    expect(compaction.compactions).toBe(0);
  });
});

/** Until `done` holds, 10 s at most (the assertions after it say what was expected). */
async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Garbage enough for a few young-generation collections. */
function work(): void {
  let kept: unknown[] = [];
  for (let i = 0; i < 200_000; i++) {
    kept.push({ i, text: `job-${i}` });
    if (kept.length > 1_000) kept = [];
  }
}

describe('compactWhenIdle, busy again', () => {
  let compaction: IdleCompaction | undefined;
  afterEach(() => compaction?.stop());

  it('compacts again after a second busy spell: the quiet watch wakes on the next collection', async () => {
    compaction = compactWhenIdle({ quietMs: 30, fullAfterMs: 30, minGrowthBytes: 0 });
    work();
    await until(() => compaction!.compactions >= 1);
    expect(compaction.compactions).toBeGreaterThanOrEqual(1);
    // Idle meanwhile: the watch waits for a collection, not for a timer.
    const before = compaction.compactions;
    work();
    await until(() => compaction!.compactions >= before + 1);
    expect(compaction.compactions).toBeGreaterThan(before);
  });
});

describe('compactWhenIdle, work during the wait', () => {
  let compaction: IdleCompaction | undefined;
  afterEach(() => compaction?.stop());

  it('calls the full collection off while spells of work come during its wait, and runs it once a pause lasts fullAfterMs', async () => {
    // A memory-reducing full collection keeps none of the maps only optimized code points at: one
    // in a pause between bursts threw the request path's code away, and the next burst ran
    // unoptimized (bench/README, issue 46, 2026-12-05). The finished /runsync jobs that expire a
    // minute after a burst are the harness's to collect (harness/idle-collect.ts).
    compaction = compactWhenIdle({ quietMs: 30, fullAfterMs: 400, minGrowthBytes: 0 });
    work();
    await until(() => compaction!.youngCollections >= 1);
    expect(compaction.youngCollections).toBeGreaterThanOrEqual(1);
    // A spell of work every 100 ms (shorter than fullAfterMs) for 2 s: no full collection.
    const busyUntil = Date.now() + 2_000;
    while (Date.now() < busyUntil) {
      work();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(compaction.compactions).toBe(0);
    // Then a pause: it runs.
    await until(() => compaction!.compactions >= 1);
    expect(compaction.compactions).toBe(1);
  });
});

describe('compactWhenIdle, the young step after a longer pause (youngAfterMs)', () => {
  let compaction: IdleCompaction | undefined;
  afterEach(() => compaction?.stop());

  it('gives back what start-up grew at once, and waits youngAfterMs after later work', async () => {
    compaction = compactWhenIdle({ quietMs: 30, fullAfterMs: 600_000, minGrowthBytes: 0, youngAfterMs: 600_000 });
    await until(() => compaction!.youngCollections >= 1);
    expect(compaction.youngCollections).toBe(1);
    work();
    // Quiet checks come and go (30 ms each); the young step is 10 minutes away.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(compaction.youngCollections).toBe(1);
    expect(compaction.compactions).toBe(0);
  });

  it("takes no full collection for work (V8's memory reducer runs them on a timer, with no code running)", async () => {
    compaction = compactWhenIdle({ quietMs: 30, fullAfterMs: 600_000, minGrowthBytes: 0 });
    await until(() => compaction!.youngCollections >= 1);
    const collect = collector();
    expect(collect).toBeDefined();
    collect?.();
    // Counted as work, a quiet check 30 ms later would run another young step (a short window: nothing else allocates much).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(compaction.youngCollections).toBe(1);
  });

  it('is called off by work during the wait, and runs once a pause lasts youngAfterMs', async () => {
    compaction = compactWhenIdle({ quietMs: 30, fullAfterMs: 600_000, minGrowthBytes: 0, youngAfterMs: 4_000 });
    await until(() => compaction!.youngCollections >= 1);
    // Spells of work 100 ms apart for 1.5 s: each pause is found quiet and arms the step, the next spell calls it off.
    const spellsEnd = Date.now() + 1_500;
    while (Date.now() < spellsEnd) {
      work();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(compaction.youngCollections).toBe(1);
    await until(() => compaction!.youngCollections >= 2);
    expect(compaction.youngCollections).toBe(2);
  });
});

describe('the worker child of --serve-api', () => {
  const execArgv = [...process.execArgv];
  const nodeOptions = process.env.NODE_OPTIONS;
  afterEach(() => {
    process.execArgv.splice(0, process.execArgv.length, ...execArgv);
    if (nodeOptions === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = nodeOptions;
  });

  it('gets a capped young generation, collected on its own thread', () => {
    delete process.env.NODE_OPTIONS;
    process.execArgv.splice(
      0,
      process.execArgv.length,
      ...execArgv.filter((flag) => !flag.startsWith('--max-semi-space-size') && flag !== '--single-threaded-gc'),
    );
    expect(CHILD_V8_FLAGS).toEqual(['--max-semi-space-size=2', '--single-threaded-gc', ...tieringFlagsFor()]);
    expect(childCommand().args).toContain('--max-semi-space-size=2');
    expect(childCommand().args).toContain('--single-threaded-gc');
  });

  it("gets the tiering flags where this node's V8 knows them, unless the user named them (with dashes or underscores)", () => {
    delete process.env.NODE_OPTIONS;
    const args = childCommand().args;
    for (const flag of TIERING_FLAGS) expect(args.includes(flag)).toBe(tieringFlagsFor().includes(flag));
    process.env.NODE_OPTIONS = '--invocation_count_for_turbofan=9000 --maglev';
    expect(childCommand().args.filter((arg) => arg.startsWith('--invocation-count-for-turbofan') || arg.endsWith('maglev'))).toEqual([]);
  });

  it("gets glibc's malloc arenas capped at 2, unless its environment sets MALLOC_ARENA_MAX", () => {
    expect(childBaseEnv({ PATH: '/bin' })).toEqual({ PATH: '/bin', MALLOC_ARENA_MAX: '2' });
    expect(childBaseEnv({ MALLOC_ARENA_MAX: '8' }).MALLOC_ARENA_MAX).toBe('8');
  });

  it("keeps the user's own choice, on the command line or in NODE_OPTIONS", () => {
    process.execArgv.push('--max-semi-space-size=8');
    const args = childCommand().args;
    expect(args).toContain('--max-semi-space-size=8');
    expect(args).not.toContain('--max-semi-space-size=2');
    process.execArgv.splice(0, process.execArgv.length, ...execArgv.filter((flag) => !flag.startsWith('--max-semi-space-size')));
    process.env.NODE_OPTIONS = '--max-semi-space-size=4 --no-warnings --no-single-threaded-gc';
    expect(childCommand().args).not.toContain('--max-semi-space-size=2');
    expect(childCommand().args).not.toContain('--single-threaded-gc');
  });
});
