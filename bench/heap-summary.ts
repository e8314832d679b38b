/**
 * @module bench/heap-summary
 * `npx tsx bench/heap-summary.ts <file.heapsnapshot> [top]`: a V8 heap snapshot summed
 * by what each node is (its type and, for objects, its constructor; strings, arrays,
 * code and hidden classes apart): count and self size, the largest first. What
 * bench/serve-api-memory.ts's BENCH_HEAP_SNAPSHOT=1 writes is read with it.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: string[]; readonly node_types: [string[], ...unknown[]] } };
  readonly nodes: number[];
  readonly strings: string[];
}

const [file, topText = '30'] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: heap-summary.ts <file.heapsnapshot> [top]');
const snapshot = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
const fields = snapshot.snapshot.meta.node_fields;
const types = snapshot.snapshot.meta.node_types[0];
const width = fields.length;
const at = (name: string): number => fields.indexOf(name);
const [typeAt, nameAt, sizeAt] = [at('type'), at('name'), at('self_size')];
const groups = new Map<string, { count: number; bytes: number }>();
let total = 0;
for (let i = 0; i < snapshot.nodes.length; i += width) {
  const type = types[snapshot.nodes[i + typeAt] as number] ?? '?';
  const name = snapshot.strings[snapshot.nodes[i + nameAt] as number] ?? '?';
  const size = snapshot.nodes[i + sizeAt] as number;
  total += size;
  const key = type === 'object' || type === 'closure' || type === 'native' || type === 'hidden' ? `${type} ${name.slice(0, 60)}` : type;
  const group = groups.get(key) ?? { count: 0, bytes: 0 };
  group.count++;
  group.bytes += size;
  groups.set(key, group);
}
process.stdout.write(`${file}: ${(total / 1024 / 1024).toFixed(1)} MB in ${snapshot.nodes.length / width} nodes\n`);
for (const [key, { count, bytes }] of [...groups].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, Number(topText)))
  process.stdout.write(`${(bytes / 1024 / 1024).toFixed(2).padStart(8)} MB ${String(count).padStart(9)}  ${key}\n`);
