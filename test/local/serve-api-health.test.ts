/**
 * /health of --serve-api while its worker child starts (a real child process whose start
 * takes seconds before it calls serve(): imports, a compile): the worker shows as
 * initializing, not ready, from the start, before the child is first heard from (it used
 * to show no worker at all, idle 0, initializing 0, for those seconds); ready once it is.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChildList, REPO_ROOT, runTs } from '../child-process.js';
import { call, freePort, waitFor } from '../kit/index.js';

const SLOW = join(REPO_ROOT, 'test/fixtures/workers/slow-start.ts');
const children = new ChildList();
afterEach(() => children.killAll());

interface Health {
  workers: { idle: number; running: number; initializing: number; ready: number };
}

describe('--serve-api /health while the worker starts', () => {
  it('counts the starting worker initializing before it is first heard from, then ready', { timeout: 90_000 }, async () => {
    const port = await freePort();
    const child = runTs(SLOW, ['--serve-api', '--port', String(port)], { env: { SLOW_START_MS: '4000' } });
    children.push(child);
    let stdout = '';
    child.stdout?.on('data', (data: Buffer) => (stdout += data.toString('utf8')));
    const url = `http://127.0.0.1:${port}/v2/local/health`;
    const health = async (): Promise<Health | undefined> => {
      try {
        const answer = await call('GET', url);
        return answer.status === 200 ? (answer.json as Health) : undefined;
      } catch {
        return undefined;
      }
    };
    const starting = await waitFor(
      async () => {
        const read = await health();
        return read && read.workers.initializing === 1 ? read : undefined;
      },
      'the starting worker counted initializing',
      30_000,
      20,
    );
    // Before the child even called serve(): the supervisor vouches for it.
    expect(stdout).not.toContain('SERVE_CALLED');
    expect(starting.workers).toMatchObject({ idle: 0, running: 0, initializing: 1, ready: 0 });
    const ready = await waitFor(
      async () => {
        const read = await health();
        return read && read.workers.ready === 1 ? read : undefined;
      },
      'the worker ready',
      60_000,
      50,
    );
    expect(ready.workers).toMatchObject({ idle: 1, initializing: 0, ready: 1 });
  });
});
