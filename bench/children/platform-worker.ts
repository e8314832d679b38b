/**
 * @module bench/children/platform-worker
 * A worker process exactly as on the platform: `serve()` with the RUNPOD_WEBHOOK_*
 * variables the bench points at its harness, the default JSON logger (to stderr, which
 * the bench discards as a log collector would take it), the platform transport.
 * BENCH_CONCURRENCY sets the concurrency (default 1); BENCH_COALESCE=0 turns
 * coalesceStreamChunks off (one chunk per yield, the default before issue 19), =1 on;
 * unset leaves the default. BENCH_CHUNK_WINDOW=N sets the platform transport's
 * chunkWindow (1: one chunk post at a time, as before issue 46); BENCH_CHUNK_BATCH=N its
 * chunkBatch (1: one chunk a post, as before several went in one); unset leaves the defaults.
 * BENCH_IDLE_COMPACTION_MS=N sets idleCompactionMs (`off`: false); unset leaves the default.
 */
import { serve } from '../../src/index.js';
import { benchHandler } from './bench-handler.js';

await serve<unknown>(benchHandler, {
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? '1'),
  gpuSampling: false,
  ...(process.env.BENCH_COALESCE !== undefined ? { coalesceStreamChunks: process.env.BENCH_COALESCE === '1' } : {}),
  ...(process.env.BENCH_IDLE_COMPACTION_MS !== undefined
    ? { idleCompactionMs: process.env.BENCH_IDLE_COMPACTION_MS === 'off' ? false : Number(process.env.BENCH_IDLE_COMPACTION_MS) }
    : {}),
  platformTransport: {
    ...(process.env.BENCH_CHUNK_WINDOW !== undefined ? { chunkWindow: Number(process.env.BENCH_CHUNK_WINDOW) } : {}),
    ...(process.env.BENCH_CHUNK_BATCH !== undefined ? { chunkBatch: Number(process.env.BENCH_CHUNK_BATCH) } : {}),
  },
});
