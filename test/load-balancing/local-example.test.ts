/**
 * The one-command launcher of the load-balancing example (`npm run example:load-balancing`,
 * examples/load-balancing/local.ts) as a real child process: it prints the harness's URL
 * and the endpoint's base URL, the example worker registers with that harness, one chat
 * completion goes through `/lb/local/v1`, and SIGTERM stops the launcher and its worker
 * (exit 0). The launcher runs in a process group of its own, so that a failed test can
 * end its worker too.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runTs, type TsChild } from '../child-process.js';
import { waitFor, within } from '../kit/index.js';

const LOCAL = fileURLToPath(new URL('../../examples/load-balancing/local.ts', import.meta.url));

let launcher: TsChild | undefined;

afterEach(async () => {
  // The launcher and the worker it spawned (same process group), if the test did not stop them.
  if (launcher?.pid !== undefined && launcher.exitCode === null) {
    try {
      process.kill(-launcher.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await launcher;
  launcher = undefined;
});

describe('examples/load-balancing/local.ts', () => {
  it('starts a harness and the example worker; a chat completion goes through /lb/local/v1; SIGTERM stops both', { timeout: 90_000 }, async () => {
    const child = runTs(LOCAL, [], { env: { PORT_HARNESS: '0', LOG_LEVEL: 'warn', MODEL_LOAD_MS: '100' }, detached: true, timeout: 80_000 });
    launcher = child;
    let stdout = '';
    child.stdout?.on('data', (data: Buffer) => (stdout += data.toString('utf8')));
    const base = await waitFor(
      () => /openai client base URL: (http:\/\/127\.0\.0\.1:\d+\/lb\/local\/v1)/.exec(stdout)?.[1],
      `the launcher's banner (stdout: ${stdout.slice(-1_000)})`,
      40_000,
    );
    const harness = base.replace(/\/lb\/local\/v1$/, '');
    expect(stdout).toContain(`load-balancing endpoint "local": ${harness}/lb/local/<path>`);
    await waitFor(
      async () => {
        const health = (await (await fetch(`${harness}/v2/local/health`)).json()) as { workers: { idle: number } };
        return health.workers.idle === 1 || undefined;
      },
      `the example worker to be healthy in the harness (stdout: ${stdout.slice(-1_000)})`,
      40_000,
      100,
    );
    const answer = await fetch(`${base}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'upper-words-1', messages: [{ role: 'user', content: 'hello launcher' }] }),
    });
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content).toBe('HELLO LAUNCHER');
    child.kill('SIGTERM');
    const result = await within(child, 'the launcher to exit', 30_000);
    expect(result.exitCode, String(result.stderr)).toBe(0);
  });
});
