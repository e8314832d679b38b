/**
 * The unit tier's guard (test/setup/unit-tier.ts, loaded for every *.unit.test.ts): a child
 * process is refused with a message naming the rule and the fix, through both import forms.
 */
import childProcess, { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { refused } from './unit-tier.js';

const RULE = /\*\.unit\.test\.ts start no child process.*Rename the file to \*\.test\.ts/;

describe('unit tier guard', () => {
  it('refuses spawn and spawnSync, named imports and the module object alike, and says how to move the test', () => {
    expect(() => spawnSync('true')).toThrow(RULE);
    expect(() => spawn('true')).toThrow(RULE);
    expect(() => childProcess.execFileSync('true')).toThrow(RULE);
    // The afterEach would fail this test for these three refusals: take them, checking each.
    const taken = refused.splice(0);
    expect(taken).toHaveLength(3);
    expect(taken[0]).toContain('child_process.spawnSync("true")');
  });
});
