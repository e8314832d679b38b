/**
 * Probe worker: one handler that exercises the runtime inside an image (the image tests,
 * test/docker, build it with `--build-arg WORKER=examples/probe`). By `mode`:
 *
 * - `echo`: answers `{ echo: message }`.
 * - `stream`: yields the words one by one (a streamed job).
 * - `wait`: waits `ms`, ending early when the job is cancelled or times out.
 * - `block`: blocks the event loop for `ms` (Atomics.wait: no timer, no signal runs): only
 *   the deadline watchdog thread can end such a job.
 * - `orphan`: starts `sh -c 'sleep 0.2 & echo $!'`: sh exits at once and its `sleep` is
 *   orphaned, adopted by PID 1. Once the sleep is over it is `reaped` when PID 1 waits for
 *   adopted children (tini in the images), else a `zombie` (Node as PID 1 does not).
 *
 * Dry run: `npx tsx examples/probe/worker.ts` (test_input.json beside you) or
 * `npx tsx examples/probe/worker.ts --test-input '{"input":{"mode":"stream","words":["a","b"]}}'`.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import * as z from 'zod';
import { serve } from 'serverless-worker';

const Input = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('echo'), message: z.string().min(1) }),
  z.object({ mode: z.literal('stream'), words: z.array(z.string()).min(1), delayMs: z.number().int().min(0).max(1_000).default(20) }),
  z.object({ mode: z.literal('wait'), ms: z.number().int().min(0).max(600_000) }),
  z.object({ mode: z.literal('block'), ms: z.number().int().min(0).max(600_000) }),
  z.object({ mode: z.literal('orphan') }),
]);
type Input = z.infer<typeof Input>;

/** The state letter of a process from /proc, or `gone` once it was reaped. */
async function processState(pid: number): Promise<string> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  return /^State:\s+(\S)/m.exec(status ?? '')?.[1] ?? 'gone';
}

async function* words(input: Extract<Input, { mode: 'stream' }>, signal: AbortSignal) {
  for (const word of input.words) {
    await sleep(input.delayMs, undefined, { signal });
    yield word;
  }
}

async function answer(input: Exclude<Input, { mode: 'stream' }>, signal: AbortSignal): Promise<unknown> {
  switch (input.mode) {
    case 'echo':
      return { echo: input.message };
    case 'wait':
      await sleep(input.ms, undefined, { signal }).catch(() => undefined);
      return { waited: input.ms, aborted: signal.aborted };
    case 'block':
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, input.ms);
      return { blocked: input.ms };
    case 'orphan': {
      const { stdout } = await promisify(execFile)('sh', ['-c', 'sleep 0.2 & echo $!']);
      const pid = Number.parseInt(stdout.trim(), 10);
      // Long enough for the sleep to end and PID 1 to see its SIGCHLD.
      await sleep(1_500);
      const state = await processState(pid);
      // PID 1's program: its argv[0] (Node renames its own thread, so /proc/1/comm says MainThread).
      const pid1 = (await readFile('/proc/1/cmdline', 'utf8')).split('\0')[0]?.split('/').at(-1);
      return { pid, pid1, state: state === 'gone' ? 'reaped' : state === 'Z' ? 'zombie' : state };
    }
  }
}

await serve<Input>(
  // Not an async function: a streaming job must get the generator itself, not a promise of it.
  (job, ctx) => (job.input.mode === 'stream' ? words(job.input, ctx.signal) : answer(job.input, ctx.signal)),
  { inputSchema: Input, aggregateStream: true, timeoutGraceMs: 1_000 },
);
