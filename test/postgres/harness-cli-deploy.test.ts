/**
 * The deploy path with the CLI against `serverless-worker harness --store postgres://…`,
 * the harnesses real child processes and the commands run in process (cli-run.ts): template create, a CPU endpoint on a template left at the
 * default category, a template update that rolls the endpoint, the records read back
 * through a second harness on the same database after the first is killed, then
 * endpoint and template delete. The PostgreSQL store has its own create, update and
 * delete statements; this drives them through the commands a worker author runs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Endpoint, Template } from '../../packages/platform/src/harness/management/index.js';
import { ChildList } from '../child-process.js';
import { okJson, runCli } from '../cli/cli-run.js';
import { call } from '../kit/index.js';
import { startHarness } from '../reliability/support/harness-processes.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

const children = new ChildList();
let database: TestDatabase | undefined;
afterEach(async () => {
  await children.killAll();
  await database?.drop();
  database = undefined;
});

describe('serverless-worker template/endpoint commands on a harness with --store postgres://', () => {
  it('creates, rolls, keeps across a SIGKILL, and deletes the records', async () => {
    database = await createTestDatabase();
    const first = await startHarness(children, database.url);
    const env = { SERVERLESS_WORKER_API_URL: `${first.url}/v1` };

    const template = okJson<Template>(
      await runCli(['template', 'create', '--name', 'pg-deploy', '--image-name', 'registry.example.com/me/worker:1.0', '--env', 'LOG_LEVEL=info'], env),
    );
    expect(template).toMatchObject({ category: 'NVIDIA', isServerless: true, ports: [] });
    const endpoint = okJson<Endpoint>(
      await runCli(['endpoint', 'create', '--template-id', template.id, '--compute-type', 'CPU', '--cpu-flavor-ids', 'cpu3c', '--workers-max', '2'], env),
    );
    expect(endpoint).toMatchObject({ computeType: 'CPU', instanceIds: ['cpu3c-2-4'], workersMax: 2, version: 1 });
    expect((await call('GET', `${first.url}/v2/${endpoint.id}/health`)).status).toBe(200);

    const updated = okJson<Template>(
      await runCli(['template', 'update', template.id, '--image-name', 'registry.example.com/me/worker:1.1', '--env', 'MODEL=m'], env),
    );
    expect(updated.env).toEqual({ LOG_LEVEL: 'info', MODEL: 'm' });

    first.child.kill('SIGKILL');
    await first.child;
    const second = await startHarness(children, database.url);
    const env2 = { SERVERLESS_WORKER_API_URL: `${second.url}/v1` };
    expect(okJson<Endpoint>(await runCli(['endpoint', 'get', endpoint.id], env2))).toMatchObject({
      computeType: 'CPU',
      version: 2,
      releases: [{ reason: 'created' }, { reason: 'template-update', changedFields: ['imageName', 'env'] }],
    });
    const patched = okJson<Endpoint>(await runCli(['endpoint', 'update', endpoint.id, '--workers-max', '4', '--idle-timeout', '60'], env2));
    expect(patched).toMatchObject({ workersMax: 4, idleTimeout: 60, computeType: 'CPU' });

    expect((await runCli(['endpoint', 'delete', endpoint.id], env2)).code).toBe(0);
    expect((await runCli(['template', 'delete', template.id], env2)).code).toBe(0);
    expect(okJson<unknown[]>(await runCli(['template', 'list'], env2))).toEqual([]);
    expect(okJson<unknown[]>(await runCli(['endpoint', 'list'], env2))).toEqual([]);
  }, 180_000);
});
