import { describe, expect, it } from 'vitest';
import { parseFigure, parsePercent, parseText } from '../../src/gpu/parse-value.js';

describe('parseFigure', () => {
  it('reads plain numbers and numbers with a unit left on', () => {
    expect(parseFigure('45')).toBe(45);
    expect(parseFigure(' 512.34 ')).toBe(512.34);
    expect(parseFigure('87%')).toBe(87);
    expect(parseFigure('412.5 W')).toBe(412.5);
    expect(parseFigure(64)).toBe(64);
  });

  it('turns every placeholder into null, never 0', () => {
    for (const raw of ['[N/A]', '[Not Supported]', 'N/A', '[Unknown Error]', '[Insufficient Permissions]', '', ' ', 'unknown']) {
      expect(parseFigure(raw), raw).toBeNull();
    }
    expect(parseFigure('abc')).toBeNull();
    expect(parseFigure(undefined)).toBeNull();
    expect(parseFigure(Number.NaN)).toBeNull();
  });

  it('treats a negative percentage (rocm-smi could not read it) as null', () => {
    expect(parsePercent('-1')).toBeNull();
    expect(parsePercent('0')).toBe(0);
  });

  it('reads text cells, placeholders excepted', () => {
    expect(parseText(' 550.54.15 ')).toBe('550.54.15');
    expect(parseText('[N/A]')).toBeNull();
    expect(parseText(7)).toBe('7');
  });
});
