/**
 * @module bench/children/bench-handler
 * The one handler every benchmark worker runs, in process or over the platform
 * transport, chosen by the job's input:
 * - `{}`: a no-op job, answering `{}` (dispatch, end to end, memory);
 * - `{ probe: true }`: garbage-collects (when the process has --expose-gc) and answers
 *   the process's memoryUsage(), so a memory reading travels as an ordinary job;
 * - `{ stream: { count, size } }`: an async generator yielding `count` strings of
 *   `size` characters. When BENCH_YIELD_LOG names a folder, the time of each yield
 *   (epoch ms, microsecond resolution) is written to `<folder>/<job id>.f64` before
 *   the generator returns, so the reader can tell how long each yield took to be
 *   visible on /stream without putting timestamps into the text. With `objects: true`
 *   it yields `{ i, text }` objects instead (objects cannot be joined: one chunk each).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';
import type { HandlerJob } from '../../src/index.js';

export interface StreamSpec {
  readonly count: number;
  readonly size: number;
  /** Yield `{ i, text }` objects rather than the text alone. */
  readonly objects?: boolean;
}

export interface BenchInput {
  readonly probe?: boolean;
  readonly stream?: StreamSpec;
}

const texts = new Map<number, string>();

/** The text of one yield: `size` characters, built once per size so building it is not measured. */
export function yieldText(size: number): string {
  let text = texts.get(size);
  if (text === undefined) {
    const pattern = 'lorem ipsum dolor sit amet, consectetur adipiscing elit. ';
    text = pattern.repeat(Math.ceil(size / pattern.length)).slice(0, size);
    texts.set(size, text);
  }
  return text;
}

function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

async function* streamText(jobId: string, spec: StreamSpec): AsyncGenerator<string | { i: number; text: string }> {
  const text = yieldText(spec.size);
  const times = new Float64Array(spec.count);
  try {
    for (let i = 0; i < spec.count; i++) {
      times[i] = preciseNow();
      yield spec.objects === true ? { i, text } : text;
    }
  } finally {
    const folder = process.env.BENCH_YIELD_LOG;
    if (folder) writeFileSync(join(folder, `${jobId}.f64`), new Uint8Array(times.buffer));
  }
}

/** What a probe job answers: memoryUsage() and the size of each V8 heap space, bytes. */
export interface ProbeAnswer extends NodeJS.MemoryUsage {
  readonly spaces: Readonly<Record<string, number>>;
}

function probe(): ProbeAnswer {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
  const spaces: Record<string, number> = {};
  for (const space of getHeapSpaceStatistics()) spaces[space.space_name] = space.space_size;
  return { ...process.memoryUsage(), spaces };
}

export function benchHandler(job: HandlerJob<unknown>): unknown {
  const input = (job.input ?? {}) as BenchInput;
  if (input.probe === true) return probe();
  if (input.stream !== undefined) return streamText(job.id, input.stream);
  return {};
}
