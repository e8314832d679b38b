/**
 * @module harness/dashboard/input-example
 * An example value made from a JSON Schema (draft 2020-12, as zod's toJSONSchema writes
 * it): the submit form's starting input for an endpoint whose worker publishes an input
 * schema and has no test_input.json. Takes, in order: `examples[0]`, `default`, `const`,
 * the first `enum` value, the first branch of `anyOf`/`oneOf`, the merged `allOf`, then
 * a value of the `type` within its bounds (a free string named after its field,
 * "example prompt"; required properties, and optional ones with
 * a default or an example; `minItems` items). `$ref`s into `$defs` are followed; past
 * a depth of 8 the value is null. A pattern is not honoured: the API then says so.
 */

type Schema = Readonly<Record<string, unknown>>;

const MAX_DEPTH = 8;

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

const FORMATS: Readonly<Record<string, string>> = {
  email: 'user@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  time: '00:00:00',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '127.0.0.1',
  ipv6: '::1',
};

function resolveRef(ref: string, root: Schema): Schema | undefined {
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (!match) return ref === '#' ? root : undefined;
  const defs = root[match[1] ?? '$defs'];
  const found = isSchema(defs)
    ? defs[
        decodeURIComponent(match[2] ?? '')
          .replace(/~1/g, '/')
          .replace(/~0/g, '~')
      ]
    : undefined;
  return isSchema(found) ? found : undefined;
}

function numberExample(schema: Schema, integer: boolean): number {
  const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const exclusiveMin = typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum : undefined;
  const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  let value = min ?? (exclusiveMin !== undefined ? exclusiveMin + (integer ? 1 : 0.5) : 0);
  if (max !== undefined && value > max) value = max;
  return integer ? Math.ceil(value) : value;
}

/** A free string: named after its field ("example prompt"), not the placeholder "string" that reads as a mistake. */
function stringExample(schema: Schema, name: string | undefined): string {
  const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  if (format !== undefined) return format;
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Number.POSITIVE_INFINITY;
  let text = name !== undefined ? `example ${name}` : 'example text';
  if (text.length < min) text = text.padEnd(min, 'x');
  if (text.length > max) text = text.slice(0, max);
  return text;
}

function objectExample(schema: Schema, root: Schema, depth: number): Record<string, unknown> {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string') : []);
  const value: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(properties)) {
    if (!isSchema(property)) continue;
    const shown = required.has(key) || 'default' in property || Array.isArray(property.examples);
    if (shown) value[key] = example(property, root, depth + 1, key);
  }
  return value;
}

/** `name`: the property the value is for, if any (a free string is named after it). */
function example(schema: Schema, root: Schema, depth: number, name?: string): unknown {
  if (depth > MAX_DEPTH) return null;
  if (typeof schema.$ref === 'string') {
    const target = resolveRef(schema.$ref, root);
    return target ? example(target, root, depth + 1, name) : null;
  }
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('default' in schema) return schema.default;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) {
      // A nullable field (anyOf [T, null]) shows T.
      const first = branches.find((branch) => isSchema(branch) && branch.type !== 'null') ?? branches[0];
      if (isSchema(first)) return example(first, root, depth + 1, name);
    }
  }
  if (Array.isArray(schema.allOf)) {
    const merged: Record<string, unknown> = {};
    for (const part of schema.allOf) {
      const value = isSchema(part) ? example(part, root, depth + 1) : undefined;
      if (isSchema(value)) Object.assign(merged, value);
      else if (value !== undefined) return value;
    }
    return merged;
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return objectExample(schema, root, depth);
    case 'array': {
      const count = typeof schema.minItems === 'number' ? Math.min(schema.minItems, 10) : 0;
      const items = isSchema(schema.items) ? schema.items : {};
      const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems.filter(isSchema) : [];
      const values = prefix.map((item) => example(item, root, depth + 1));
      while (values.length < count) values.push(example(items, root, depth + 1));
      return values;
    }
    case 'string':
      return stringExample(schema, name);
    case 'integer':
      return numberExample(schema, true);
    case 'number':
      return numberExample(schema, false);
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return isSchema(schema.properties) ? objectExample(schema, root, depth) : {};
  }
}

/** An example value for `schema` (see the module's note for what it takes). */
export function inputExample(schema: Schema): unknown {
  return example(schema, schema, 0);
}
