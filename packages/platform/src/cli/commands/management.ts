/**
 * @module cli/commands/management
 * `serverless-worker template validate|push`, and the `template`, `endpoint` and
 * `volume` commands from flags (template-commands.ts, endpoint-commands.ts,
 * volume-commands.ts): the management API from the command line, for CI. Records go
 * to stdout as JSON (so `jq` can read ids; a list is a table on a terminal); notes and failures go to stderr, each
 * failure one line with the server's message and code, exit status 1.
 *
 * Connection: `--base-url`, else SERVERLESS_WORKER_API_URL, else
 * http://127.0.0.1:8000/v1; API key from `--api-key`, else SERVERLESS_WORKER_API_KEY,
 * else RUNPOD_API_KEY.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { ServerlessWorkerError } from 'serverless-worker/internal';
import { parseInput } from '../../harness/management/parse-input.js';
import {
  TEMPLATE_FIELDS_NOT_UPDATABLE,
  TemplateCreateInputSchema,
  type TemplateCreate,
  type TemplateUpdateInput,
} from '../../harness/management/schemas/index.js';
import { registerEndpointCrudCommands } from './endpoint-commands.js';
import { registerJobsCommand } from './jobs.js';
import { registerLogsCommand } from './logs.js';
import { cliOutput, client, withConnection, type ConnectionFlags } from './management-output.js';
import { registerTemplateCrudCommands } from './template-commands.js';
import { registerVolumeCommands } from './volume-commands.js';

/**
 * Read and validate a template file offline: a JSON object that the template create
 * schema accepts. Every failure names the file, and the field when there is one.
 */
export async function readTemplateFile(file: string, overrides: { imageName?: string } = {}): Promise<TemplateCreate> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ServerlessWorkerError('SW_INVALID_TEMPLATE', `${file}: cannot read the file (${(error as Error).message})`, { file });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ServerlessWorkerError('SW_INVALID_TEMPLATE', `${file}: not valid JSON (${(error as Error).message})`, { file });
  }
  if (overrides.imageName !== undefined && typeof json === 'object' && json !== null && !Array.isArray(json)) {
    json = { ...json, imageName: overrides.imageName };
  }
  try {
    return parseInput(TemplateCreateInputSchema, json, { code: 'SW_INVALID_TEMPLATE', what: 'template' });
  } catch (error) {
    if (error instanceof ServerlessWorkerError) {
      throw new ServerlessWorkerError(error.code, `${file}: ${error.message}`, { file, ...error.details });
    }
    throw error;
  }
}

/** The update that makes the server's template equal to `template`, minus what an update refuses. */
export function toTemplateUpdate(template: TemplateCreate): TemplateUpdateInput {
  const update: Record<string, unknown> = { ...template };
  for (const field of TEMPLATE_FIELDS_NOT_UPDATABLE) delete update[field];
  return update as TemplateUpdateInput;
}

function registerTemplateCommands(program: Command): void {
  const out = cliOutput(program);
  const template = program.command('template').description('templates: from files (validate, push) or from flags (create, update, ...)');
  registerTemplateCrudCommands(template);

  template
    .command('validate')
    .description('check template files against the template create schema, offline')
    .argument('<files...>', 'template JSON files')
    .action(async (files: string[]) => {
      let failed = 0;
      for (const file of files) {
        try {
          const parsed = await readTemplateFile(file);
          out.text(`ok ${file} (${parsed.name}: ${parsed.category}, ${parsed.isServerless ? 'serverless' : 'pod'})\n`);
        } catch (error) {
          failed += 1;
          out.note(`serverless-worker: ${(error as Error).message}`);
        }
      }
      // Exit status 1 (the program's one line for a failure), after every file was said.
      if (failed > 0) throw new Error(`${failed} of ${files.length} template files are not valid`);
    });

  withConnection(
    template
      .command('push')
      .description('create the template, or update the template of the same name')
      .argument('<file>', 'template JSON file')
      .option('--image <imageName>', "override the file's imageName (the tag CI just built)"),
  ).action(async (file: string, flags: ConnectionFlags & { image?: string }) => {
    const input = await readTemplateFile(file, flags.image !== undefined ? { imageName: flags.image } : {});
    const api = client(flags);
    const existing = await api.findTemplateByName(input.name);
    if (existing === undefined) {
      const created = await api.createTemplate(input);
      out.note(`created template "${input.name}" (id ${created.id})`);
      out.record(created);
      return;
    }
    for (const field of TEMPLATE_FIELDS_NOT_UPDATABLE) {
      if (existing[field] !== undefined && existing[field] !== input[field]) {
        out.note(
          `warning: ${field} of template "${input.name}" stays ${String(existing[field])} (the file says ${String(input[field])}); an update cannot change it: delete and recreate the template to change it`,
        );
      }
    }
    const updated = await api.updateTemplate(existing.id, toTemplateUpdate(input));
    out.note(`updated template "${input.name}" (id ${updated.id}); endpoints using it roll to a new release`);
    out.record(updated);
  });
}

function registerEndpointCommands(program: Command): void {
  registerEndpointCrudCommands(program.command('endpoint').description('Serverless endpoints'));
}

/** Register `template`, `endpoint`, `volume`, and the harness reads `logs` and `jobs` on the program. */
export function registerManagementCommands(program: Command): void {
  registerTemplateCommands(program);
  registerEndpointCommands(program);
  registerVolumeCommands(program);
  registerLogsCommand(program);
  registerJobsCommand(program);
}
