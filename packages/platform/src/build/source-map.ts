/**
 * @module build/source-map
 * A bundle's source map reduced to the author's code. `node --enable-source-maps` reads
 * the whole map of every module it loads and keeps it for the life of the process: for a
 * worker bundle that is the mappings and the embedded sources of zod, pino, the package
 * and every other dependency (8 MB of JSON, about 33 MiB of RSS measured; bench/README.md).
 * A job's traceback needs the author's lines only. So the map keeps the sources outside
 * any `node_modules` folder (the worker's own files) with their text, and every generated
 * column of dependency code becomes unmapped: a frame inside a dependency names the bundle's
 * line and column, as without source maps.
 */
import * as z from 'zod';

/** The fields of a version 3 source map that are rewritten (others are kept as they are). */
const SourceMapSchema = z
  .object({
    version: z.literal(3),
    sources: z.array(z.string()),
    sourcesContent: z.array(z.string().nullable()).optional(),
    names: z.array(z.string()),
    mappings: z.string(),
  })
  .passthrough();

export type SourceMapV3 = z.infer<typeof SourceMapSchema>;

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_VALUE = new Map([...BASE64].map((char, index) => [char, index]));

/** The base-64 VLQ fields of one segment. */
function decodeSegment(text: string): number[] {
  const fields: number[] = [];
  let value = 0;
  let shift = 0;
  for (const char of text) {
    const digit = BASE64_VALUE.get(char);
    if (digit === undefined) throw new Error(`invalid base-64 VLQ character ${JSON.stringify(char)} in the mappings`);
    value += (digit & 31) * 2 ** shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    fields.push(value % 2 === 1 ? -(value - 1) / 2 : value / 2);
    value = 0;
    shift = 0;
  }
  return fields;
}

function encodeValue(value: number): string {
  let rest = value < 0 ? -value * 2 + 1 : value * 2;
  let text = '';
  do {
    let digit = rest % 32;
    rest = Math.floor(rest / 32);
    if (rest > 0) digit += 32;
    text += BASE64[digit];
  } while (rest > 0);
  return text;
}

/** Whether a map source is the author's (kept): not inside a node_modules folder. */
export function isAuthorSource(source: string): boolean {
  return !/(^|[\\/])node_modules[\\/]/.test(source);
}

/**
 * The map with only the sources `keep` accepts (default: the author's), their text
 * included; generated code of the others is left unmapped.
 * @throws ZodError when `raw` is not a version 3 source map; Error on malformed mappings.
 */
export function keepSources(raw: unknown, keep: (source: string) => boolean = isAuthorSource): SourceMapV3 {
  const map = SourceMapSchema.parse(raw);
  const newSource = map.sources.map(() => -1);
  const sources: string[] = [];
  const sourcesContent: (string | null)[] = [];
  map.sources.forEach((source, index) => {
    if (!keep(source)) return;
    newSource[index] = sources.length;
    sources.push(source);
    sourcesContent.push(map.sourcesContent?.[index] ?? null);
  });
  const newName = new Map<number, number>();
  const names: string[] = [];
  // Absolute values across segments (all but the column restart on each line).
  let source = 0;
  let line = 0;
  let column = 0;
  let name = 0;
  // The previous values written, for the deltas.
  let outSource = 0;
  let outLine = 0;
  let outColumn = 0;
  let outName = 0;
  // Whether the last segment written maps to a kept source: a lookup falls back to the
  // nearest segment before a position, across lines too, so dependency code after it
  // needs a 1-field (unmapped) segment of its own; one is enough until the next kept one.
  let mapped = false;
  const lines = map.mappings.split(';').map((text) => {
    let generated = 0;
    let outGenerated = 0;
    const segments: string[] = [];
    for (const segment of text === '' ? [] : text.split(',')) {
      const fields = decodeSegment(segment);
      generated += fields[0] ?? 0;
      let kept = -1;
      if (fields.length >= 4) {
        source += fields[1] ?? 0;
        line += fields[2] ?? 0;
        column += fields[3] ?? 0;
        if (fields.length >= 5) name += fields[4] ?? 0;
        kept = newSource[source] ?? -1;
      }
      if (kept < 0) {
        if (mapped) {
          segments.push(encodeValue(generated - outGenerated));
          outGenerated = generated;
          mapped = false;
        }
        continue;
      }
      let out = encodeValue(generated - outGenerated) + encodeValue(kept - outSource) + encodeValue(line - outLine) + encodeValue(column - outColumn);
      if (fields.length >= 5) {
        let index = newName.get(name);
        if (index === undefined) {
          index = names.length;
          names.push(map.names[name] ?? '');
          newName.set(name, index);
        }
        out += encodeValue(index - outName);
        outName = index;
      }
      segments.push(out);
      outGenerated = generated;
      outSource = kept;
      outLine = line;
      outColumn = column;
      mapped = true;
    }
    return segments.join(',');
  });
  // Node's parser (lib/internal/source_map) reads a 1-field segment as such only when a
  // separator follows it: at the very end it would take the previous segment's source.
  const mappings = lines.join(';');
  return { ...map, sources, sourcesContent, names, mappings: mapped ? mappings : `${mappings};` };
}
