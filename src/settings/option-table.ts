/**
 * @module settings/option-table
 * The README's tables of library options (`serve(handler, options)`, its
 * `platformTransport`, `serveLoadBalancing(options)`), made from the options' zod
 * schemas. Each option's words live beside its schema, in zod metadata:
 * `.meta({ description, defaultText?, values?, env? })`; its default and range are
 * read from the schema itself, so the README cannot show a value the code does not use.
 */
import * as z from 'zod';
import { cell, code, defaultCell } from './reference-table.js';
import { numberRange, schemaDefault } from './setting.js';

/** What one library option's `.meta()` holds for the README. */
export const OptionDocSchema = z.strictObject({
  /** The meaning column: what the option does, with as much explanation as it needs. */
  description: z.string().min(1),
  /** The default column when the schema has no literal default (`the package's pino logger`, `off`). */
  defaultText: z.string().min(1).optional(),
  /** The values column when the schema cannot say it (a function, a pattern). */
  values: z.string().min(1).optional(),
  /** The SERVERLESS_WORKER_* variable that overrides the option (settings/worker-env.ts). */
  env: z.string().min(1).optional(),
});
export type OptionDoc = z.infer<typeof OptionDocSchema>;

/** The schema inside default, optional and prefault wrappers. */
function innermost(schema: z.ZodType): z.ZodType {
  let inner = schema;
  while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional || inner instanceof z.ZodPrefault) inner = inner.unwrap() as z.ZodType;
  return inner;
}

/** The option's declaration, or undefined when its schema carries none (or a malformed one). */
export function optionDoc(schema: z.ZodType): OptionDoc | undefined {
  const parsed = OptionDocSchema.safeParse(schema.meta());
  return parsed.success ? parsed.data : undefined;
}

/** The options of `shape` without a declaration: the test wants none. */
export function undeclaredOptions(shape: Readonly<Record<string, z.ZodType>>): string[] {
  return Object.entries(shape)
    .filter(([, schema]) => optionDoc(schema) === undefined)
    .map(([name]) => name);
}

const UNITS = [
  [86_400_000, 'day', 'days'],
  [3_600_000, 'h', 'h'],
  [60_000, 'min', 'min'],
  [1_000, 's', 's'],
] as const;

/** Milliseconds in words, in the largest unit that divides them: 604800000 -> `7 days`. */
export function durationText(ms: number): string {
  for (const [size, one, many] of UNITS) if (ms >= size && ms % size === 0) return `${ms / size} ${ms === size ? one : many}`;
  return `${ms} ms`;
}

/** A number's range in words; `…Ms` options as durations, `…Bytes` options in bytes. */
function rangeText(name: string, schema: z.ZodType): string {
  const { min, max } = numberRange(schema);
  if (name.endsWith('Ms')) return `${durationText(min)} to ${durationText(max)}`;
  return `${min} to ${max}${name.endsWith('Bytes') ? ' bytes' : ''}`;
}

/** The values column: declared, or read from the schema (a range, a switch, a choice). */
function valuesText(name: string, schema: z.ZodType, doc: OptionDoc): string {
  if (doc.values !== undefined) return doc.values;
  const inner = innermost(schema);
  if (inner instanceof z.ZodNumber) return rangeText(name, schema);
  if (inner instanceof z.ZodBoolean) return `${code('true')}, ${code('false')}`;
  if (inner instanceof z.ZodEnum) return inner.options.map((option) => code(String(option))).join(', ');
  if (inner instanceof z.ZodString) return 'text';
  throw new Error(`option ${name}: its values cannot be read from its schema; declare .meta({ values })`);
}

/**
 * `| option | default | values | meaning |`, one row per field of `shape` in its order,
 * names prefixed with `prefix` (`platformTransport.`). Throws on an option without a
 * declaration, so `npm run docs:settings` cannot leave one out.
 */
export function optionsTable(shape: Readonly<Record<string, z.ZodType>>, prefix = ''): string {
  const rows = Object.entries(shape).map(([name, schema]) => {
    const doc = optionDoc(schema);
    if (doc === undefined) throw new Error(`option ${prefix}${name} has no .meta({ description }) declaration`);
    const fallback = schemaDefault(schema);
    // A duration's default in words beside it: `600000` (10 min).
    const durationDefault =
      typeof fallback === 'number' && name.endsWith('Ms') && fallback >= 1_000 ? `${code(String(fallback))} (${durationText(fallback)})` : undefined;
    const defaults = defaultCell({ default: fallback, defaultText: doc.defaultText ?? durationDefault, env: doc.env });
    return `| ${code(`${prefix}${name}`)} | ${defaults} | ${cell(valuesText(name, schema, doc))} | ${cell(doc.description)} |`;
  });
  return ['| option | default | values | meaning |', '|---|---|---|---|', ...rows].join('\n');
}
