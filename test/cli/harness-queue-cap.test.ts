/**
 * `serverless-worker harness --max-queued-bytes` (issue 24) as a real child process: past
 * the cap /run answers 503 SW_QUEUE_FULL with Retry-After; a bad
 * value is refused at start.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, runTs, ChildList } from '../child-process.js';
import { call, errorCode, harnessListening } from '../kit/index.js';

const CLI = join(REPO_ROOT, 'src/cli/main.ts');
const children = new ChildList();

afterEach(() => children.killAll());

describe('serverless-worker harness --max-queued-bytes', () => {
  it('queues bodies up to the cap, then answers 503 SW_QUEUE_FULL with Retry-After', async () => {
    const child = runTs(CLI, ['harness', '--port', '0', '--max-queued-bytes', '600']);
    children.push(child);
    const { url } = await harnessListening(child, 'auth:');
    const body = JSON.stringify({ input: { pad: 'x'.repeat(250) } });
    expect((await call('POST', `${url}/v2/ep/run`, { body })).status).toBe(200);
    expect((await call('POST', `${url}/v2/ep/run`, { body })).status).toBe(200);
    const full = await call('POST', `${url}/v2/ep/run`, { body });
    expect([full.status, errorCode(full), full.headers.get('retry-after')]).toEqual([503, 'SW_QUEUE_FULL', '5']);
  });

  it('refuses a value that is not a whole number (its --help line: settings-docs.unit.test.ts)', async () => {
    const bad = await runTs(CLI, ['harness', '--port', '0', '--max-queued-bytes', 'lots']);
    expect(bad.exitCode).not.toBe(0);
    expect(String(bad.stderr)).toContain('--max-queued-bytes');
  });
});
