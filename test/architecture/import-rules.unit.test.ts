/**
 * The layout's rule holds (docs/architecture.md, the table in ./import-rules.ts): every
 * relative import, export and import() in src/ and packages/platform/src/ goes from a unit
 * to one that ALLOWED lets it use, and the units' imports make no cycle. A platform file
 * belongs to the unit of its place under packages/platform/src/ (the same folders as the
 * SDK's src/). Between the packages: the SDK imports nothing of the platform's but through
 * the package's name (src/local/platform-package.ts's callers), and the platform imports
 * the SDK only through its one internal entry point, `serverless-worker/internal`
 * (src/exports/internal.ts): each name imported from it counts as an import of the SDK
 * file the entry point takes it from, so that the layers hold across the seam too. Read
 * from the files' text with TypeScript's parser (no compiler run, no child process).
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

const PLATFORM = 'packages/platform/';
/** The dashboard's browser modules: plain ES modules, importing each other by relative '.js' paths. */
const UI = `${PLATFORM}ui`;
const SDK_INTERNAL = 'serverless-worker/internal';
const SEAM_FILE = 'src/exports/internal.ts';
/** The files where the SDK may name the platform package (by name, in a dynamic import). */
const PLATFORM_LOADERS = new Set(['src/serve.ts', 'src/cli/program.ts']);

/** A file's place in the units' table: a platform file as if it were under src/. */
const logicalPath = (path: string): string => (path.startsWith(PLATFORM) ? path.slice(PLATFORM.length) : path);

interface FileImport {
  /** The importing file, as it lies. */
  readonly from: string;
  /** The imported file, as it lies ('.ts' for a '.js' specifier). */
  readonly to: string;
  /** The specifier as written. */
  readonly specifier: string;
}

/** Each name the seam exports, and the SDK file (relative to the repository) it comes from. */
function seamSources(): Map<string, string> {
  const file = ts.createSourceFile(SEAM_FILE, readFileSync(join(REPO_ROOT, SEAM_FILE), 'utf8'), ts.ScriptTarget.ES2022);
  const sources = new Map<string, string>();
  for (const statement of file.statements) {
    if (!ts.isExportDeclaration(statement) || !statement.moduleSpecifier || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (!statement.exportClause || !ts.isNamedExports(statement.exportClause)) continue;
    const to = posix.join(posix.dirname(SEAM_FILE), statement.moduleSpecifier.text);
    for (const element of statement.exportClause.elements) sources.set(element.name.text, to);
  }
  return sources;
}

/** The names a file imports from `specifier` (none for a bare `import 'specifier'`). */
function namesImported(path: string, text: string, specifier: string): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022);
  return file.statements.flatMap((statement) => {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier) || statement.moduleSpecifier.text !== specifier) return [];
    const bindings = statement.importClause?.namedBindings;
    return bindings && ts.isNamedImports(bindings) ? bindings.elements.map((element) => (element.propertyName ?? element.name).text) : [];
  });
}

/** Every import of a file of ours in src/ and packages/platform/src/, relative or through the SDK's internal entry. */
function fileImports(): FileImport[] {
  const found: FileImport[] = [];
  const seam = seamSources();
  for (const from of [...sourceFiles('src'), ...sourceFiles(`${PLATFORM}src`)]) {
    const text = readFileSync(join(REPO_ROOT, from), 'utf8');
    const { importedFiles } = ts.preProcessFile(text, true, true);
    for (const { fileName: specifier } of importedFiles) {
      let to: string | undefined;
      if (specifier.startsWith('.'))
        to = relative(REPO_ROOT, join(REPO_ROOT, dirname(from), specifier))
          .split(sep)
          .join('/');
      else if (specifier === SDK_INTERNAL) {
        // Through the seam: an import of each file its names come from. A bare import runs
        // the entry point's one effect of its own, the zod check (src/zod-version.ts).
        const names = namesImported(from, text, specifier);
        if (names.length === 0) found.push({ from, to: 'src/zod-version.ts', specifier });
        for (const name of names) found.push({ from, to: (seam.get(name) ?? `${SEAM_FILE}#${name}`).replace(/\.js$/, '.ts'), specifier });
        continue;
      } else if (specifier.startsWith(`${SDK_INTERNAL}/`)) to = `src/${specifier.slice(SDK_INTERNAL.length + 1)}`;
      else if (specifier.startsWith('serverless-worker-platform')) to = PLATFORM;
      if (to !== undefined) found.push({ from, to: to.replace(/\.js$/, '.ts'), specifier });
    }
  }
  return found;
}

