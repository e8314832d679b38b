/**
 * Issue 46: the local API's tiering flags (local/tiering.ts) under each Node line the package
 * supports, in real processes of that `node`: its command line accepts the flags the worker
 * child of `--serve-api` gets (supervisor.ts: `node` refuses a V8 flag it does not know), and
 * set at run time, as `--serve-api` sets them in its own process, they make TurboFan take a
 * function within 1 000 calls, which V8's own thresholds do not, and Maglev none, where
 * Node's defaults (from Node 24) have Maglev take it first (`--trace-opt`, compiled synchronously so that the count is
 * exact).
 */
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { NODE_LINES, nodeBinary, shellEnv } from '../package/node-lines.js';
import { TIERING_FLAGS } from '../../packages/platform/src/local/tiering.js';

const TIERING_MODULE = fileURLToPath(new URL('../../packages/platform/src/local/tiering.ts', import.meta.url));

/** A function too large for V8's early optimization, called 1 000 times; with `set`, after tierUpSooner(). */
const PROBE = `
if (process.argv[1] === 'set') { const { tierUpSooner } = await import(process.argv[2]); console.log('set ' + JSON.stringify(tierUpSooner(new Set()))); }
function probed(o) {
  let total = 0;
  for (const key of Object.keys(o)) { const value = o[key]; if (typeof value === 'string') total += value.length; else if (typeof value === 'number') total += value; else if (Array.isArray(value)) total += value.length; }
  return total + (o.extra ? 1 : 0) + JSON.stringify(o).length;
}
let sum = 0;
for (let i = 0; i < 1000; i++) sum += probed({ a: 'xx', b: 3, c: [1, 2], extra: true });
console.log('sum ' + sum);
`;

const TURBOFAN_MARKED = /JSFunction probed .*for optimization to TURBOFAN/;
const MAGLEV_MARKED = /JSFunction probed .*for optimization to MAGLEV/;

async function probe(node: string, set: boolean): Promise<string> {
  const args = ['--trace-opt', '--no-concurrent-recompilation', '--input-type=module', '--no-warnings', '-e', PROBE, ...(set ? ['set', TIERING_MODULE] : [])];
  const run = await execa(node, args, { env: shellEnv(node), all: true, reject: false, timeout: 60_000 });
  expect(run.exitCode, run.all).toBe(0);
  expect(run.all).toContain('sum 47000');
  return run.all;
}

/** Whether `node`'s V8 has Maglev on unless told otherwise (its `--v8-options` list). */
async function maglevByDefault(node: string): Promise<boolean> {
  const options = await execa(node, ['--v8-options'], { env: shellEnv(node), timeout: 60_000 });
  const entry = /^\s+--maglev \(.*\n\s+type: bool\s+default: (--maglev|--no-maglev)$/m.exec(options.stdout);
  expect(entry, 'no --maglev entry in --v8-options').not.toBeNull();
  return entry?.[1] === '--maglev';
}

describe.each(NODE_LINES)('the tiering flags under Node %i', (major) => {
  it("are accepted on node's command line, as the worker child gets them", { timeout: 360_000 }, async () => {
    const node = await nodeBinary(major);
    const run = await execa(node, [...TIERING_FLAGS, '-e', 'console.log("started")'], { env: shellEnv(node), all: true, reject: false, timeout: 60_000 });
    expect(run.exitCode, run.all).toBe(0);
    expect(run.all).toBe('started');
  });

  it("set at run time, make TurboFan take a function within 1 000 calls, and Maglev none, which V8's defaults do not", { timeout: 360_000 }, async () => {
    const node = await nodeBinary(major);
    const tiered = await probe(node, true);
    expect(tiered).toContain(`set ${JSON.stringify(TIERING_FLAGS)}`);
    expect(tiered).toMatch(TURBOFAN_MARKED);
    expect(tiered).not.toMatch(MAGLEV_MARKED);
    const untiered = await probe(node, false);
    expect(untiered).not.toMatch(TURBOFAN_MARKED);
    // Maglev is on by default from Node 24 (Node 22 ships it off): there it takes the function first.
    if (await maglevByDefault(node)) expect(untiered).toMatch(MAGLEV_MARKED);
    else expect(untiered).not.toMatch(MAGLEV_MARKED);
  });
});
