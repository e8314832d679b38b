/**
 * @module cli/commands/endpoint-commands
 * `serverless-worker endpoint create|list|get|update|delete`: Serverless endpoints from
 * flags. The flags are the create input of the service's REST reference (spec 2.6
 * names templateId, gpuTypeIds and the scaler; the rest is the reference's): compute
 * (computeType, GPU types and count, CPU flavors and vCPUs), placement, the scaler,
 * flashboot, the execution timeout and a network volume.
 */
import type { Command } from 'commander';
import { ServerlessWorkerError } from 'serverless-worker/internal';
import { COMPUTE_TYPES, SCALER_TYPES, type EndpointCreateInput, type EndpointUpdateInput } from '../../harness/management/schemas/index.js';
import { addFieldFlags, bodyFromFlags, type FieldFlag } from './management-flags.js';
import { cliOutput, client, withConnection, type ConnectionFlags } from './management-output.js';
import { outputMode, withOutputFlags, type OutputFlags } from './output-mode.js';

/** Endpoint fields as flags, in the order `--help` lists them. */
const ENDPOINT_FLAGS: readonly FieldFlag[] = [
  { field: 'templateId', kind: 'string', value: '<id>', required: true, description: 'template the workers run (on update: move to it, a rolling release)' },
  { field: 'name', kind: 'string', value: '<name>', description: "endpoint name (default: the template's name)" },
  {
    field: 'computeType',
    kind: 'choice',
    value: '<type>',
    choices: COMPUTE_TYPES,
    description: 'GPU or CPU workers, on a template of any category (default: CPU for a CPU template, else GPU)',
  },
  {
    field: 'gpuTypeIds',
    kind: 'list',
    value: '<ids>',
    description: 'GPU type ids, comma-separated, in priority order (default: any); none for CPU',
  },
  { field: 'gpuCount', kind: 'integer', value: '<n>', description: 'GPUs per worker (default 1)' },
  { field: 'cpuFlavorIds', kind: 'list', value: '<ids>', description: 'CPU flavors of a CPU endpoint, comma-separated, like cpu3c,cpu5c' },
  { field: 'vcpuCount', kind: 'integer', value: '<n>', description: 'vCPUs per CPU worker (default 2)' },
  { field: 'dataCenterIds', kind: 'list', value: '<ids>', description: 'data centers, comma-separated, like EU-RO-1 (default: any)' },
  { field: 'allowedCudaVersions', kind: 'list', value: '<versions>', description: 'CUDA versions, comma-separated, like 12.4,12.8 (default: any)' },
  { field: 'workersMin', kind: 'integer', value: '<n>', description: 'workers kept running (default 0)' },
  { field: 'workersMax', kind: 'integer', value: '<n>', description: 'most workers at once (default 3)' },
  { field: 'idleTimeout', kind: 'integer', value: '<seconds>', description: 'seconds an idle worker is kept, 1 to 3600 (default 5)' },
  {
    field: 'scalerType',
    kind: 'choice',
    value: '<type>',
    choices: SCALER_TYPES,
    description: 'QUEUE_DELAY (a job waited scalerValue seconds) or REQUEST_COUNT (one worker per scalerValue jobs); default QUEUE_DELAY',
  },
  { field: 'scalerValue', kind: 'integer', value: '<n>', description: 'seconds (QUEUE_DELAY) or jobs per worker (REQUEST_COUNT); default 4' },
  {
    field: 'executionTimeoutMs',
    kind: 'integer',
    value: '<ms>',
    description: 'execution timeout of jobs that set none, in ms (default 600000)',
  },
  { field: 'flashboot', kind: 'boolean', description: 'fast cold starts from cached workers (default off)' },
  { field: 'networkVolumeId', kind: 'string', value: '<id>', description: 'network volume mounted at /runpod-volume' },
];

type FlagValues = ConnectionFlags & Record<string, unknown>;

function idArgument(command: Command): Command {
  return command.argument('<endpointId>', 'endpoint id');
}

/** Register create, list, get, update and delete on the `endpoint` command. */
export function registerEndpointCrudCommands(endpoint: Command): void {
  const out = cliOutput(endpoint);
  withConnection(addFieldFlags(endpoint.command('create').description('create an endpoint from a template'), ENDPOINT_FLAGS, 'create')).action(
    async (flags: FlagValues) => {
      // The server checks the values (its rules, not the harness's): the CLI only shaped the flags.
      const created = await client(flags).createEndpoint(bodyFromFlags(ENDPOINT_FLAGS, flags) as EndpointCreateInput);
      out.note(`created endpoint "${created.name ?? created.id}" (id ${created.id})`);
      out.record(created);
    },
  );

  withConnection(withOutputFlags(endpoint.command('list').description('list the endpoints: a table on a terminal, JSON when piped'))).action(
    async (flags: ConnectionFlags & OutputFlags) => {
      const mode = outputMode(flags);
      const endpoints = await client(flags).listEndpoints();
      if (mode === 'json') return out.record(endpoints);
      out.table(
        ['ID', 'NAME', 'COMPUTE', 'WORKERS', 'VERSION', 'TEMPLATE', 'TYPES'],
        endpoints.map((e) => [
          e.id,
          e.name ?? '',
          e.computeType ?? '',
          // now/min-max: the running count is what a person checks after a deploy.
          `${e.workers?.length ?? 0}/${e.workersMin ?? '?'}-${e.workersMax ?? '?'}`,
          String(e.version ?? ''),
          e.templateId ?? '',
          (e.computeType === 'CPU' ? (e.instanceIds ?? e.cpuFlavorIds) : e.gpuTypeIds)?.join(',') || 'any',
        ]),
      );
    },
  );

  withConnection(idArgument(endpoint.command('get').description('show one endpoint and its workers'))).action(async (id: string, flags: ConnectionFlags) => {
    out.record(await client(flags).getEndpoint(id));
  });

  withConnection(
    addFieldFlags(idArgument(endpoint.command('update').description('change an endpoint; fields not given keep their value')), ENDPOINT_FLAGS, 'update'),
  ).action(async (id: string, flags: FlagValues) => {
    const body = bodyFromFlags(ENDPOINT_FLAGS, flags);
    if (Object.keys(body).length === 0) {
      throw new ServerlessWorkerError('SW_INVALID_OPTIONS', 'endpoint update: nothing to change; give at least one field flag (see --help)');
    }
    const updated = await client(flags).updateEndpoint(id, body as EndpointUpdateInput);
    out.note(`updated endpoint "${updated.name ?? id}" (id ${updated.id}): ${Object.keys(body).join(', ')}`);
    out.record(updated);
  });

  withConnection(idArgument(endpoint.command('delete').description('delete an endpoint (its workers stop)'))).action(
    async (id: string, flags: ConnectionFlags) => {
      await client(flags).deleteEndpoint(id);
      out.note(`deleted endpoint ${id}`);
    },
  );
}
