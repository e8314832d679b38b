/**
 * @module test/reliability/support/figures
 * The figures each reliability test measured, printed as one compact line
 * (`[reliability] <test>: key=value ...`) to copy into the README's RELIABILITY section.
 */

export type Figure = string | number | boolean | Record<string, number>;

function show(value: Figure): string {
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : value.toFixed(1);
  if (typeof value === 'object') {
    return (
      Object.entries(value)
        .filter(([, n]) => n !== 0)
        .map(([key, n]) => `${key}:${n}`)
        .join(',') || '0'
    );
  }
  return String(value);
}

export function printFigures(test: string, figures: Readonly<Record<string, Figure>>): void {
  const text = Object.entries(figures)
    .map(([key, value]) => `${key}=${show(value)}`)
    .join(' ');
  console.log(`[reliability] ${test}: ${text}`);
}

/** Milliseconds since `start` (performance.now()), whole. */
export function since(start: number): number {
  return Math.round(performance.now() - start);
}
