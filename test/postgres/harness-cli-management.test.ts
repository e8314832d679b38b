/**
 * `serverless-worker harness --store postgres://…` as real child processes: the /v1
 * records live in the database (a harness killed with SIGKILL and another started on the
 * same database still list them; template names stay unique), and a harness with a
 * launcher logs the machine id it claims worker slots under (--machine-id).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ChildList } from '../child-process.js';
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

describe('serverless-worker harness --store postgres:// (management records, machine id)', () => {
  it('keeps /v1 records through a SIGKILL, shares them with the next harness, and logs --machine-id', async () => {
    database = await createTestDatabase();
    const first = await startHarness(children, database.url, 0, ['--image', 'test/idle:1=node -e 0', '--gpus', 'none', '--machine-id', 'box-7']);
    const template = (
      await call('POST', `${first.url}/v1/templates`, { body: { name: 'cli-kept', imageName: 'test/other:1', isServerless: true, category: 'CPU' } })
    ).json as { id: string };
    const endpoint = await call('POST', `${first.url}/v1/endpoints`, { body: { templateId: template.id, workersMax: 2 } });
    expect(endpoint.status).toBe(200);
    const created = endpoint.json as { id: string; version: number };
    // Let the first launcher tick run on the database, then kill it; its whole stderr is kept by execa.
    await new Promise((resolve) => setTimeout(resolve, 500));
    first.child.kill('SIGKILL');
    const stderr = String((await first.child).stderr);
    expect(stderr).toContain('launcher machine id: box-7 (worker slots shared with every harness on the database)');
    expect(stderr).toContain('launcher started on machine box-7');

    const second = await startHarness(children, database.url);
    const read = await call('GET', `${second.url}/v1/endpoints/${created.id}`);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ id: created.id, templateId: template.id, workersMax: 2, version: 1 });
    const templates = (await call('GET', `${second.url}/v1/templates`)).json as Array<{ id: string }>;
    expect(templates.map((t) => t.id)).toEqual([template.id]);
    const taken = await call('POST', `${second.url}/v1/templates`, { body: { name: 'cli-kept', imageName: 'x', isServerless: true } });
    expect((taken.json as { error: { code: string } }).error.code).toBe('SW_TEMPLATE_NAME_TAKEN');
    expect((await call('GET', `${second.url}/v2/${created.id}/health`)).status).toBe(200);
  }, 120_000);
});
