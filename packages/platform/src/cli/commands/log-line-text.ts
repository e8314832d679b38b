/**
 * @module cli/commands/log-line-text
 * A log line as `logs` prints it for a person on a terminal: the time, worker and stream,
 * then, for a pino JSON line (what a worker's logger writes to stdout), its level, its
 * message and its other fields as `key=value`, and an error's stack on the lines below, in
 * place of the raw JSON object. Any other line prints as written.
 */
import type { LogLineReply } from './harness-reads.js';

/** pino's level numbers (pino's defaults: the SDK's logger keeps them). */
const LEVELS: Readonly<Record<number, string>> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** Fields every pino line carries, already said by the prefix (or noise to a person). */
const SAID = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'v']);

/** The parsed pino line, or undefined when `text` is not one (no JSON object with a level and a message). */
function pinoRecord(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const record = parsed as Record<string, unknown>;
  return 'level' in record && 'msg' in record ? record : undefined;
}

function levelName(level: unknown): string {
  if (typeof level === 'number') return LEVELS[level] ?? `LEVEL${level}`;
  return String(level).toUpperCase();
}

function fieldText(value: unknown): string {
  return typeof value === 'string' && !/\s/.test(value) && value !== '' ? value : JSON.stringify(value);
}

/** `2026-01-01T10:00:00.123Z worker-1 stdout INFO loaded the model job=abc ms=812`. */
export function prettyLogLine(line: LogLineReply): string {
  const prefix = `${new Date(line.at).toISOString()} ${line.workerId} ${line.stream}`;
  const record = pinoRecord(line.line);
  if (!record) return `${prefix} ${line.line}`;
  const fields: string[] = [];
  let stack: string | undefined;
  for (const [key, value] of Object.entries(record)) {
    if (SAID.has(key)) continue;
    // An error's stack reads as lines, below; its type and message stay on the line.
    if ((key === 'err' || key === 'error') && typeof value === 'object' && value !== null && typeof (value as { stack?: unknown }).stack === 'string') {
      const { stack: errorStack, ...rest } = value as { stack: string } & Record<string, unknown>;
      stack = errorStack;
      if (Object.keys(rest).length > 0) fields.push(`${key}=${JSON.stringify(rest)}`);
      continue;
    }
    fields.push(`${key}=${fieldText(value)}`);
  }
  const text = [prefix, levelName(record.level), String(record.msg), ...fields].join(' ');
  return stack === undefined ? text : `${text}\n${stack.replace(/^/gm, '    ')}`;
}
