/**
 * @module worker/join-chunks
 * The inverse of splitYield: rebuilds the yielded values from a job's stream chunks,
 * keeping only the last attempt's when the job was run again (restarted streams).
 */
import { Buffer } from 'node:buffer';
import { ServerlessWorkerError } from '../job/errors.js';
import type { StreamChunk } from '../job/job.js';

/**
 * The chunks of the job's last attempt, in the order given. A job that is run again
 * (its worker died, or it was retried) streams again from the start: the harness
 * stamps every chunk with the attempt that made it (`metrics.attempt`), so chunks of an
 * older attempt are dropped. Chunks without an attempt (the platform's) are taken as
 * one attempt; among them a second chunk with `stream_index` 0 starts the stream over.
 */
export function lastAttemptChunks(chunks: readonly StreamChunk[]): StreamChunk[] {
  let latest = -1;
  for (const chunk of chunks) {
    const attempt = chunk.metrics?.attempt;
    if (typeof attempt === 'number' && attempt > latest) latest = attempt;
  }
  let kept: StreamChunk[] = [];
  let seenFirst = false;
  for (const chunk of chunks) {
    const attempt = chunk.metrics?.attempt;
    if (latest >= 0 && typeof attempt === 'number' && attempt !== latest) continue;
    if (latest < 0 && chunk.metrics?.stream_index === 0) {
      if (seenFirst) kept = []; // the first chunk again: the stream started over
      seenFirst = true;
    }
    kept.push(chunk);
  }
  return kept;
}

/**
 * Rebuilds the yielded values from a job's stream, the inverse of splitYield
 * over all its yields: whole chunks give their output (base64 decoded to a Buffer),
 * split yields are joined (strings concatenated, bytes decoded and concatenated,
 * arrays concatenated, JSON text joined and parsed). Parts of one yield may arrive
 * out of order; the result keeps the order in which yields first appear. When the
 * stream restarted (the job ran again), only the last attempt's chunks count
 * (lastAttemptChunks).
 * @throws ServerlessWorkerError SW_MALFORMED_STREAM when a yield's parts are missing, repeated or inconsistent.
 */
export function joinChunks(all: readonly StreamChunk[]): unknown[] {
  const chunks = lastAttemptChunks(all);
  const values: unknown[] = [];
  const open = new Map<number, { slot: number; parts: StreamChunk[]; received: number }>();
  for (const chunk of chunks) {
    const m = chunk.metrics ?? {};
    const count = m.part_count;
    if (count === undefined) {
      values.push(m.encoding === 'base64' ? Buffer.from(text(chunk), 'base64') : m.encoding === 'json' ? (JSON.parse(text(chunk)) as unknown) : chunk.output);
      continue;
    }
    const of = m.part_of;
    const index = m.part_index;
    if (typeof of !== 'number' || typeof index !== 'number' || typeof count !== 'number' || index < 0 || index >= count) {
      throw malformed(`a chunk with part_count has bad part_of/part_index (metrics ${JSON.stringify(m)})`);
    }
    let group = open.get(of);
    if (group === undefined) {
      group = { slot: values.length, parts: new Array<StreamChunk>(count), received: 0 };
      values.push(undefined);
      open.set(of, group);
    }
    if (group.parts.length !== count || group.parts[index] !== undefined) throw malformed(`part ${index} of the yield at ${of} is inconsistent or repeated`);
    group.parts[index] = chunk;
    if (++group.received === count) {
      values[group.slot] = joinParts(group.parts);
      open.delete(of);
    }
  }
  if (open.size > 0) throw malformed(`the yields at stream_index ${[...open.keys()].join(', ')} are missing parts`);
  return values;
}

function joinParts(parts: readonly StreamChunk[]): unknown {
  const first = (parts[0] as StreamChunk).metrics ?? {};
  if (first.encoding === 'base64') return Buffer.concat(parts.map((p) => Buffer.from(text(p), 'base64')));
  const isArray = parts.some((p) => Array.isArray(p.output) || p.metrics?.element_index !== undefined);
  if (isArray) return joinArray(parts);
  const joined = parts.map(text).join('');
  return first.encoding === 'json' ? (JSON.parse(joined) as unknown) : joined;
}

function joinArray(parts: readonly StreamChunk[]): unknown[] {
  const result: unknown[] = [];
  let pending: string[] = [];
  let pendingIndex: unknown;
  const flush = (): void => {
    if (pending.length > 0) result.push(JSON.parse(pending.join('')) as unknown);
    pending = [];
    pendingIndex = undefined;
  };
  for (const p of parts) {
    const elementIndex = p.metrics?.element_index;
    if (elementIndex !== undefined) {
      if (elementIndex !== pendingIndex) flush();
      pendingIndex = elementIndex;
      pending.push(text(p));
      continue;
    }
    flush();
    if (!Array.isArray(p.output)) throw malformed('a part of a split array is neither a sub-array nor an element piece');
    for (const element of p.output as unknown[]) result.push(element);
  }
  flush();
  return result;
}

function text(chunk: StreamChunk): string {
  if (typeof chunk.output !== 'string') throw malformed(`expected text output at stream_index ${String(chunk.metrics?.stream_index)}`);
  return chunk.output;
}

function malformed(what: string): ServerlessWorkerError {
  return new ServerlessWorkerError('SW_MALFORMED_STREAM', `joinChunks: malformed stream: ${what}`);
}
