/**
 * Issue 46 item 3: under each Node line the packages support, in a real process of that
 * `node`, the idle compaction's full step (collectForMemory with V8's own `gc`) runs
 * memory-reducing full collections: `--trace-gc` prints `Mark-Compact (reduce)` for them, and
 * no young collection in their place (Node 20's V8 would run a Scavenge for the same options).
 */
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { NODE_LINES, nodeBinary, shellEnv } from '../package/node-lines.js';

const COLLECTOR_MODULE = fileURLToPath(new URL('../../src/metrics/garbage-collector.ts', import.meta.url));

/** Garbage in old space, then the full step between two marks. */
const SCRIPT = `
const { collector, collectForMemory } = await import(process.argv[1]);
let kept = [];
for (let i = 0; i < 300000; i++) kept.push({ i, text: 'job-' + i });
kept = null;
const collect = collector();
console.log('--- start');
collectForMemory(collect);
console.log('--- end');
`;

describe.each(NODE_LINES)('the full step of the idle compaction under Node %i', (major) => {
  it('runs memory-reducing full collections, and no young one in their place', { timeout: 360_000 }, async () => {
    const node = await nodeBinary(major);
    const run = await execa(node, ['--trace-gc', '--input-type=module', '--no-warnings', '-e', SCRIPT, COLLECTOR_MODULE], {
      env: shellEnv(node),
      all: true,
      reject: false,
      timeout: 60_000,
    });
    expect(run.exitCode, run.all).toBe(0);
    const between = /--- start\n([\s\S]*?)--- end/.exec(run.all ?? '')?.[1] ?? '';
    expect(between, run.all).toMatch(/Mark-Compact \(reduce\)/);
    expect(between, run.all).not.toMatch(/Scavenge/);
  });
});
