/**
 * A Node older than 22.12 (what the packages' engines and the image build need) is said
 * once at start, in every mode (worker/node-version.ts): the dry run, and --serve-api
 * (its parent says it, its supervised child does not say it again). The suite turns the
 * warning off for every other test (vitest.config.ts: the CI machine runs Node 20); these
 * turn it on. Which Node runs this decides whether the line is there: it is exactly when
 * nodeVersionWarning says so.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ChildList, ECHO_FIXTURE as ECHO, runTs } from '../child-process.js';
import { call, startServeApiProcess, waitFor } from '../kit/index.js';
import { nodeVersionWarning } from '../../src/worker/node-version.js';

const ON = { SW_NODE_VERSION_WARNING: '' };
const children = new ChildList();
afterEach(() => children.killAll());

const count = (text: string): number => text.split('\n').filter((line) => line.includes('which serverless-worker needs')).length;

describe('the Node version warning', () => {
  it('says which Node is too old, and nothing from 22.12 on', () => {
    expect(nodeVersionWarning('20.20.2')).toContain('Node.js 20.20.2 is older than 22.12');
    expect(nodeVersionWarning('22.11.0')).toContain('older than 22.12');
    expect(nodeVersionWarning('22.12.0')).toBeUndefined();
    expect(nodeVersionWarning('24.1.0')).toBeUndefined();
  });

  it('the dry run says it once (below 22.12), or not at all', async () => {
    const result = await runTs(ECHO, ['--test-input', '{"input":{"message":"x"}}'], { env: ON });
    expect(result.exitCode).toBe(0);
    expect(count(String(result.stderr))).toBe(nodeVersionWarning(process.versions.node) === undefined ? 0 : 1);
  });

  it('--serve-api says it once, not again from its worker child', { timeout: 90_000 }, async () => {
    const served = await startServeApiProcess(children, ECHO, ['--serve-api', '--port', '0'], { env: ON });
    // The child ran a job: it started and said what it would.
    expect((await call('POST', `${served.url}/v2/local/runsync`, { body: { input: { message: 'x' } } })).json).toMatchObject({ status: 'COMPLETED' });
    await waitFor(() => served.stderr().includes('job finished') || served.stderr().includes('"echoing"') || served.stderr().length > 0, 'its log');
    expect(count(served.stderr())).toBe(nodeVersionWarning(process.versions.node) === undefined ? 0 : 1);
  });
});
