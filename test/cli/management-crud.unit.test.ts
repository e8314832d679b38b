/**
 * `serverless-worker template create|list|get|update|delete` and `endpoint
 * create|list|get|update|delete`, run in process (cli-run.ts), against the management
 * plugin on loopback: the deploy path from flags (no curl, no JSON file), every
 * scaler, compute and GPU flag reaching the record, env set and unset on update, the
 * server's message and code on a refusal with exit 1, flag syntax errors before any call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Endpoint, Template } from '../../packages/platform/src/harness/management/index.js';
import { startManagementServer, type RunningManagementServer } from '../harness/management/management-server.js';
import { failureLine, gpuTemplateInput, okJson, runCli } from './cli-run.js';

const API_KEY = 'crud-test-key';

let server: RunningManagementServer;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startManagementServer({ apiKey: API_KEY });
  env = { SERVERLESS_WORKER_API_URL: server.baseUrl, SERVERLESS_WORKER_API_KEY: API_KEY };
});
afterAll(async () => {
  await server.close();
});

// Each CLI child takes a second or more on a loaded machine: generous bounds, no timing asserted.
// The tests run in order on one server and build on each other's records (crud-worker, crud-cpu).
describe('from image to endpoint with the CLI', { timeout: 180_000 }, () => {
  it('template create from flags, then a CPU endpoint on it with the scaler flags, though the template keeps the default category', async () => {
    const template = okJson<Template>(
      await runCli(
        [
          'template',
          'create',
          '--name',
          'crud-worker',
          '--image-name',
          'ghcr.io/org/worker:1.0',
          '--env',
          'LOG_LEVEL=debug',
          '--env',
          'MODEL_URL=https://example.com/m?a=1&b=2',
          '--container-disk-in-gb',
          '15',
          '--docker-start-cmd',
          '["--log-level","debug"]',
          '--readme',
          '# crud worker',
        ],
        env,
      ),
    );
    // The CLI makes a Serverless template with no ports; the category stays the spec's default.
    expect(template).toMatchObject({
      name: 'crud-worker',
      imageName: 'ghcr.io/org/worker:1.0',
      category: 'NVIDIA',
      isServerless: true,
      ports: [],
      containerDiskInGb: 15,
      dockerEntrypoint: [],
      dockerStartCmd: ['--log-level', 'debug'],
      env: { LOG_LEVEL: 'debug', MODEL_URL: 'https://example.com/m?a=1&b=2' },
      readme: '# crud worker',
    });
    expect(server.store.getTemplate(template.id)).toEqual(template);

    const volume = server.store.createNetworkVolume({ name: 'crud-models', dataCenterId: 'EU-RO-1', size: 10 });
    const created = await runCli(
      [
        'endpoint',
        'create',
        '--template-id',
        template.id,
        '--name',
        'crud-cpu',
        '--compute-type',
        'CPU',
        '--cpu-flavor-ids',
        'cpu3c, cpu5g',
        '--vcpu-count',
        '4',
        '--data-center-ids',
        'EU-RO-1',
        '--workers-min',
        '1',
        '--workers-max',
        '2',
        '--idle-timeout',
        '30',
        '--scaler-type',
        'REQUEST_COUNT',
        '--scaler-value',
        '2',
        '--execution-timeout-ms',
        '60000',
        '--flashboot',
        '--network-volume-id',
        volume.id,
      ],
      env,
    );
    const endpoint = okJson<Endpoint>(created);
    expect(created.stderr).toContain(`created endpoint "crud-cpu" (id ${endpoint.id})`);
    expect(endpoint).toMatchObject({
      name: 'crud-cpu',
      templateId: template.id,
      computeType: 'CPU',
      gpuTypeIds: [],
      cpuFlavorIds: ['cpu3c', 'cpu5g'],
      vcpuCount: 4,
      instanceIds: ['cpu3c-4-8', 'cpu5g-4-16'],
      dataCenterIds: ['EU-RO-1'],
      workersMin: 1,
      workersMax: 2,
      idleTimeout: 30,
      scalerType: 'REQUEST_COUNT',
      scalerValue: 2,
      executionTimeoutMs: 60_000,
      flashboot: true,
      networkVolumeId: volume.id,
      version: 1,
    });
    expect(server.store.getEndpoint(endpoint.id).computeType).toBe('CPU');
  });

  it('a GPU endpoint: GPU types in priority order, GPU count, CUDA versions; list and get show both kinds', async () => {
    const template = server.store.createTemplate(gpuTemplateInput('crud-gpu-template'));
    const endpoint = okJson<Endpoint>(
      await runCli(
        [
          'endpoint',
          'create',
          '--template-id',
          template.id,
          '--gpu-type-ids',
          'NVIDIA H100 80GB HBM3,NVIDIA A100 80GB PCIe',
          '--gpu-count',
          '2',
          '--allowed-cuda-versions',
          '12.4,12.8',
        ],
        env,
      ),
    );
    expect(endpoint).toMatchObject({
      name: 'crud-gpu-template',
      computeType: 'GPU',
      gpuTypeIds: ['NVIDIA H100 80GB HBM3', 'NVIDIA A100 80GB PCIe'],
      gpuCount: 2,
      allowedCudaVersions: ['12.4', '12.8'],
      flashboot: false,
      scalerType: 'QUEUE_DELAY',
    });

    const [endpoints, one, templates, oneTemplate, endpointTable, templateTable] = await Promise.all([
      runCli(['endpoint', 'list'], env),
      runCli(['endpoint', 'get', endpoint.id], env),
      runCli(['template', 'list'], env),
      runCli(['template', 'get', template.id], env),
      runCli(['endpoint', 'list', '--table'], env),
      runCli(['template', 'list', '--table'], env),
    ]);
    // The tables: one header, one line per record, the columns a person checks after a deploy.
    const cpu = server.store.listEndpoints().find((e) => e.name === 'crud-cpu');
    expect(endpointTable.code, endpointTable.stderr).toBe(0);
    const endpointLines = endpointTable.stdout.trimEnd().split('\n');
    expect(endpointLines[0]).toMatch(/^ID\s+NAME\s+COMPUTE\s+WORKERS\s+VERSION\s+TEMPLATE\s+TYPES$/);
    expect(endpointLines).toHaveLength(server.store.listEndpoints().length + 1);
    expect(endpointLines).toContainEqual(
      expect.stringMatching(new RegExp(`^${cpu?.id}\\s+crud-cpu\\s+CPU\\s+0/1-2\\s+1\\s+${cpu?.templateId}\\s+cpu3c-4-8,cpu5g-4-16$`)),
    );
    expect(endpointLines).toContainEqual(
      expect.stringMatching(
        new RegExp(`^${endpoint.id}\\s+crud-gpu-template\\s+GPU\\s+0/0-3\\s+1\\s+${template.id}\\s+NVIDIA H100 80GB HBM3,NVIDIA A100 80GB PCIe$`),
      ),
    );
    expect(templateTable.code, templateTable.stderr).toBe(0);
    expect(templateTable.stdout).toMatch(new RegExp(`^${template.id}\\s+crud-gpu-template\\s+NVIDIA\\s+serverless\\s+img$`, 'm'));
    expect(okJson<Endpoint[]>(endpoints).map((e) => e.id)).toEqual(server.store.listEndpoints().map((e) => e.id));
    expect(okJson<Endpoint>(one)).toMatchObject({ id: endpoint.id, gpuCount: 2, workers: [] });
    expect(okJson<Template[]>(templates).map((t) => t.name)).toContain('crud-gpu-template');
    expect(okJson<Template>(oneTemplate)).toEqual(template);
  });

  it('update: template env set and unset keeping the rest (endpoints roll), endpoint fields patched; delete in order', async () => {
    const template = okJson<Template>(
      await runCli(['template', 'create', '--name', 'crud-update', '--image-name', 'img:1', '--env', 'A=1', '--env', 'B=2', '--env', 'C=3'], env),
    );
    const endpoint = okJson<Endpoint>(await runCli(['endpoint', 'create', '--template-id', template.id, '--flashboot'], env));

    const updated = await runCli(
      ['template', 'update', template.id, '--image-name', 'img:2', '--env', 'B=two', '--env', 'D=4', '--unset-env', 'A', '--unset-env', 'Z'],
      env,
    );
    expect(okJson<Template>(updated)).toMatchObject({ id: template.id, imageName: 'img:2', env: { B: 'two', C: '3', D: '4' } });
    expect(server.store.getTemplate(template.id).env).toEqual({ B: 'two', C: '3', D: '4' });
    expect(updated.stderr).toContain('warning: Z is not set on template');
    expect(server.store.getEndpoint(endpoint.id)).toMatchObject({ version: 2 });
    expect(server.store.getEndpoint(endpoint.id).releases[1]).toMatchObject({ reason: 'template-update', changedFields: ['imageName', 'env'] });

    const patched = okJson<Endpoint>(
      await runCli(['endpoint', 'update', endpoint.id, '--workers-max', '6', '--no-flashboot', '--scaler-type', 'REQUEST_COUNT', '--name', 'renamed'], env),
    );
    expect(patched).toMatchObject({ id: endpoint.id, name: 'renamed', workersMax: 6, flashboot: false, scalerType: 'REQUEST_COUNT', version: 2 });

    const inUse = await runCli(['template', 'delete', template.id], env);
    expect(inUse.code).toBe(1);
    expect(failureLine(inUse)).toContain('(SW_TEMPLATE_IN_USE; HTTP 409');

    const deleted = await runCli(['endpoint', 'delete', endpoint.id], env);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stderr).toContain(`deleted endpoint ${endpoint.id}`);
    expect(server.store.hasEndpoint(endpoint.id)).toBe(false);
    expect((await runCli(['template', 'delete', template.id], env)).code).toBe(0);

    const gone = await runCli(['template', 'get', template.id], env);
    expect(gone.code).toBe(1);
    expect(failureLine(gone)).toContain(`(SW_TEMPLATE_NOT_FOUND; HTTP 404 from GET ${server.baseUrl}/templates/${template.id})`);
  });

  it('--no-serverless makes a Pod template with the service defaults; an endpoint on it is refused with the server message', async () => {
    const pod = okJson<Template>(
      await runCli(['template', 'create', '--name', 'crud-pod', '--image-name', 'img', '--no-serverless', '--category', 'CPU'], env),
    );
    expect(pod).toMatchObject({ isServerless: false, category: 'CPU', ports: ['8888/http', '22/tcp'] });
    const refused = await runCli(['endpoint', 'create', '--template-id', pod.id], env);
    expect(refused.code).toBe(1);
    expect(failureLine(refused)).toContain(
      'is a Pod template (isServerless false); endpoints need a template created with isServerless true (SW_INVALID_ENDPOINT; HTTP 400',
    );
    expect(refused.stdout).toBe('');
  });
});

describe('flag and server errors', { timeout: 180_000 }, () => {
  it("the server's message and code, exit 1: GPU types on a CPU endpoint, an unknown endpoint, a name taken", async () => {
    const template = server.store.listTemplates().find((t) => t.name === 'crud-worker');
    expect(template).toBeDefined();
    const [gpuOnCpu, unknown, taken] = await Promise.all([
      runCli(['endpoint', 'create', '--template-id', template?.id ?? '', '--compute-type', 'CPU', '--gpu-type-ids', 'NVIDIA L4'], env),
      runCli(['endpoint', 'update', 'nope', '--workers-max', '1'], env),
      runCli(['template', 'create', '--name', 'crud-worker', '--image-name', 'img'], env),
    ]);
    expect(gpuOnCpu.code).toBe(1);
    expect(failureLine(gpuOnCpu)).toContain('gpuTypeIds must be empty for a CPU endpoint (computeType CPU; got ["NVIDIA L4"])');
    expect(failureLine(gpuOnCpu)).toContain('(SW_INVALID_ENDPOINT; HTTP 400 from POST');
    expect(unknown.code).toBe(1);
    expect(failureLine(unknown)).toContain('No endpoint with id "nope" (SW_ENDPOINT_NOT_FOUND; HTTP 404');
    expect(taken.code).toBe(1);
    expect(failureLine(taken)).toContain('(SW_TEMPLATE_NAME_TAKEN; HTTP 400');
  });

  it('bad flag syntax fails in one line before any call (an unreachable URL is never tried)', async () => {
    const nowhere = { SERVERLESS_WORKER_API_URL: 'http://127.0.0.1:9/v1', SERVERLESS_WORKER_API_KEY: API_KEY };
    const [noEquals, argv, nothing, notNumber] = await Promise.all([
      runCli(['template', 'create', '--name', 'x', '--image-name', 'img', '--env', 'NOVALUE'], nowhere),
      runCli(['template', 'create', '--name', 'x', '--image-name', 'img', '--docker-entrypoint', 'node dist/worker.js'], nowhere),
      runCli(['endpoint', 'update', 'ep1'], nowhere),
      runCli(['endpoint', 'create', '--template-id', 't', '--gpu-count', 'two'], nowhere),
    ]);
    expect(noEquals.code).toBe(1);
    expect(failureLine(noEquals)).toBe('serverless-worker: --env must be KEY=VALUE, like --env LOG_LEVEL=debug (got "NOVALUE")');
    expect(argv.code).toBe(1);
    expect(failureLine(argv)).toContain(`--docker-entrypoint must be a JSON array of strings, like '["node","--enable-source-maps","dist/worker.js"]'`);
    expect(failureLine(argv)).toContain('got "node dist/worker.js"');
    expect(nothing.code).toBe(1);
    expect(failureLine(nothing)).toBe('serverless-worker: endpoint update: nothing to change; give at least one field flag (see --help)');
    expect(notNumber.code).toBe(1);
    expect(failureLine(notNumber)).toBe('serverless-worker: --gpu-count must be a whole number (got "two")');
  });

  it('a value outside the choices is a usage error (exit 2) naming the allowed values; a missing required flag too', async () => {
    const [compute, missing] = await Promise.all([
      runCli(['endpoint', 'create', '--template-id', 't', '--compute-type', 'TPU'], env),
      runCli(['template', 'create', '--name', 'only-a-name'], env),
    ]);
    expect(compute.code).toBe(2);
    expect(compute.stderr).toContain(`option '--compute-type <type>' argument 'TPU' is invalid. Allowed choices are GPU, CPU.`);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`required option '--image-name <image>' not specified`);
  });
});
