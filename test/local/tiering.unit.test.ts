/**
 * Issue 46: the local API's processes tier their functions up sooner (local/tiering.ts), on
 * the V8 versions that know the flags, and never over the user's own choice.
 * tiering.system.test.ts runs them under each supported Node line.
 */
import { describe, expect, it } from 'vitest';
import { TIERING_FLAGS, flagName, givenFlagNames, tierUpSooner, tieringFlagsFor } from '../../packages/platform/src/local/tiering.js';

describe('tieringFlagsFor', () => {
  it("answers the flags for V8 12 and later (Node 22, 24, 26's) and none for Node 20's V8 11 or a version it cannot read", () => {
    expect(tieringFlagsFor('12.4.254.21-node.33')).toEqual(TIERING_FLAGS);
    expect(tieringFlagsFor('13.6.233.17-node.37')).toEqual(TIERING_FLAGS);
    expect(tieringFlagsFor('14.3.1.1')).toEqual(TIERING_FLAGS);
    expect(tieringFlagsFor('11.3.244.8-node.33')).toEqual([]);
    expect(tieringFlagsFor('')).toEqual([]);
    expect(tieringFlagsFor('v8')).toEqual([]);
  });

  it('makes TurboFan take a function at 600 calls, with no Maglev before it', () => {
    expect(TIERING_FLAGS).toEqual(['--invocation-count-for-turbofan=600', '--no-maglev']);
  });
});

describe('the flags the user gave', () => {
  it('are read from the command line and NODE_OPTIONS, by name, underscores written as dashes', () => {
    const given = givenFlagNames(['--max-semi-space-size=8', '--enable-source-maps', 'not-a-flag'], '  --invocation_count_for_turbofan=100 --no-warnings ');
    expect([...given].sort()).toEqual(['--enable-source-maps', '--invocation-count-for-turbofan', '--max-semi-space-size', '--warnings']);
    expect(flagName('--invocation_count_for_turbofan=100')).toBe('--invocation-count-for-turbofan');
    expect(flagName('--flag')).toBe('--flag');
    expect(flagName('--no-maglev')).toBe('--maglev');
    expect(flagName('--no_maglev')).toBe('--maglev');
    expect(givenFlagNames(['--maglev'], '').has(flagName('--no-maglev'))).toBe(true);
  });

  it('keep their value: tierUpSooner sets nothing the user named', () => {
    expect(tierUpSooner(new Set(TIERING_FLAGS.map(flagName)))).toEqual([]);
  });

  it("otherwise tierUpSooner sets what this process's V8 knows", () => {
    expect(tierUpSooner(new Set())).toEqual(tieringFlagsFor());
  });
});
