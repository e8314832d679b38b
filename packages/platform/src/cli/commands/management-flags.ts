/**
 * @module cli/commands/management-flags
 * Flags that stand for fields of a management API body: one table per record kind
 * (template-flags.ts, endpoint-flags.ts) names each field's flag, how its text becomes
 * a value, and its help line; the same table registers the options and builds the
 * body, so create and update cannot drift apart. Flag names are the field names in
 * kebab case (`--gpu-type-ids` sends `gpuTypeIds`), as the API reference spells them.
 *
 * Only the flag syntax is checked here (a whole number, a JSON array, KEY=VALUE): what
 * values a field allows is the server's to say, so the CLI follows the platform's own
 * rules wherever they differ from the harness's.
 */
import { Option, type Command } from 'commander';
import * as z from 'zod';
import { previewValue, ServerlessWorkerError } from 'serverless-worker/internal';

/** How a flag's text becomes a field value. */
export type FlagKind =
  /** The text as given. */
  | 'string'
  /** A whole number. */
  | 'integer'
  /** Comma-separated, trimmed, empty entries dropped: `""` sends `[]`. */
  | 'list'
  /** A JSON array of strings (an argv: `dockerEntrypoint`, `dockerStartCmd`). */
  | 'argv'
  /** One of `choices`, checked by commander (exit 2 naming the allowed values). */
  | 'choice'
  /** `--flag` sends true, `--no-flag` false, neither leaves the field out. */
  | 'boolean';

export interface FieldFlag {
  /** The body field. */
  field: string;
  /** The long flag without dashes; default the field in kebab case. */
  flag?: string;
  kind: FlagKind;
  /** Help text; the value's placeholder for non-boolean kinds goes in `value`. */
  description: string;
  /** Placeholder in the help, like `<ids>`; default `<value>`. */
  value?: string;
  choices?: readonly string[];
  /** Registered with requiredOption (create only). */
  required?: boolean;
  /** Left off the update command (the API refuses it there, or it is the path id). */
  createOnly?: boolean;
}

function kebab(field: string): string {
  return field.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

function flagName(entry: FieldFlag): string {
  return entry.flag ?? kebab(entry.field);
}

/** Commander's attribute for `--some-flag`: someFlag. */
function attributeOf(entry: FieldFlag): string {
  return flagName(entry).replace(/-([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

/**
 * Add the table's options to `command`. `mode` create registers `required` entries as
 * required options; update registers every entry (minus `createOnly`) as optional.
 */
export function addFieldFlags(command: Command, table: readonly FieldFlag[], mode: 'create' | 'update'): Command {
  for (const entry of table) {
    if (mode === 'update' && entry.createOnly) continue;
    const name = flagName(entry);
    if (entry.kind === 'boolean') {
      command.addOption(new Option(`--${name}`, entry.description));
      command.addOption(new Option(`--no-${name}`, `send ${entry.field} false`));
      continue;
    }
    const option = new Option(`--${name} ${entry.value ?? '<value>'}`, entry.description);
    if (entry.choices) option.choices(entry.choices);
    if (mode === 'create' && entry.required) option.makeOptionMandatory();
    command.addOption(option);
  }
  return command;
}

/** A whole number from a flag; `--flag` names it in the error. */
export function integerFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = z.string().regex(/^\d+$/).transform(Number).safeParse(value.trim());
  if (parsed.success) return parsed.data;
  throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `${flag} must be a whole number (got ${previewValue(value)})`, {
    flag,
  });
}

/** Comma-separated ids: trimmed, empty entries dropped (`""` is the empty list). */
export function listFlag(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

const ArgvSchema = z.array(z.string());

/** A JSON array of strings, like `["node","dist/worker.js"]`. */
export function argvFlag(flag: string, value: string): string[] {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    json = undefined;
  }
  const parsed = ArgvSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  throw new ServerlessWorkerError(
    'SW_INVALID_OPTIONS',
    `${flag} must be a JSON array of strings, like '["node","--enable-source-maps","dist/worker.js"]' ('[]' for the image's own; got ${previewValue(value)})`,
    { flag },
  );
}

/** Commander collector of a repeatable flag. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `KEY=VALUE` pairs of a repeatable `--env` into a map; the value may hold `=`; a later KEY wins. */
export function envPairs(pairs: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) {
      throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `--env must be KEY=VALUE, like --env LOG_LEVEL=debug (got ${previewValue(pair)})`, {
        flag: '--env',
      });
    }
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

/** The body fields the given flags stand for; flags not given are left out. */
export function bodyFromFlags(table: readonly FieldFlag[], flags: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const entry of table) {
    const value = flags[attributeOf(entry)];
    if (value === undefined) continue;
    const flag = `--${flagName(entry)}`;
    switch (entry.kind) {
      case 'boolean':
        body[entry.field] = value === true;
        break;
      case 'integer':
        body[entry.field] = integerFlag(flag, String(value));
        break;
      case 'list':
        body[entry.field] = listFlag(String(value));
        break;
      case 'argv':
        body[entry.field] = argvFlag(flag, String(value));
        break;
      case 'string':
      case 'choice':
        body[entry.field] = String(value);
        break;
    }
  }
  return body;
}
