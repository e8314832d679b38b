/**
 * A worker whose RUNPOD_AI_API_KEY the worker API refuses: one error line naming the
 * variable, then quiet retries at the slow rate (a real worker process against a
 * keyed worker API on 127.0.0.1).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { apiKeyHook } from '../../packages/platform/src/harness/http/api-key.js';
import { startWorkerApiServer, type RunningWorkerApi } from '../harness/http/worker-api/worker-api-server.js';
import { waitFor } from '../kit/index.js';
import { REPO_ROOT, killAllWorkers, startWorkerProcess } from './worker-process.js';

const FIXTURE = join(REPO_ROOT, 'test/fixtures/workers/quick-backoff-platform.ts');
const KEY = 'the-right-key';

let server: RunningWorkerApi | undefined;
afterEach(async () => {
  await killAllWorkers();
  await server?.close();
  server = undefined;
});

async function keyedServer(): Promise<{ running: RunningWorkerApi; takes: () => number }> {
  let takes = 0;
  const running = await startWorkerApiServer({
    apiKey: KEY,
    beforeRoutes: (app) => {
      app.addHook('onRequest', async (request) => {
        if (request.url.includes('/job-take/')) takes++;
      });
      app.addHook('onRequest', apiKeyHook(KEY));
    },
  });
  server = running;
  return { running, takes: () => takes };
}

const logLines = (stderr: string): Array<{ level: number; msg: string }> =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string });

describe('a worker API that refuses the key', () => {
  it.each([
    ['a wrong key', { RUNPOD_AI_API_KEY: 'wrong-key' }, 'the key set now is wrong'],
    ['no key', {}, 'it is not set'],
  ])('with %s: reported once, naming RUNPOD_AI_API_KEY, and retried', { timeout: 90_000 }, async (_name, keyEnv, why) => {
    const { running, takes } = await keyedServer();
    const env: Record<string, string> = { ...running.envFor('ep', 300), LOG_LEVEL: 'info', ...keyEnv };
    if (!('RUNPOD_AI_API_KEY' in keyEnv)) delete env.RUNPOD_AI_API_KEY;
    const worker = startWorkerProcess('keyless', env, FIXTURE);
    // Six refused takes at the 500 ms slow rate: about 3 s once the child has started.
    await waitFor(() => takes() >= 6 || undefined, `six take attempts (stderr: ${worker.stderr().slice(-1_000)})`, 60_000);
    const lines = logLines(worker.stderr());
    const refused = lines.filter((line) => line.msg.includes('RUNPOD_AI_API_KEY'));
    expect(refused, worker.stderr()).toHaveLength(1);
    expect(refused[0]?.msg).toContain('the worker API refused the key');
    expect(refused[0]?.msg).toContain(why);
    // Nothing else at warn or above: no per-poll warnings, no heartbeat warnings.
    expect(
      lines.filter((line) => line.level >= 40 && line !== refused[0]),
      worker.stderr(),
    ).toEqual([]);
    console.log(`refused takes seen: ${takes()}; worker log lines: ${lines.length}`);
  });
});
