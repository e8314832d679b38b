/**
 * The start-up phase in the local modes, as real child processes: the dry run runs
 * init first, logs how long it took and hands the state to the job; a failed init ends
 * the dry run with exit 1 before any job, naming the reason. --serve-api runs init
 * before it listens.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { jsonLines, runTs } from '../../child-process.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/workers/init-worker.ts', import.meta.url));

describe('init in the dry run and --serve-api', () => {
  it('dry run: init first (duration logged), its state reaches the job', async () => {
    const result = await runTs(FIXTURE, ['--test-input', '{"input":{"prompt":"hi"}}'], { env: { INIT_DELAY_MS: '300' } });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const lines = jsonLines(String(result.stdout)) as Array<Record<string, unknown>>;
    expect(lines[0]).toMatchObject({ event: 'init-started' });
    expect(lines[lines.length - 1]).toMatchObject({ status: 'COMPLETED', output: { state: { model: 'tiny', loadedBy: 'local' }, input: { prompt: 'hi' } } });
    expect(String(result.stderr)).toMatch(/init finished in \d+ ms/);
  });

  it('dry run: a failed init exits 1 with the reason, and no job runs', async () => {
    const result = await runTs(FIXTURE, ['--test-input', '{"input":{}}'], { env: { INIT_MODE: 'fail' } });
    expect(result.exitCode).toBe(1);
    const lines = jsonLines(String(result.stdout)) as Array<Record<string, unknown>>;
    expect(lines[lines.length - 1]).toMatchObject({
      status: 'FAILED',
      error: { code: 'SW_INIT_FAILED', message: 'init failed: model file missing: /models/tiny.bin' },
    });
    expect(String(result.stderr)).toContain('start-up failed: init failed: model file missing');
  });

  it('--serve-api: init runs before the server listens, then jobs see its state', async () => {
    const child = runTs(FIXTURE, ['--serve-api', '--port', '0'], { env: { INIT_DELAY_MS: '200' }, timeout: 60_000 });
    let stdout = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout?.on('data', (data: Buffer) => {
        stdout += data.toString();
        const match = /listening on (http:\/\/[^\s]+)/.exec(stdout);
        if (match?.[1]) resolve(match[1]);
      });
      void child.then(() => reject(new Error(`exited before listening: ${stdout}`)));
    });
    try {
      const response = await fetch(`${url}/runsync`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: { n: 1 } }),
      });
      expect(await response.json()).toMatchObject({ status: 'COMPLETED', output: { state: { model: 'tiny' }, input: { n: 1 } } });
      // init-started was printed before the banner.
      expect(stdout.indexOf('init-started')).toBeLessThan(stdout.indexOf('listening on'));
    } finally {
      child.kill('SIGTERM');
      const result = await child;
      expect(String(result.stderr)).toMatch(/init finished in \d+ ms/);
    }
  });
});
