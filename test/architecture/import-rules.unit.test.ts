/**
 * The layout's rule holds (docs/architecture.md, the table in ./import-rules.ts): every
 * relative import, export and import() in src/ goes from a unit to one that ALLOWED lets
 * it use, and the units' imports make no cycle. Read from the files' text with
 * TypeScript's pre-processor (no compiler run, no child process).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../child-process.js';
import { ALLOWED, KNOWN_EXCEPTIONS, unitOf } from './import-rules.js';

interface Import {
  readonly from: string;
  readonly to: string;
  readonly fromUnit: string;
  readonly toUnit: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every relative import between two units of src/ (imports within a unit left out). */
function crossUnitImports(): Import[] {
  const imports: Import[] = [];
  for (const from of sourceFiles('src')) {
    const fromUnit = unitOf(from);
    if (fromUnit === undefined) continue;
    const { importedFiles } = ts.preProcessFile(readFileSync(join(REPO_ROOT, from), 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const to = relative(REPO_ROOT, join(REPO_ROOT, dirname(from), fileName)).split(sep).join('/').replace(/\.js$/, '.ts');
      const toUnit = unitOf(to) ?? to;
      if (toUnit !== fromUnit) imports.push({ from, to, fromUnit, toUnit });
    }
  }
  return imports;
}

const isException = (entry: Import): boolean => KNOWN_EXCEPTIONS.some((exception) => exception.from === entry.from && exception.to === entry.to);

/** The strongly connected components of more than one unit (Tarjan). */
function cycles(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (unit: string): void => {
    index.set(unit, next);
    low.set(unit, next);
    next++;
    stack.push(unit);
    onStack.add(unit);
    for (const target of edges.get(unit) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(unit, Math.min(low.get(unit) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) low.set(unit, Math.min(low.get(unit) ?? 0, index.get(target) ?? 0));
    }
    if (low.get(unit) !== index.get(unit)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      component.push(member);
      if (member === unit) break;
    }
    if (component.length > 1) found.push(component.sort());
  };
  for (const unit of edges.keys()) if (!index.has(unit)) visit(unit);
  return found;
}

function graph(pairs: Iterable<readonly [string, string]>): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const [from, to] of pairs) {
    if (!edges.has(from)) edges.set(from, new Set());
    edges.get(from)?.add(to);
  }
  return edges;
}

describe('the import rule (docs/architecture.md)', () => {
  const imports = crossUnitImports();

  it('knows every unit of src/', () => {
    const units = new Set(sourceFiles('src').map((file) => unitOf(file) ?? file));
    const unknown = [...units].filter((unit) => !(unit in ALLOWED));
    expect(unknown, 'a new folder: add it to ALLOWED in test/architecture/import-rules.ts and to docs/architecture.md').toEqual([]);
  });

  it('has a table without cycles (so that "depend only downward" means something)', () => {
    expect(cycles(graph(Object.entries(ALLOWED).flatMap(([from, targets]) => targets.map((to) => [from, to] as const))))).toEqual([]);
  });

  it('lets every import go only where ALLOWED says', () => {
    const broken = imports
      .filter((entry) => !isException(entry) && !(ALLOWED[entry.fromUnit] ?? []).includes(entry.toUnit))
      .map((entry) => `${entry.from} imports ${entry.to}: ${entry.fromUnit} may not use ${entry.toUnit}`);
    expect(broken, 'move the code down, or pass it in from the composition root (docs/architecture.md)').toEqual([]);
  });

  it('makes no cycle between units', () => {
    expect(cycles(graph(imports.filter((entry) => !isException(entry)).map((entry) => [entry.fromUnit, entry.toUnit] as const)))).toEqual([]);
  });

  it('lists only exceptions that still occur', () => {
    const stale = KNOWN_EXCEPTIONS.filter((exception) => !imports.some((entry) => entry.from === exception.from && entry.to === exception.to));
    expect(stale, 'fixed: delete these from KNOWN_EXCEPTIONS').toEqual([]);
  });
});
