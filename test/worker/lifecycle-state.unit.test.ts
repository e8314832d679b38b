import { afterEach, describe, expect, it } from 'vitest';
import type { Job, JobResult } from '../../src/job/index.js';
import { isServerlessWorkerError } from '../../src/job/index.js';
import { createLogger } from '../../src/log/index.js';
import type { StopListener, TakeRequest, Transport } from '../../src/transports/index.js';
import {
  LIFECYCLE_MOVES,
  LIFECYCLE_STATES,
  Lifecycle,
  WorkerRuntime,
  canMoveLifecycle,
  nextLifecycleState,
  resolveOptions,
  type LifecycleState,
} from '../../src/worker/index.js';

/** Answers one job on the first take, then waits for the abort; counts takes and closes. */
class OneJobTransport implements Transport {
  readonly kind = 'test';
  readonly workerId = 'lifecycle';
  readonly results = new Map<string, JobResult>();
  takes = 0;
  closed = 0;

  async take(request: TakeRequest): Promise<Job[]> {
    this.takes++;
    if (this.takes === 1) return [{ id: 'job-1', input: {} }];
    await new Promise<void>((resolve) => request.signal.addEventListener('abort', () => resolve(), { once: true }));
    return [];
  }
  async postChunk(): Promise<void> {}
  async postProgress(): Promise<void> {}
  async postResult(jobId: string, result: JobResult): Promise<void> {
    this.results.set(jobId, result);
  }
  setJobsInProgress(): void {}
  onStop(_listener: StopListener): () => void {
    return () => {};
  }
  async close(): Promise<void> {
    this.closed++;
  }
}

const silent = createLogger({ level: 'silent' });
const config = resolveOptions({ gpuSampling: false, shutdownTimeoutMs: 1_000, timeoutGraceMs: 100 });

function newRuntime(transport: Transport): { runtime: WorkerRuntime; seen: LifecycleState[] } {
  const runtime = new WorkerRuntime(async () => 'ok', config, transport, silent);
  const seen: LifecycleState[] = [runtime.state];
  runtime.onStateChange((state) => seen.push(state));
  return { runtime, seen };
}

let stopAfter: WorkerRuntime | undefined;
afterEach(async () => {
  await stopAfter?.stop();
  stopAfter = undefined;
});

describe('the lifecycle table', () => {
  it('allows exactly the listed moves, and refuses every other with SW_INTERNAL naming both states', () => {
    let allowed = 0;
    for (const from of LIFECYCLE_STATES) {
      for (const to of LIFECYCLE_STATES) {
        if (LIFECYCLE_MOVES[from].includes(to)) {
          allowed++;
          expect(canMoveLifecycle(from, to)).toBe(true);
          expect(nextLifecycleState(from, to)).toBe(to);
          continue;
        }
        expect(canMoveLifecycle(from, to)).toBe(false);
        let thrown: unknown;
        try {
          nextLifecycleState(from, to);
        } catch (error) {
          thrown = error;
        }
        expect(isServerlessWorkerError(thrown) && thrown.code).toBe('SW_INTERNAL');
        expect((thrown as Error).message).toContain(`"${from}" to "${to}"`);
      }
    }
    // starting->initializing|ready|draining, initializing->ready|draining, ready->draining, draining->stopped
    expect(allowed).toBe(7);
  });

  it('runs one way: nothing leaves stopped, nothing goes back', () => {
    expect(LIFECYCLE_MOVES.stopped).toEqual([]);
    const order = new Map(LIFECYCLE_STATES.map((state, index) => [state, index]));
    for (const from of LIFECYCLE_STATES) {
      for (const to of LIFECYCLE_MOVES[from]) expect(order.get(to)).toBeGreaterThan(order.get(from) ?? Infinity);
    }
  });

  it('a Lifecycle tells its listeners of each move and keeps its state after a refused one', () => {
    const lifecycle = new Lifecycle();
    const moves: string[] = [];
    const off = lifecycle.onChange((state, previous) => moves.push(`${previous}->${state}`));
    lifecycle.move('initializing');
    expect(() => lifecycle.move('stopped')).toThrow(/cannot move from "initializing" to "stopped"/);
    expect(lifecycle.state).toBe('initializing');
    lifecycle.move('ready');
    off();
    lifecycle.move('draining');
    expect(moves).toEqual(['starting->initializing', 'initializing->ready']);
    expect(lifecycle.state).toBe('draining');
  });
});

describe('WorkerRuntime lifecycle', () => {
  it('start -> ready takes jobs; stop goes draining -> stopped', async () => {
    const transport = new OneJobTransport();
    const { runtime, seen } = newRuntime(transport);
    void runtime.start();
    expect(runtime.state).toBe('ready');
    for (let i = 0; i < 200 && transport.results.size === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(transport.results.get('job-1')).toMatchObject({ output: 'ok' });
    const exit = await runtime.stop();
    expect(exit).toEqual({ reason: 'shutdown', exitCode: 0 });
    expect(seen).toEqual(['starting', 'ready', 'draining', 'stopped']);
    expect(transport.closed).toBe(1);
  });

  it('stop() before start() takes no job (it no longer starts the worker), and a later start() only answers the exit', async () => {
    const transport = new OneJobTransport();
    const { runtime, seen } = newRuntime(transport);
    const exit = await runtime.stop();
    expect(exit.exitCode).toBe(0);
    expect(await runtime.start()).toBe(exit);
    expect(await runtime.exited).toBe(exit);
    expect(transport.takes).toBe(0);
    expect(seen).toEqual(['starting', 'draining', 'stopped']);
  });

  it('initializing: no job is taken until start(); a stop while initializing ends without taking one', async () => {
    const transport = new OneJobTransport();
    const first = newRuntime(transport);
    stopAfter = first.runtime;
    first.runtime.beginInitializing();
    expect(first.runtime.state).toBe('initializing');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(transport.takes).toBe(0);
    void first.runtime.start();
    expect(first.runtime.state).toBe('ready');
    expect(() => first.runtime.beginInitializing()).toThrow(/cannot move from "ready" to "initializing"/);
    await first.runtime.stop();
    expect(first.seen).toEqual(['starting', 'initializing', 'ready', 'draining', 'stopped']);

    const other = new OneJobTransport();
    const second = newRuntime(other);
    second.runtime.beginInitializing();
    await second.runtime.stop();
    void second.runtime.start();
    expect(other.takes).toBe(0);
    expect(second.seen).toEqual(['starting', 'initializing', 'draining', 'stopped']);
  });

  it('a listener that throws does not break the lifecycle', async () => {
    const { runtime } = newRuntime(new OneJobTransport());
    runtime.onStateChange(() => {
      throw new Error('listener bug');
    });
    void runtime.start();
    await runtime.stop();
    expect(runtime.state).toBe('stopped');
  });
});
