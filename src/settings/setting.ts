/**
 * @module settings/setting
 * One declaration per setting of the harness and the worker: its flag, the zod schema
 * that validates it (with its default and range), its description and, where there is
 * one, the environment variable that sets it. The CLI options (commander for
 * `serverless-worker harness`, node:util parseArgs for a worker), their validation and
 * the README's reference tables (scripts/settings-docs.ts) are all made from these
 * entries, so they cannot disagree (test/settings/settings-docs.unit.test.ts).
 */
import * as z from 'zod';

/** A flag argument refused: commander turns it into exit 2 with the usage. */
export class SettingArgumentError extends Error {
  override readonly name = 'SettingArgumentError';
}

export interface Setting<Schema extends z.ZodType = z.ZodType> {
  /** As commander and the README write it: `--port <port>`, `--no-rate-limit`, `--endpoint <id...>`. */
  readonly flag: string;
  /** Validates the value the flag gave (defaults applied); the options' types come from it. */
  readonly schema: Schema;
  /** One line for `--help` and the README. */
  readonly description: string;
  /** README only: more about the setting, after the description. */
  readonly details?: string;
  /** The value when the flag is absent, shown by `--help`; none for optional settings. */
  readonly default?: unknown;
  /** The README's default column when it is not the plain default (`any id works`, `read with nvidia-smi`). */
  readonly defaultText?: string;
  /** The environment variable read when the flag is absent. */
  readonly env?: string;
  /** The values allowed, for a choice. */
  readonly choices?: readonly string[];
  /** Turns one flag argument into the value; `previous` is the value so far (repeatable flags). */
  readonly parseArgument?: (value: string, previous?: unknown) => unknown;
}

/** The range of a zod number schema (a default and optional wrappers are looked through). */
export function numberRange(schema: z.ZodType): { min: number; max: number } {
  let inner: z.ZodType = schema;
  while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional || inner instanceof z.ZodPrefault) inner = inner.unwrap() as z.ZodType;
  if (!(inner instanceof z.ZodNumber)) throw new TypeError('numberRange: not a number schema');
  return { min: inner.minValue ?? Number.MIN_SAFE_INTEGER, max: inner.maxValue ?? Number.MAX_SAFE_INTEGER };
}

/** The default a schema applies to an absent value (undefined when it has none). */
export function schemaDefault(schema: z.ZodType): unknown {
  const parsed = schema.safeParse(undefined);
  return parsed.success ? parsed.data : undefined;
}

/** A whole number from `min` to `max` from one flag argument; the message names the range and the value. */
export function parseWholeNumber(value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(n) || n < min || n > max) {
    throw new SettingArgumentError(`expected a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return n;
}

/**
 * A whole-number setting whose range and default are those of `schema`, a field of a
 * library options schema (HarnessServerOptionsSchema, LoadBalancingSettingsSchema, ...):
 * the flag and the library option cannot drift apart.
 */
export function wholeNumberSetting<Schema extends z.ZodType<number | undefined>>(
  schema: Schema,
  entry: Omit<Setting, 'schema' | 'default' | 'parseArgument'>,
): Setting<Schema> & { readonly parseArgument: (value: string) => number } {
  const { min, max } = numberRange(schema);
  const fallback = schemaDefault(schema);
  return { ...entry, schema, ...(fallback !== undefined ? { default: fallback } : {}), parseArgument: (value) => parseWholeNumber(value, min, max) };
}

/** A text setting: `--host <address>`; its default is the schema's. */
export function textSetting<Schema extends z.ZodType<string | undefined>>(
  schema: Schema,
  entry: Omit<Setting, 'schema' | 'default' | 'parseArgument'>,
): Setting<Schema> {
  const fallback = schemaDefault(schema);
  return { ...entry, schema, ...(fallback !== undefined ? { default: fallback } : {}) };
}

/** A comma-separated list, added to the values of earlier uses of the flag. */
export function parseCommaList(value: string, previous?: unknown): string[] {
  const earlier = Array.isArray(previous) ? previous.filter((item): item is string => typeof item === 'string') : [];
  return [
    ...earlier,
    ...value
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part !== ''),
  ];
}

/** `--webhook-allow a,b --webhook-allow c`: a repeatable comma-separated list; default empty. */
export function commaListSetting<Schema extends z.ZodType<string[]>>(
  schema: Schema,
  entry: Omit<Setting, 'schema' | 'default' | 'parseArgument'>,
): Setting<Schema> {
  return { defaultText: 'none', ...entry, schema, default: [], parseArgument: parseCommaList };
}

/** A switch: `--insecure-no-auth` (off unless given) or `--no-rate-limit` (on unless given). */
export function switchSetting(entry: Omit<Setting, 'schema' | 'default' | 'parseArgument'>): Setting<z.ZodDefault<z.ZodBoolean>> {
  const on = entry.flag.startsWith('--no-');
  return { defaultText: on ? 'on' : 'off', ...entry, schema: z.boolean().default(on) };
}

/** The zod object of a group of settings, keyed as the group is. */
export function settingsSchema<Group extends Record<string, Setting>>(group: Group): z.ZodObject<{ [Key in keyof Group]: Group[Key]['schema'] }> {
  const shape = Object.fromEntries(Object.entries(group).map(([key, setting]) => [key, setting.schema]));
  return z.object(shape) as unknown as z.ZodObject<{ [Key in keyof Group]: Group[Key]['schema'] }>;
}

/** The flag's name without its argument: `--port <port>` -> `--port`. */
export function flagName(setting: Pick<Setting, 'flag'>): string {
  return setting.flag.split(' ')[0] ?? setting.flag;
}
