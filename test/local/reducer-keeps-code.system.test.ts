/**
 * Issue 46, burst after idle: under Node 24, once start-up is over, V8's memory reducer no longer
 * throws the request path's optimized code away in a pause (metrics/memory-reducer.ts). A real
 * `--serve-api` under that Node with `--trace-gc --trace-deopt` (both processes: the child gets
 * its parent's flags): after a first burst, the reducer's start-up pair and the switch
 * (REDUCER_SWITCH_MS after start), a second burst whose jobs leave garbage in the child's old space
 * (the fixture's `churn`: so that V8 starts its reducer) and a pause in which the reducer runs again. In that second
 * pause V8 reports a full collection, none of them memory-reducing, and no function thrown away
 * for "embedded weak objects cleared" (before: about 130 after every such pause). The flag exists
 * on V8 13 only, so Node 24 alone; the fixture through tsx.
 */
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { REDUCER_SWITCH_MS } from '../../src/metrics/memory-reducer.js';
import { postJson, waitFor } from '../kit/index.js';
import { nodeBinary, shellEnv } from '../package/node-lines.js';
import { REPO_ROOT } from '../child-process.js';

const WORKER = fileURLToPath(new URL('./fixtures/channel-worker.ts', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let server: ResultPromise | undefined;
afterEach(async () => {
  server?.kill('SIGKILL');
  await server?.catch(() => undefined);
  server = undefined;
});

/** `count` /runsync through 8 clients at once, in the fixture's `mode`. */
async function burst(url: string, count: number, mode = 'echo'): Promise<void> {
  let left = count;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (left-- > 0) expect(await postJson<{ status?: string }>(`${url}/runsync`, { input: { tag: left, mode } })).toMatchObject({ status: 'COMPLETED' });
    }),
  );
}

describe('--serve-api under Node 24, a pause after start-up', () => {
  it("keeps its optimized code through V8's memory reducer", { timeout: 300_000 }, async () => {
    const node = await nodeBinary(24);
    const started = Date.now();
    server = execa(node, ['--import', 'tsx', '--trace-gc', '--trace-deopt', WORKER, '--serve-api', '--port', '0', '--no-rate-limit'], {
      cwd: REPO_ROOT,
      env: { ...shellEnv(node), LOG_LEVEL: 'warn', SW_NODE_VERSION_WARNING: 'off', CHANNEL_WORKER_CONCURRENCY: '8' },
      all: true,
      reject: false,
    });
    let output = '';
    server.all?.on('data', (data: Buffer) => (output += data.toString('utf8')));
    await waitFor(() => /listening on (http:\/\/127\.0\.0\.1:\d+\/v2\/[\w-]+)/.test(output), 'the banner', 60_000, 50);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+\/v2\/[\w-]+)/.exec(output)?.[1] ?? '';
    await burst(url, 3_000);
    // Start-up's reducing pair (about 8 s after the last full collection), then the switch.
    await waitFor(() => /Mark-Compact \(reduce\)/.test(output), "the reducer's start-up collections", 60_000, 100);
    await sleep(Math.max(0, started + REDUCER_SWITCH_MS + 2_000 - Date.now()));
    // Work whose objects die in old space (the fixture's `churn`), so that full collections give
    // memory back: V8 then starts its reducer, which runs in the pause. (The local API itself
    // leaves little garbage in old space since its sets are HeldLists: plain /runsync jobs may
    // not start it at all.)
    const workFrom = output.length;
    await burst(url, 12_000, 'churn');
    expect(output.slice(workFrom), 'a full collection while working').toMatch(/Mark-Compact/);
    const mark = output.length;
    // The reducer looks about 8 s after a full collection, and again while allocation goes on:
    // the whole window, short of our own idle compaction's full step (memory-reducing, by
    // design) 30 s after the work.
    await sleep(22_000);
    const pause = output.slice(mark);
    expect(pause, 'the reducer ran in the pause').toMatch(/Mark-Compact/);
    expect(pause).not.toMatch(/Mark-Compact \(reduce\)/);
    expect(pause).not.toMatch(/embedded weak objects cleared/);
  });
});
