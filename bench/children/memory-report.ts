/**
 * @module bench/children/memory-report
 * A preload (`node --import <compiled file>`) for bench/serve-api-memory.ts: on SIGUSR2 the
 * process writes `<BENCH_MEMORY_REPORT_DIR>/<pid>-<n>.json` with what its memory is:
 * /proc/self/smaps_rollup (RSS, PSS, anonymous, shared file pages), memoryUsage() and
 * V8's heap spaces as they are, then the same after two full collections (with
 * --expose-gc), and malloc's view of it where the bench can tell (the anonymous memory
 * outside V8's heap); with BENCH_HEAP_SNAPSHOT=1 also a heap snapshot. `--serve-api` passes its node flags to its worker child, so both
 * processes load it.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics, getHeapStatistics, writeHeapSnapshot } from 'node:v8';

const dir = process.env.BENCH_MEMORY_REPORT_DIR;
let count = 0;

function smaps(): Record<string, number> {
  const fields: Record<string, number> = {};
  try {
    for (const line of readFileSync('/proc/self/smaps_rollup', 'utf8').split('\n')) {
      const match = /^(\w+):\s+(\d+) kB/.exec(line);
      if (match?.[1] !== undefined) fields[match[1]] = Number(match[2]) * 1024;
    }
  } catch {
    // not Linux
  }
  return fields;
}

function reading(): Record<string, unknown> {
  const spaces: Record<string, { size: number; used: number }> = {};
  for (const space of getHeapSpaceStatistics()) spaces[space.space_name] = { size: space.space_size, used: space.space_used_size };
  const heap = getHeapStatistics();
  return { smaps: smaps(), usage: process.memoryUsage(), spaces, mallocedMemory: heap.malloced_memory, peakMallocedMemory: heap.peak_malloced_memory };
}

if (dir !== undefined && dir !== '') {
  process.on('SIGUSR2', () => {
    const before = reading();
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc) {
      gc();
      gc();
    }
    const after = reading();
    count++;
    // BENCH_HEAP_SNAPSHOT=1: a heap snapshot beside the report (after the GC), for bench/heap-summary.ts.
    if (process.env.BENCH_HEAP_SNAPSHOT === '1') writeHeapSnapshot(join(dir, `${process.pid}-${count}.heapsnapshot`));
    // Written whole, then named: the bench reads it once the name appears.
    const file = join(dir, `${process.pid}-${count}.json`);
    writeFileSync(`${file}.part`, JSON.stringify({ pid: process.pid, argv: process.argv.slice(2), before, after }));
    renameSync(`${file}.part`, file);
  });
}
