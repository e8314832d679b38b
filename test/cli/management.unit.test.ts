/**
 * The management subcommands, the program run in process (cli-run.ts: src/cli/program.ts
 * with its output gathered; the compiled command's smoke: compiled-cli.system.test.ts)
 * against the management plugin listening on loopback: template
 * validate and push (create, then update by name), endpoint create, volume create and
 * resize, and one-line failures with the server's message and exit status 1.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Endpoint, NetworkVolume, Template } from '../../packages/platform/src/harness/management/index.js';
import { EndpointCreateInputSchema } from '../../packages/platform/src/harness/management/index.js';
import { startManagementServer, type RunningManagementServer } from '../harness/management/management-server.js';
import { ROOT, failureLine, gpuTemplateInput, runCli } from './cli-run.js';

const API_KEY = 'cli-test-key';

let server: RunningManagementServer;
let dir: string;
let keyEnv: Record<string, string>;

beforeAll(async () => {
  server = await startManagementServer({ apiKey: API_KEY });
  dir = await mkdtemp(join(tmpdir(), 'sw-cli-management-'));
  keyEnv = { SERVERLESS_WORKER_API_KEY: API_KEY };
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('template validate', () => {
  it('accepts every file in templates/', async () => {
    const run = await runCli(['template', 'validate', 'templates/nvidia.json', 'templates/amd.json', 'templates/cpu.json']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('ok templates/nvidia.json (serverless-worker-echo-nvidia: NVIDIA, serverless)');
    expect(run.stdout).toContain('ok templates/amd.json');
    expect(run.stdout).toContain('ok templates/cpu.json');
  });

  it('exits 1 naming the file, the field, what it allows and the value; good files still pass', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ name: 'bad', imageName: 'img', containerDiskInGb: -5 }));
    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{ "name": ');
    const run = await runCli(['template', 'validate', 'templates/cpu.json', bad, broken, join(dir, 'missing.json')]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('ok templates/cpu.json');
    expect(run.stderr).toContain(`${bad}: Invalid template: containerDiskInGb must be an integer of at least 1 GB (got -5)`);
    expect(run.stderr).toContain(`${broken}: not valid JSON`);
    expect(run.stderr).toContain(`${join(dir, 'missing.json')}: cannot read the file`);
    expect(run.stderr).toContain('serverless-worker: 3 of 4 template files are not valid');
  });
});

describe('template push', () => {
  it('creates the template, then updates it by name, dropping the fields an update refuses', async () => {
    const file = join(dir, 'push.json');
    const original = JSON.parse(await readFile(join(ROOT, 'templates/nvidia.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(file, JSON.stringify({ ...original, name: 'cli-pushed' }));

    const created = await runCli(['template', 'push', file, '--base-url', server.baseUrl], keyEnv);
    expect(created.code, created.stderr).toBe(0);
    const createdRecord = JSON.parse(created.stdout) as Template;
    expect(createdRecord).toMatchObject({ name: 'cli-pushed', category: 'NVIDIA', isServerless: true, imageName: original.imageName });
    expect(created.stderr).toContain(`created template "cli-pushed" (id ${createdRecord.id})`);

    // An endpoint uses the template, so the update must roll it.
    const endpoint = server.store.createEndpoint(
      EndpointCreateInputSchema.parse({
        templateId: createdRecord.id,
        gpuTypeIds: ['NVIDIA GeForce RTX 4090'],
        workersMin: 0,
        workersMax: 1,
        idleTimeout: 5,
      }),
    );

    // The file changes its env and (not allowed on update) its category; --image overrides the tag.
    await writeFile(file, JSON.stringify({ ...original, name: 'cli-pushed', category: 'AMD', env: { LOG_LEVEL: 'debug' } }));
    const updated = await runCli(['template', 'push', file, '--image', 'ghcr.io/org/worker:sha-123'], { ...keyEnv, SERVERLESS_WORKER_API_URL: server.baseUrl });
    expect(updated.code, updated.stderr).toBe(0);
    const updatedRecord = JSON.parse(updated.stdout) as Template;
    expect(updatedRecord).toMatchObject({
      id: createdRecord.id,
      imageName: 'ghcr.io/org/worker:sha-123',
      env: { LOG_LEVEL: 'debug' },
      category: 'NVIDIA',
    });
    expect(updated.stderr).toContain(`updated template "cli-pushed" (id ${createdRecord.id})`);
    expect(updated.stderr).toContain('warning: category of template "cli-pushed" stays NVIDIA (the file says AMD)');
    expect(server.store.listTemplates().filter((t) => t.name === 'cli-pushed')).toHaveLength(1);

    const rolled = server.store.getEndpoint(endpoint.id);
    expect(rolled.version).toBe(2);
    expect(rolled.releases[1]).toMatchObject({ reason: 'template-update', changedFields: ['imageName', 'env'] });
  });

  it('accepts RUNPOD_API_KEY', async () => {
    const file = join(dir, 'runpod-key.json');
    await writeFile(file, JSON.stringify({ name: 'cli-runpod-key', imageName: 'img', isServerless: true }));
    const run = await runCli(['template', 'push', file, '--base-url', server.baseUrl], { RUNPOD_API_KEY: API_KEY });
    expect(run.code, run.stderr).toBe(0);
  });

  it('takes --api-key, which wins over the environment', async () => {
    const file = join(dir, 'flag-key.json');
    await writeFile(file, JSON.stringify({ name: 'cli-flag-key', imageName: 'img', isServerless: true }));
    const run = await runCli(['template', 'push', file, '--base-url', server.baseUrl, '--api-key', API_KEY], { RUNPOD_API_KEY: 'wrong-key' });
    expect(run.code, run.stderr).toBe(0);
    const wrong = await runCli(
      ['volume', 'create', '--name', 'v', '--data-center-id', 'EU-RO-1', '--size', '10', '--base-url', server.baseUrl, '--api-key', 'wrong'],
      keyEnv,
    );
    expect(wrong.code).toBe(1);
    expect(failureLine(wrong)).toContain('SW_UNAUTHORIZED; HTTP 401');
  });

  it("without a key: exit 1, one line with the server's message and code", async () => {
    const file = join(dir, 'nokey.json');
    await writeFile(file, JSON.stringify({ name: 'cli-nokey', imageName: 'img' }));
    const run = await runCli(['template', 'push', file, '--base-url', server.baseUrl]);
    expect(run.code).toBe(1);
    expect(failureLine(run)).toBe(
      `serverless-worker: Missing API key: send Authorization: Bearer <key> (SW_UNAUTHORIZED; HTTP 401 from GET ${server.baseUrl}/templates)`,
    );
    expect(run.stdout).toBe('');
  });

  it('an invalid file fails before any call, naming the file and the field', async () => {
    const file = join(dir, 'invalid.json');
    await writeFile(file, JSON.stringify({ name: 'cli-invalid', imageName: 'img', ports: ['80'] }));
    const run = await runCli(['template', 'push', file, '--base-url', 'http://127.0.0.1:9/v1'], keyEnv);
    expect(run.code).toBe(1);
    expect(failureLine(run)).toContain(`${file}: Invalid template: ports.0: each ports entry must be "<port>/<protocol>"`);
  });

  it('an unreachable API: exit 1, one line naming the URL', async () => {
    const file = join(dir, 'unreachable.json');
    await writeFile(file, JSON.stringify({ name: 'cli-unreachable', imageName: 'img' }));
    const closed = await startManagementServer();
    await closed.close();
    const run = await runCli(['template', 'push', file, '--base-url', closed.baseUrl], keyEnv);
    expect(run.code).toBe(1);
    expect(failureLine(run)).toBe(`serverless-worker: Cannot reach the management API: GET ${closed.baseUrl}/templates: ECONNREFUSED`);
  });
});

describe('endpoint create', () => {
  it('creates an endpoint from flags, GPU types in the order given', async () => {
    const template = server.store.createTemplate(gpuTemplateInput('cli-endpoint-template'));
    const run = await runCli(
      [
        'endpoint',
        'create',
        '--base-url',
        server.baseUrl,
        '--name',
        'cli-endpoint',
        '--template-id',
        template.id,
        '--gpu-type-ids',
        'NVIDIA RTX A6000, NVIDIA GeForce RTX 4090',
        '--workers-min',
        '1',
        '--workers-max',
        '4',
        '--idle-timeout',
        '60',
      ],
      keyEnv,
    );
    expect(run.code, run.stderr).toBe(0);
    const endpoint = JSON.parse(run.stdout) as Endpoint;
    expect(endpoint).toMatchObject({
      name: 'cli-endpoint',
      templateId: template.id,
      gpuTypeIds: ['NVIDIA RTX A6000', 'NVIDIA GeForce RTX 4090'],
      workersMin: 1,
      workersMax: 4,
      idleTimeout: 60,
      version: 1,
    });
    expect(server.store.getEndpoint(endpoint.id).gpuTypeIds).toEqual(endpoint.gpuTypeIds);

    const refused = await runCli(
      ['endpoint', 'create', '--base-url', server.baseUrl, '--template-id', template.id, '--gpu-type-ids', 'X', '--idle-timeout', '0'],
      keyEnv,
    );
    expect(refused.code).toBe(1);
    expect(failureLine(refused)).toContain('idleTimeout must be an integer from 1 to 3600 seconds (got 0) (SW_INVALID_ENDPOINT; HTTP 400');
  });

  it('a flag that is not a number fails in one line, before any call', async () => {
    const run = await runCli(['endpoint', 'create', '--template-id', 't', '--workers-max', 'lots'], keyEnv);
    expect(run.code).toBe(1);
    expect(failureLine(run)).toBe('serverless-worker: --workers-max must be a whole number (got "lots")');
  });
});

describe('volume create and resize', () => {
  // Five CLI child processes: several seconds each on a loaded machine, so a generous bound.
  it('creates, grows, and refuses to shrink or exceed 4000 GB with the server message', { timeout: 120_000 }, async () => {
    const created = await runCli(
      ['volume', 'create', '--base-url', server.baseUrl, '--name', 'cli-vol', '--data-center-id', 'EU-RO-1', '--size', '100'],
      keyEnv,
    );
    expect(created.code, created.stderr).toBe(0);
    const volume = JSON.parse(created.stdout) as NetworkVolume;
    expect(volume).toMatchObject({ name: 'cli-vol', dataCenterId: 'EU-RO-1', size: 100 });

    const grown = await runCli(['volume', 'resize', volume.id, '--size', '150', '--base-url', server.baseUrl], keyEnv);
    expect(grown.code, grown.stderr).toBe(0);
    expect((JSON.parse(grown.stdout) as NetworkVolume).size).toBe(150);
    expect(server.store.getNetworkVolume(volume.id).size).toBe(150);

    const shrink = await runCli(['volume', 'resize', volume.id, '--size', '50', '--base-url', server.baseUrl], keyEnv);
    expect(shrink.code).toBe(1);
    expect(failureLine(shrink)).toContain(
      'size must be greater than the current size of 150 GB (volumes only grow; got 50) (SW_NETWORK_VOLUME_SIZE_NOT_GREATER; HTTP 400',
    );

    const tooBig = await runCli(['volume', 'create', '--base-url', server.baseUrl, '--name', 'big', '--data-center-id', 'EU', '--size', '4001'], keyEnv);
    expect(tooBig.code).toBe(1);
    expect(failureLine(tooBig)).toContain('size must be an integer from 0 to 4000 GB (got 4001) (SW_INVALID_NETWORK_VOLUME; HTTP 400');

    const unknown = await runCli(['volume', 'resize', 'nope', '--size', '5', '--base-url', server.baseUrl], keyEnv);
    expect(unknown.code).toBe(1);
    expect(failureLine(unknown)).toContain('No network volume with id "nope" (SW_NETWORK_VOLUME_NOT_FOUND; HTTP 404');
  });
});
