/**
 * @module harness/http/off-loop-body-check
 * Large request bodies are checked off the event loop: up to BODY_CHECK_THREADS worker
 * threads per process (started as large bodies arrive together, unref'd, ended after
 * THREAD_IDLE_MS idle), each reads the text in one pass (body-scan-source.ts) for whether
 * it is JSON at all, its depth, its key count and where its top-level `input` value lies,
 * and answers only those facts. JSON.parse of a 9.9 MB body of 834 000 keys takes 0.2 to
 * 0.5 s; on the harness's loop that was a /health left unanswered for seconds while a few
 * such bodies came in (bench/big-bodies.ts).
 * The loop itself then only parses the envelope around the input (json-body.ts).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { systemClock, type TimerHandle } from 'serverless-worker/internal';
import { BODY_SCAN_SOURCE } from './body-scan-source.js';

/** What the thread found in one body. */
export interface BodyFacts {
  /** JSON.parse's message when the text is not JSON. */
  readonly syntaxError?: string;
  /** The first limit passed (the scan stops there). */
  readonly over?: 'depth' | 'keys';
  readonly depth: number;
  readonly keys: number;
  /** The last top-level "input" value's text: [start, end) in the body (-1 when there is none). */
  readonly inputStart: number;
  readonly inputEnd: number;
  /** `"__proto__"` or `"constructor"` appears: the loop parses it with fastify's guarded parser instead. */
  readonly guarded: boolean;
}

// Runs in the thread (CommonJS eval worker): checkBody of body-scan-source.ts.
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
${BODY_SCAN_SOURCE}
parentPort.on('message', ({ id, text, maxDepth, maxKeys }) => {
  parentPort.postMessage({ id, ...checkBody(text, maxDepth, maxKeys) });
});
`;

interface Pending {
  resolve(facts: BodyFacts): void;
  reject(error: Error): void;
}

/** One check thread and the checks it has not answered yet. */
interface CheckThread {
  readonly worker: Worker;
  readonly pending: Map<number, Pending>;
  /** Ends the thread once it has been idle THREAD_IDLE_MS. */
  idle?: TimerHandle;
}

/**
 * A check thread with nothing to do this long ends, and its memory with it. Each thread
 * is a V8 isolate of its own: after a burst of big bodies it held the copies and parse
 * trees of the last ones it read, never collected since it ran no more JavaScript
 * (bench/bounded-bodies.ts: the harness's RSS stayed high long after the burst).
 */
export const THREAD_IDLE_MS = 5_000;

/**
 * Most check threads per process: bodies that arrive together are checked in parallel,
 * one per thread (they used to queue behind one thread: 80 bodies of 10 MB answered one
 * after another over minutes, issue 32): 2 to 4, leaving a core to the event loop.
 */
export const BODY_CHECK_THREADS = Math.max(2, Math.min(4, availableParallelism() - 1));

const threads: CheckThread[] = [];
let nextId = 0;

function startThread(): CheckThread {
  const worker = new Worker(THREAD_SOURCE, { eval: true, name: 'serverless-worker body check' });
  const thread: CheckThread = { worker, pending: new Map() };
  worker.unref();
  worker.on('message', (message: BodyFacts & { id: number }) => {
    const waiting = thread.pending.get(message.id);
    thread.pending.delete(message.id);
    if (thread.pending.size === 0) {
      worker.unref();
      thread.idle = systemClock.setTimer(THREAD_IDLE_MS, () => {
        if (thread.pending.size > 0) return;
        const index = threads.indexOf(thread);
        if (index >= 0) threads.splice(index, 1);
        void worker.terminate();
      });
    }
    waiting?.resolve(message);
  });
  const fail = (error: Error) => {
    const index = threads.indexOf(thread);
    if (index >= 0) threads.splice(index, 1);
    for (const waiting of thread.pending.values()) waiting.reject(error);
    thread.pending.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the body check thread exited (${code})`)));
  threads.push(thread);
  return thread;
}

/** An idle thread, a new one while under BODY_CHECK_THREADS, else the one with the fewest checks waiting. */
function pickThread(): CheckThread {
  const idle = threads.find((thread) => thread.pending.size === 0);
  if (idle) return idle;
  if (threads.length < BODY_CHECK_THREADS) return startThread();
  return threads.reduce((least, thread) => (thread.pending.size < least.pending.size ? thread : least));
}

/** The facts of `text`, read by a body check thread. Rejects only if the thread died. */
export function checkBodyOffThread(text: string, limits: { readonly maxDepth: number; readonly maxKeys: number }): Promise<BodyFacts> {
  const thread = pickThread();
  const id = nextId++;
  return new Promise<BodyFacts>((resolve, reject) => {
    thread.idle?.cancel();
    thread.pending.set(id, { resolve, reject });
    // Held while a check is pending: a process waiting for an answer must not exit.
    thread.worker.ref();
    thread.worker.postMessage({ id, text, maxDepth: limits.maxDepth, maxKeys: limits.maxKeys });
  });
}

/** Check threads running now (tests). */
export function bodyCheckThreadCount(): number {
  return threads.length;
}
