/**
 * What the list commands print for a person and for a program (issue 48 item 16), as real
 * child processes against the management plugin on loopback: `endpoint list`, `template
 * list` and `volume list` print a table on a terminal (a real pseudo-terminal: util-linux
 * `script`) and JSON when piped, `--json` and `--table` force either, both at once is
 * refused; `volume get` and `volume delete` reach /v1/networkvolumes, and a delete of an
 * unknown volume fails as the other commands do (one line, the server's message and code).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NetworkVolume } from '../../packages/platform/src/harness/management/index.js';
import { EndpointCreateInputSchema } from '../../packages/platform/src/harness/management/schemas/index.js';
import { startManagementServer, type RunningManagementServer } from '../harness/management/management-server.js';
import { failureLine, gpuTemplateInput, okJson, runCli } from './cli-run.js';
import { runCliInTerminal } from './cli-terminal.js';

const API_KEY = 'list-output-key';

let server: RunningManagementServer;
let env: Record<string, string>;
let volume: NetworkVolume;

beforeAll(async () => {
  server = await startManagementServer({ apiKey: API_KEY });
  env = { SERVERLESS_WORKER_API_URL: server.baseUrl, SERVERLESS_WORKER_API_KEY: API_KEY };
  const template = server.store.createTemplate(gpuTemplateInput('list-output-template'));
  server.store.createEndpoint(EndpointCreateInputSchema.parse({ name: 'list-output-endpoint', templateId: template.id, workersMin: 0, workersMax: 2 }));
  volume = server.store.createNetworkVolume({ name: 'list-output-models', dataCenterId: 'EU-RO-1', size: 20 });
});
afterAll(async () => {
  await server.close();
});

describe('list output: a table on a terminal, JSON when piped', { timeout: 180_000 }, () => {
  it('endpoint, template and volume list: a table on a terminal, JSON piped, --json and --table force either', async () => {
    const [endpointsTty, templatesTty, volumesTty, endpointsPiped, volumesPiped, jsonOnTty, tablePiped, both] = await Promise.all([
      runCliInTerminal(['endpoint', 'list'], env),
      runCliInTerminal(['template', 'list'], env),
      runCliInTerminal(['volume', 'list'], env),
      runCli(['endpoint', 'list'], env),
      runCli(['volume', 'list'], env),
      runCliInTerminal(['volume', 'list', '--json'], env),
      runCli(['volume', 'list', '--table'], env),
      runCli(['endpoint', 'list', '--json', '--table'], env),
    ]);
    expect(endpointsTty.code, endpointsTty.stdout).toBe(0);
    expect(endpointsTty.stdout).toMatch(/^ID\s+NAME\s+COMPUTE\s+WORKERS/m);
    expect(endpointsTty.stdout).toMatch(/\s+list-output-endpoint\s+GPU\s+0\/0-2\s/);
    expect(templatesTty.stdout).toMatch(/^ID\s+NAME\s+CATEGORY\s+KIND\s+IMAGE$/m);
    expect(templatesTty.stdout).toMatch(/\s+list-output-template\s+NVIDIA\s+serverless\s+img$/m);
    expect(volumesTty.stdout).toMatch(/^ID\s+NAME\s+DATA CENTER\s+SIZE$/m);
    expect(volumesTty.stdout).toMatch(new RegExp(`^${volume.id}\\s+list-output-models\\s+EU-RO-1\\s+20 GB$`, 'm'));

    expect(okJson<Array<{ name?: string }>>(endpointsPiped).map((e) => e.name)).toEqual(['list-output-endpoint']);
    expect(okJson<NetworkVolume[]>(volumesPiped)).toEqual([volume]);
    expect(JSON.parse(jsonOnTty.stdout)).toEqual([volume]);
    expect(tablePiped.stdout).toMatch(/^ID\s+NAME\s+DATA CENTER\s+SIZE$/m);
    expect(both.code).toBe(1);
    expect(failureLine(both)).toContain('--json and --table ask for two outputs');
  });

  it('volume get and delete; a delete of an unknown volume fails with the server message and code', async () => {
    const other = server.store.createNetworkVolume({ name: 'list-output-scratch', dataCenterId: 'EU-RO-1', size: 5 });
    expect(okJson<NetworkVolume>(await runCli(['volume', 'get', other.id], env))).toEqual(other);
    const deleted = await runCli(['volume', 'delete', other.id], env);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stderr).toContain(`deleted network volume ${other.id}`);
    expect(server.store.listNetworkVolumes().map((v) => v.id)).not.toContain(other.id);
    const again = await runCli(['volume', 'delete', other.id], env);
    expect(again.code).toBe(1);
    expect(failureLine(again)).toMatch(new RegExp(`${other.id}.*\\(SW_\\w+; HTTP 404 from DELETE `));
  });
});
