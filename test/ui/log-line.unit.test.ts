/**
 * One log line of the dashboard (packages/platform/ui/log-line.js), in Node: the page's
 * module as it ships, its element tree read as the page's text (a component, the time,
 * counts for nothing). The stream label and the level are two words ("stderr WARN", not
 * "stderrWARN"), and an in-process line, whose stream is its level, says its level once.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a JavaScript module of the page, checked by tsconfig.ui.json, not this project.
import { LogLine } from '../../packages/platform/ui/log-line.js';

interface Node {
  type: unknown;
  props: { children?: unknown };
}

/** The text an element tree shows, as textContent reads it; components (the time) left out. */
function textOf(node: unknown): string {
  if (node === null || node === undefined || typeof node === 'boolean') return '';
  if (typeof node === 'string' || typeof node === 'number') return String(node);
  if (Array.isArray(node)) return node.map(textOf).join('');
  const element = node as Node;
  if (typeof element.type !== 'string') return '';
  // The fields' <details> is shown folded: its count only.
  return textOf(element.props.children);
}

const render = LogLine as (props: { line: { at: number; workerId: string; stream: string; line: string }; now: number }) => unknown;
const AT = 1_764_000_000_000;

describe('a log line on the dashboard', () => {
  it('puts a space between the stream and the level of a pino line', () => {
    const line = JSON.stringify({ level: 40, time: AT, msg: 'slow start', requestId: 'j1' });
    const text = textOf(render({ line: { at: AT, workerId: 'w-1', stream: 'stderr', line }, now: AT }));
    expect(text).toContain('w-1 stderr WARN slow start');
  });

  it("says an in-process line's level once", () => {
    const text = textOf(render({ line: { at: AT, workerId: 'in-process', stream: 'warn', line: 'careful' }, now: AT }));
    expect(text).toContain('in-process WARN careful');
    expect(text).not.toContain('warn');
  });

  it('shows a line that is not pino as written, after its stream', () => {
    const text = textOf(render({ line: { at: AT, workerId: 'w-1', stream: 'stderr', line: 'Traceback' }, now: AT }));
    expect(text).toContain('w-1 stderr Traceback');
  });
});
