/**
 * `serverless-worker harness` (a real CLI process on port 0) prefills the dashboard's
 * submit form from the working directory's test_input.json; without one, or with one
 * that is not a job request (a warning says why), the form starts from its default.
 * Plain HTTP on /ui/api/overview, no browser.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChildList, REPO_ROOT, runTs } from '../child-process.js';
import { harnessListening } from '../kit/index.js';

const CLI = join(REPO_ROOT, 'src/cli/main.ts');
const children = new ChildList();
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sw-ui-test-input-'));
});

afterEach(async () => {
  await children.killAll();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Start the harness in `cwd` and read its dashboard overview's form example. */
async function overviewIn(cwd: string): Promise<{ overview: { testInput: unknown; testInputGiven: boolean }; child: ReturnType<typeof runTs> }> {
  const child = runTs(CLI, ['harness', '--port', '0', '--no-management'], { cwd, timeout: 60_000, env: { LOG_LEVEL: 'warn' } });
  children.push(child);
  const { url } = await harnessListening(child, 'dashboard:');
  const answer = await fetch(`${url}/ui/api/overview`);
  expect(answer.status).toBe(200);
  return { overview: (await answer.json()) as { testInput: unknown; testInputGiven: boolean }, child };
}

describe('serverless-worker harness: the submit form from test_input.json', { timeout: 120_000 }, () => {
  it("starts from the working directory's test_input.json", async () => {
    const cwd = await mkdtemp(join(dir, 'given-'));
    await writeFile(join(cwd, 'test_input.json'), JSON.stringify({ input: { prompt: 'from the file', n: 2 } }));
    const { overview } = await overviewIn(cwd);
    expect(overview.testInputGiven).toBe(true);
    expect(overview.testInput).toEqual({ input: { prompt: 'from the file', n: 2 } });
  });

  it('starts from {"input": {}} without one, and with one that is not a job request (a warning names the problem)', async () => {
    const none = await mkdtemp(join(dir, 'none-'));
    const absent = await overviewIn(none);
    expect(absent.overview).toMatchObject({ testInputGiven: false, testInput: { input: {} } });

    const bad = await mkdtemp(join(dir, 'bad-'));
    await writeFile(join(bad, 'test_input.json'), JSON.stringify({ prompt: 'no input field' }));
    const invalid = await overviewIn(bad);
    expect(invalid.overview).toMatchObject({ testInputGiven: false, testInput: { input: {} } });
    invalid.child.kill('SIGTERM');
    const result = await invalid.child;
    expect(`${String(result.stdout)}${String(result.stderr)}`).toContain('test_input.json in');
    expect(`${String(result.stdout)}${String(result.stderr)}`).toContain('is left out of the submit form');
  });
});