/** Every relative import of one dashboard browser module by another (bare names, preact and htm, are the page's import map's). */
function uiImports(): FileImport[] {
  const modules = readdirSync(join(REPO_ROOT, UI)).filter((name) => name.endsWith('.js'));
  return modules.flatMap((name) => {
    const from = posix.join(UI, name);
    const { importedFiles } = ts.preProcessFile(readFileSync(join(REPO_ROOT, from), 'utf8'), true, true);
    return importedFiles
      .filter(({ fileName }) => fileName.startsWith('.'))
      .map(({ fileName: specifier }) => ({ from, to: posix.join(UI, specifier), specifier }));
  });
}

/** Every import between two units (imports within a unit left out). */
function crossUnitImports(): Import[] {
  const imports: Import[] = [];
  for (const { from, to } of fileImports()) {
    if (to === PLATFORM) continue;
    const fromUnit = unitOf(logicalPath(from));
    if (fromUnit === undefined) continue;
    const toUnit = unitOf(logicalPath(to)) ?? to;
    if (toUnit !== fromUnit) imports.push({ from, to, fromUnit, toUnit });
  }
  return imports;
}

const isException = (entry: Import): boolean => KNOWN_EXCEPTIONS.some((exception) => exception.from === entry.from && exception.to === entry.to);

/** The strongly connected components of more than one node (Tarjan): units, or files. */
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

  it('keeps the two packages apart: the SDK never imports the platform, the platform reaches the SDK only through its internal entry', () => {
    const broken = fileImports().flatMap(({ from, to, specifier }) => {
      const fromPlatform = from.startsWith(PLATFORM);
      const toPlatform = to.startsWith(PLATFORM);
      if (!fromPlatform && toPlatform && !(to === PLATFORM && PLATFORM_LOADERS.has(from))) {
        return [`${from} imports ${specifier}: the SDK may load the platform only by package name, in ${[...PLATFORM_LOADERS].join(' or ')}`];
      }
      if (fromPlatform && !toPlatform && specifier !== SDK_INTERNAL)
        return [`${from} imports ${specifier}: import the SDK only through ${SDK_INTERNAL} (${SEAM_FILE})`];
      if (fromPlatform && to.includes('#')) return [`${from} imports ${to.split('#')[1] ?? ''} from ${SDK_INTERNAL}, which does not export it`];
      return [];
    });
    expect(broken).toEqual([]);
  });

  it('knows every unit of src/ and packages/platform/src/', () => {
    const units = new Set([...sourceFiles('src'), ...sourceFiles(`${PLATFORM}src`)].map((file) => unitOf(logicalPath(file)) ?? file));
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

  it('makes no cycle between files, through static, type-only or dynamic imports', () => {
    const edges = [...fileImports(), ...uiImports()].filter(({ to }) => to !== PLATFORM).map(({ from, to }) => [from, to] as const);
    expect(cycles(graph(edges)), 'move what both files need into a file of its own, or pass it in (docs/architecture.md, rule 6)').toEqual([]);
  });

  it('lists only exceptions that still occur', () => {
    const stale = KNOWN_EXCEPTIONS.filter((exception) => !imports.some((entry) => entry.from === exception.from && entry.to === exception.to));
    expect(stale, 'fixed: delete these from KNOWN_EXCEPTIONS').toEqual([]);
  });
});
