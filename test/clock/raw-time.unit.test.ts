/**
 * One clock (issue 26, part 2): every layer takes time and timers from a `Clock`
 * (src/clock/), so that tests drive them. This test reads the source files and fails on a
 * raw Date.now, setTimeout, setInterval, clearTimeout, clearInterval or performance.now
 * outside src/clock/ and the short list of exceptions below, each with its reason.
 * Comments are skipped; setImmediate (a turn of the event loop, not time) is allowed.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SRC = join(ROOT, 'src');
/** The platform package's sources: the same rule (its clock is the SDK's src/clock). */
const PLATFORM_SRC = join(ROOT, 'packages/platform/src');

/** Files allowed raw time, relative to the repository root, and why. */
const EXCEPTIONS: Record<string, string> = {
  'src/transports/watchdog/watchdog-thread.ts': 'runs in the watchdog thread: judges a blocked main thread on real time, never a test clock',
  'src/transports/watchdog/thread-fire.ts': 'runs in the watchdog thread (see watchdog-thread.ts)',
  'src/transports/watchdog/thread-heartbeat.ts': 'runs in the watchdog thread (see watchdog-thread.ts)',
  'src/transports/watchdog/thread-http.ts': 'runs in the watchdog thread (see watchdog-thread.ts)',
  'src/local/idle-compaction.ts':
    "times V8's own garbage collections (performance entries) against V8's real-time allocation window: a test clock would not move V8",
  'src/metrics/garbage-collector.ts': "stamps a collection with performance.now(), the time base of Node's 'gc' performance entries it is read beside",
  'src/metrics/memory-reducer.ts': "waits for V8's memory reducer to run its start-up collections, on V8's real time: a test clock would not move V8",
};

// A method of that name on another object (socket.setTimeout: the socket's idle timeout) is not the global timer.
const RAW_TIME = /(?<![.\w$])(Date\.now|setTimeout|setInterval|clearTimeout|clearInterval|performance\.now)\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The code without its comments (block comments, and line comments that start a line or follow a space). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, '')).replace(/(^|\s)\/\/.*$/gm, '$1');
}

/** `file:line: text` for each raw use of time in `file`. */
function rawUses(file: string): string[] {
  const lines = withoutComments(readFileSync(file, 'utf8')).split('\n');
  return lines.flatMap((line, index) => (RAW_TIME.test(line) ? [`${relative(ROOT, file)}:${index + 1}: ${line.trim()}`] : []));
}

describe('raw time stays inside src/clock', () => {
  it('no raw Date.now, timer or performance.now outside src/clock and the exceptions', () => {
    const offenders = [...sourceFiles(SRC), ...sourceFiles(PLATFORM_SRC)]
      .filter((file) => !relative(SRC, file).startsWith('clock/') && EXCEPTIONS[relative(ROOT, file)] === undefined)
      .flatMap(rawUses);
    expect(offenders, 'take time from the Clock given at construction (src/clock/), or add the file to EXCEPTIONS with its reason').toEqual([]);
  });

  it('every exception still exists and still needs to be one', () => {
    for (const file of Object.keys(EXCEPTIONS)) expect(rawUses(join(ROOT, file)).length, file).toBeGreaterThan(0);
  });

  it('src/clock imports nothing else from src', () => {
    const outside = sourceFiles(join(SRC, 'clock')).filter((file) => /from '\.\.\//.test(readFileSync(file, 'utf8')));
    expect(outside).toEqual([]);
  });
});
