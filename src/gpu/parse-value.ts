/**
 * @module gpu/parse-value
 * Turning the tools' figures into numbers. Both tools print placeholders instead of
 * numbers for what a card cannot report; those become null, never 0, so that an
 * unsupported sensor does not look like an idle GPU.
 */

/** Placeholders seen in nvidia-smi and rocm-smi output, compared case-insensitively. */
const PLACEHOLDERS = new Set(['n/a', 'na', 'not supported', 'unknown', 'unknown error', 'none', '']);

// A number with an optional unit the tools sometimes leave on (`87%`, `412.5 W`, `54.0c`).
const NUMBER_WITH_UNIT = /^([-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?)\s*(?:%|w|c|mib|mb|b|mhz)?$/i;

/**
 * A figure as a number, or null for a placeholder (`[N/A]`, `[Not Supported]`, `N/A`,
 * any `[...]`), an empty cell, or anything that is not a number.
 */
export function parseFigure(raw: unknown): number | null {
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : null;
  if (typeof raw !== 'string') return null;
  const text = raw.trim();
  // nvidia-smi wraps every non-value in brackets: [N/A], [Not Supported], [Unknown Error],
  // [Insufficient Permissions], [GPU requires reset].
  if (text.startsWith('[') || PLACEHOLDERS.has(text.toLowerCase())) return null;
  const match = NUMBER_WITH_UNIT.exec(text);
  if (!match?.[1]) return null;
  const value = Number(match[1]);
  return Number.isFinite(value) ? value : null;
}

/** A percentage in 0-100, or null; rocm-smi answers -1 when it could not read the sensor. */
export function parsePercent(raw: unknown): number | null {
  const value = parseFigure(raw);
  return value === null || value < 0 ? null : value;
}

/** A text cell, or null for a placeholder. */
export function parseText(raw: unknown): string | null {
  if (typeof raw !== 'string') return typeof raw === 'number' ? String(raw) : null;
  const text = raw.trim();
  if (text.startsWith('[') || PLACEHOLDERS.has(text.toLowerCase())) return null;
  return text;
}

export const BYTES_PER_MIB = 1024 * 1024;
