/** The dashboard's time wording (packages/platform/ui/format.js), in Node: the page's module as it ships. */
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a JavaScript module of the page, checked by tsconfig.ui.json, not this project.
import { ago } from '../../packages/platform/ui/format.js';

const said = ago as (ms: number, now: number) => string;
const NOW = 1_764_000_000_000;

describe('ago', () => {
  it('says how long ago, in the largest unit', () => {
    expect(said(NOW - 12_400, NOW)).toBe('12 s ago');
    expect(said(NOW - 4 * 60_000 - 5_000, NOW)).toBe('4 min ago');
    expect(said(NOW - 3 * 3_600_000, NOW)).toBe('3 h ago');
    expect(said(NOW - 2 * 86_400_000, NOW)).toBe('2 d ago');
  });

  it('takes a time under a second ahead (two clocks a hair apart) for now, and says "in" from a second on', () => {
    expect(said(NOW + 400, NOW)).toBe('0 s ago');
    expect(said(NOW + 999, NOW)).toBe('0 s ago');
    expect(said(NOW + 1_000, NOW)).toBe('in 1 s');
    expect(said(NOW + 5_000, NOW)).toBe('in 5 s');
  });
});
