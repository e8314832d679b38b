/**
 * Issue 46 item 3: a worker on the platform transport that talks plain HTTP (the worker child of
 * `--serve-api`, a worker under a local harness) loads neither Node's fetch client (undici), nor
 * HTTP/2, nor TLS. From Node 22 an ESM `import ... from 'node:http'` builds the module's
 * namespace from every export, lazy ones included, and one of those loads undici, which loads
 * HTTP/2, TLS and the crypto stack: 76 builtin modules, about 2 MiB of heap and 5 MiB of a
 * process's memory on Node 24, where `require` or `process.getBuiltinModule` load 19
 * (bench/README, issue 46, 2026-12-05). Node 20 does not, so this runs under each later line
 * the packages support (test/package/node-lines.ts), the fixture through tsx.
 */
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { parseJobRequest } from '../../src/job/index.js';
import { startWorkerApiServer, type RunningWorkerApi } from '../harness/http/worker-api/worker-api-server.js';
import { waitFor } from '../kit/index.js';
import { NODE_LINES, nodeBinary, shellEnv } from '../package/node-lines.js';
import { REPO_ROOT } from './worker-process.js';

const ENDPOINT = 'builtins';
const FIXTURE = fileURLToPath(new URL('./fixtures/builtin-loads-worker.ts', import.meta.url));

let server: RunningWorkerApi | undefined;
let worker: ResultPromise | undefined;

afterEach(async () => {
  worker?.kill('SIGKILL');
  await worker?.catch(() => undefined);
  worker = undefined;
  await server?.close();
  server = undefined;
});

describe.each(NODE_LINES)('a platform worker over plain HTTP under Node %i', (major) => {
  it('has loaded no fetch client, HTTP/2 or TLS by its first job', { timeout: 360_000 }, async () => {
    const node = await nodeBinary(major);
    server = await startWorkerApiServer({ longPollMs: 2_000 });
    const running = server;
    worker = execa(node, ['--import', 'tsx', FIXTURE], {
      cwd: REPO_ROOT,
      env: { ...shellEnv(node), ...running.envFor(ENDPOINT), RUNPOD_POD_ID: `builtins-${major}`, LOG_LEVEL: 'warn', SW_NODE_VERSION_WARNING: 'off' },
      all: true,
      reject: false,
    });
    const endpoint = running.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit(parseJobRequest({ input: {} }));
    await waitFor(async () => (await endpoint.status(id)).status === 'COMPLETED', 'the job completed', 60_000, 100);
    const { output } = await endpoint.status(id);
    expect(output).toMatchObject({ undici: false, http2: false, tls: false });
  });
});
