/**
 * @module test/transports/platform/log-capture
 * A pino logger whose lines a test can read, and counters that count, for asserting
 * what the transport logged and counted.
 */
import pino, { type Logger } from 'pino';
import type { CounterLike, PlatformTransportMetrics } from '../../../src/transports/platform/index.js';

export interface CapturedLogs {
  readonly logger: Logger;
  readonly lines: Array<Record<string, unknown> & { level: number; msg: string }>;
  /** Lines at `level` (pino's number: 40 warn, 50 error) or above whose message contains `text`. */
  find(text: string, level?: number): Array<Record<string, unknown>>;
}

export function captureLogs(level = 'debug'): CapturedLogs {
  const lines: CapturedLogs['lines'] = [];
  const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line) as CapturedLogs['lines'][number]) });
  return {
    logger,
    lines,
    find: (text, atLeast = 0) => lines.filter((line) => line.level >= atLeast && line.msg.includes(text)),
  };
}

export interface CountingCounter extends CounterLike {
  value: number;
}

export function counter(): CountingCounter {
  const c = {
    value: 0,
    inc(by = 1) {
      c.value += by;
    },
  };
  return c;
}

export function countingMetrics(): PlatformTransportMetrics & {
  resultPostRetriesTotal: CountingCounter;
  resultPostGiveUpsTotal: CountingCounter;
  heartbeatFailuresTotal: CountingCounter;
} {
  return { resultPostRetriesTotal: counter(), resultPostGiveUpsTotal: counter(), heartbeatFailuresTotal: counter() };
}
