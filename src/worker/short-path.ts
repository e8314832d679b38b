/**
 * @module worker/short-path
 * A JSON path as an error message shows it: a run of the same step is written once with
 * its count (`output[0]×1000.a`), and what is still longer than SHORT_PATH_MAX_CHARS
 * keeps its start and end around `…`. A value nested past the depth limit used to be
 * named by a 3 KB `[0][0]...` path (issue 32).
 */

/** Longest path an error message carries, characters. */
export const SHORT_PATH_MAX_CHARS = 200;
/** A step repeated at least this many times in a row is written once with its count. */
const RUN_MIN = 4;

const STEP = /\.[A-Za-z_$][\w$]*|\[\d+\]|\["(?:[^"\\]|\\.)*"\]/g;

/** `path` (root then `.key`, `[i]`, `["key"]` steps) shortened as the module says. */
export function shortPath(path: string): string {
  const first = path.search(/[.[]/);
  if (first < 0) return path;
  const root = path.slice(0, first);
  const steps = path.slice(first).match(STEP) ?? [];
  if (steps.join('').length !== path.length - first) return clip(path);
  let text = root;
  for (let i = 0; i < steps.length;) {
    let run = 1;
    while (i + run < steps.length && steps[i + run] === steps[i]) run++;
    text += run >= RUN_MIN ? `${steps[i]}×${run}` : steps.slice(i, i + run).join('');
    i += run;
  }
  return clip(text);
}

function clip(text: string): string {
  if (text.length <= SHORT_PATH_MAX_CHARS) return text;
  const keep = Math.floor((SHORT_PATH_MAX_CHARS - 1) / 2);
  return `${text.slice(0, keep)}…${text.slice(text.length - keep)}`;
}
