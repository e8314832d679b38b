/**
 * @module cli/commands/template-commands
 * `serverless-worker template create|list|get|update|delete`: templates from flags, the
 * deploy path without curl or a JSON file (`template push` takes a file). Bodies are
 * the management API's template create and update inputs (spec 2.2, 2.3).
 */
import type { Command } from 'commander';
import { ServerlessWorkerError } from 'serverless-worker/internal';
import { TEMPLATE_CATEGORIES, type TemplateCreateInput, type TemplateUpdateInput } from '../../harness/management/schemas/index.js';
import { addFieldFlags, bodyFromFlags, collect, envPairs, type FieldFlag } from './management-flags.js';
import { cliOutput, client, withConnection, type ConnectionFlags } from './management-output.js';
import { outputMode, withOutputFlags, type OutputFlags } from './output-mode.js';

/** Template fields as flags (spec 2.2); `env` is the repeatable `--env KEY=VALUE`. */
const TEMPLATE_FLAGS: readonly FieldFlag[] = [
  { field: 'name', kind: 'string', value: '<name>', required: true, description: 'template name, unique among your templates' },
  {
    field: 'imageName',
    kind: 'string',
    value: '<image>',
    required: true,
    description: 'image the workers run, like ghcr.io/org/worker:1.0 (built for linux/amd64)',
  },
  {
    field: 'category',
    kind: 'choice',
    value: '<category>',
    choices: TEMPLATE_CATEGORIES,
    createOnly: true,
    description: "files the template (the UI's filter; it does not limit the endpoint's computeType); default NVIDIA",
  },
  {
    field: 'isServerless',
    flag: 'serverless',
    kind: 'boolean',
    createOnly: true,
    description: 'a Serverless worker template (the default of this command; --no-serverless makes a Pod template)',
  },
  { field: 'containerDiskInGb', kind: 'integer', value: '<gb>', description: 'container disk in GB, wiped on restart (default 50)' },
  { field: 'volumeInGb', kind: 'integer', value: '<gb>', description: 'local volume in GB (default 20)' },
  { field: 'volumeMountPath', kind: 'string', value: '<path>', description: 'absolute path of the volume (default /workspace)' },
  { field: 'containerRegistryAuthId', kind: 'string', value: '<id>', description: 'registry credentials of a private image' },
  {
    field: 'dockerEntrypoint',
    kind: 'argv',
    value: '<json>',
    description: `ENTRYPOINT override as a JSON array, like '["node","dist/worker.js"]'; '[]' keeps the image's`,
  },
  { field: 'dockerStartCmd', kind: 'argv', value: '<json>', description: `CMD override as a JSON array; '[]' keeps the image's` },
  {
    field: 'ports',
    kind: 'list',
    value: '<ports>',
    description: `exposed ports, comma-separated <port>/<http|tcp>; '' for none (a Serverless template made here defaults to none)`,
  },
  { field: 'readme', kind: 'string', value: '<markdown>', description: 'Markdown shown when the template is selected' },
  { field: 'isPublic', flag: 'public', kind: 'boolean', description: 'usable by any user (Pod templates; default false)' },
];

type FlagValues = ConnectionFlags & Record<string, unknown> & { env?: string[]; unsetEnv?: string[] };

function idArgument(command: Command): Command {
  return command.argument('<templateId>', 'template id');
}

/** Register create, list, get, update and delete on the `template` command. */
export function registerTemplateCrudCommands(template: Command): void {
  const out = cliOutput(template);
  withConnection(
    addFieldFlags(template.command('create').description('create a template from flags'), TEMPLATE_FLAGS, 'create').option(
      '--env <KEY=VALUE>',
      'environment variable of the workers; repeat for more',
      collect,
    ),
  ).action(async (flags: FlagValues) => {
    const body = bodyFromFlags(TEMPLATE_FLAGS, flags);
    body.isServerless ??= true;
    // The service's default ports (8888/http, 22/tcp: Jupyter and SSH) are a Pod's; a queue worker serves none.
    if (body.isServerless === true) body.ports ??= [];
    if (flags.env !== undefined) body.env = envPairs(flags.env);
    // The server checks the values (its rules, not the harness's): the CLI only shaped the flags.
    const created = await client(flags).createTemplate(body as TemplateCreateInput);
    out.note(`created template "${created.name ?? String(body.name)}" (id ${created.id})`);
    out.record(created);
  });

  withConnection(withOutputFlags(template.command('list').description('list the templates: a table on a terminal, JSON when piped'))).action(
    async (flags: ConnectionFlags & OutputFlags) => {
      const mode = outputMode(flags);
      const templates = await client(flags).listTemplates();
      if (mode === 'json') return out.record(templates);
      out.table(
        ['ID', 'NAME', 'CATEGORY', 'KIND', 'IMAGE'],
        templates.map((t) => [t.id, t.name ?? '', t.category ?? '', t.isServerless === true ? 'serverless' : 'pod', t.imageName ?? '']),
      );
    },
  );

  withConnection(idArgument(template.command('get').description('show one template'))).action(async (id: string, flags: ConnectionFlags) => {
    out.record(await client(flags).getTemplate(id));
  });

  withConnection(
    addFieldFlags(
      idArgument(template.command('update').description('change a template (category and isServerless are fixed); endpoints using it roll to a new release')),
      TEMPLATE_FLAGS,
      'update',
    )
      .option('--env <KEY=VALUE>', 'set a variable, keeping the others; repeat for more', collect)
      .option('--unset-env <KEY>', 'remove a variable; repeat for more', collect),
  ).action(async (id: string, flags: FlagValues) => {
    const api = client(flags);
    const body = bodyFromFlags(TEMPLATE_FLAGS, flags);
    if (flags.env !== undefined || flags.unsetEnv !== undefined) {
      // The API replaces env whole; the flags change single variables, so start from the current map.
      const env: Record<string, string> = { ...((await api.getTemplate(id)).env ?? {}), ...envPairs(flags.env ?? []) };
      for (const name of flags.unsetEnv ?? []) {
        if (!Object.hasOwn(env, name)) out.note(`warning: ${name} is not set on template ${id}; nothing to unset`);
        delete env[name];
      }
      body.env = env;
    }
    if (Object.keys(body).length === 0) {
      throw new ServerlessWorkerError('SW_INVALID_OPTIONS', 'template update: nothing to change; give at least one field flag (see --help)');
    }
    const updated = await api.updateTemplate(id, body as TemplateUpdateInput);
    out.note(`updated template "${updated.name ?? id}" (id ${updated.id}): ${Object.keys(body).join(', ')}`);
    out.record(updated);
  });

  withConnection(idArgument(template.command('delete').description('delete a template no endpoint uses'))).action(
    async (id: string, flags: ConnectionFlags) => {
      await client(flags).deleteTemplate(id);
      out.note(`deleted template ${id}`);
    },
  );
}
