/**
 * `serverless-worker harness` flags about what callers and stores can reach, as a real
 * child process: a bad --webhook-allow entry stops the start
 * naming it; --lb-allow widens the load-balancing registration policy of a harness
 * without a key; a PostgreSQL store that cannot be opened (from --store or
 * SW_HARNESS_STORE) stops the start (SW_STORE_UNAVAILABLE) naming the store, never the
 * password.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, runTs, ChildList } from '../child-process.js';
import { call, closedPort, harnessListening } from '../kit/index.js';

const CLI = join(REPO_ROOT, 'src/cli/main.ts');
const children = new ChildList();
const SECRET = 'cli-Secret-0815';

afterEach(() => children.killAll());

describe('serverless-worker harness: reach flags', () => {
  it('a bad --webhook-allow entry stops the start naming it', async () => {
    const result = await runTs(CLI, ['harness', '--port', '0', '--webhook-allow', 'loopback,10.0.0.0/40']);
    expect(result.exitCode).toBe(1);
    expect(String(result.stderr)).toContain('10.0.0.0/40');
  });

  it('--lb-allow lets a harness without a key take a worker outside loopback', { timeout: 60_000 }, async () => {
    const child = runTs(CLI, ['harness', '--port', '0', '--lb-allow', '10.0.0.0/8', '--lb-allow', '192.168.0.0/16']);
    children.push(child);
    const { url } = await harnessListening(child, 'auth:');
    const register = (workerUrl: string) => call('POST', `${url}/v2/lb/load-balancing/workers`, { body: { url: workerUrl } });
    expect((await register('http://10.1.2.3:9000')).status).toBe(201);
    expect((await register('http://192.168.1.2:9000')).status).toBe(201);
    expect((await register('http://172.16.0.2:9000')).status).toBe(403);
  });

  it('names the store and hides the password when PostgreSQL cannot be reached, from --store or SW_HARNESS_STORE', { timeout: 60_000 }, async () => {
    const port = await closedPort();
    const spec = `postgres://sw:${SECRET}@127.0.0.1:${port}/jobs`;
    for (const result of [
      await runTs(CLI, ['harness', '--port', '0', '--store', spec]),
      await runTs(CLI, ['harness', '--port', '0'], { env: { SW_HARNESS_STORE: spec } }),
    ]) {
      expect(result.exitCode).toBe(1);
      const output = `${String(result.stdout)}${String(result.stderr)}`;
      expect(output).toContain('Could not open the job store');
      expect(output).toContain(`postgres 127.0.0.1:${port}/jobs`);
      expect(output).not.toContain(SECRET);
    }
  });
});
