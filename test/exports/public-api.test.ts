/**
 * The package's entry points export exactly what docs/reference/public-api.md documents:
 * the index (what a worker author imports) holds none of the harness's or the
 * runtime's names, none of them re-exports a whole module (`export *` would let
 * internals in unseen), and each subpath resolves through package.json's `exports`
 * (Node's own resolver, by the package's name from inside it) to the file
 * tsconfig.build.json writes from its source, with its types beside it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execa } from 'execa';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../child-process.js';
import { ENTRY_POINTS, type EntryPoint } from './entry-points.js';

const sorted = (names: readonly string[]): string[] => [...names].sort();

/** Every name the entry's source exports, values and types alike, read from its syntax tree. */
function exportedNames(entry: EntryPoint): { names: string[]; exportStars: string[] } {
  const path = join(REPO_ROOT, entry.packageDir, 'src', `${entry.source}.ts`);
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);
  const names: string[] = [];
  const exportStars: string[] = [];
  for (const statement of file.statements) {
    if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause;
      if (clause === undefined || ts.isNamespaceExport(clause)) exportStars.push(statement.getText());
      else names.push(...clause.elements.map((element) => element.name.text));
    } else if (ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)) {
      exportStars.push(`a declaration of its own: ${statement.getText().split('\n')[0]}`);
    }
  }
  return { names, exportStars };
}

/** The paragraph of docs/reference/public-api.md on the entry: the names in backticks after `specifier`. */
function documentedNames(entry: EntryPoint): string[] {
  const section = readFileSync(join(REPO_ROOT, 'docs/reference/public-api.md'), 'utf8');
  const paragraph = section.split('\n\n').find((text) => text.startsWith(`\`${entry.specifier}\``));
  if (paragraph === undefined) throw new Error(`docs/reference/public-api.md has no paragraph starting with \`${entry.specifier}\``);
  return [...paragraph.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((match) => match[1] ?? '');
}

describe('the package entry points', () => {
  for (const entry of ENTRY_POINTS) {
    describe(entry.specifier, () => {
      it('exports, in its source, exactly its documented names and no whole module', () => {
        const { names, exportStars } = exportedNames(entry);
        expect(exportStars, join(entry.packageDir, 'src', `${entry.source}.ts`)).toEqual([]);
        expect(sorted(names)).toEqual(sorted([...entry.values, ...entry.types]));
      });

      it('holds exactly its value names at run time', async () => {
        const module = (await import(entry.specifier)) as Record<string, unknown>;
        expect(sorted(Object.keys(module))).toEqual(sorted(entry.values));
      });

      it('is listed, name for name, in docs/reference/public-api.md', () => {
        expect(sorted(documentedNames(entry))).toEqual(sorted([...entry.values, ...entry.types]));
      });
    });
  }

  it('keeps every harness and runtime name out of the index', () => {
    const index = ENTRY_POINTS.find((entry) => entry.specifier === 'serverless-worker');
    const toolNames = ENTRY_POINTS.filter((entry) => entry.subpath === './harness' || entry.subpath === './runtime' || entry.packageDir !== '').flatMap(
      (entry) => [...entry.values, ...entry.types],
    );
    expect(toolNames.length).toBeGreaterThan(0);
    expect([...(index?.values ?? []), ...(index?.types ?? [])].filter((name) => toolNames.includes(name))).toEqual([]);
  });

  it("resolves each subpath through its package.json's exports to the build output of its source", async () => {
    for (const packageDir of [...new Set(ENTRY_POINTS.map((entry) => entry.packageDir))]) {
      const entries = ENTRY_POINTS.filter((entry) => entry.packageDir === packageDir);
      const root = join(REPO_ROOT, packageDir);
      const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { types: string; import: string } | string> };
      const tsconfig = JSON.parse(readFileSync(join(REPO_ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: { paths: Record<string, string[]> } };
      // Node's resolver from inside the package (its self-reference by name): the exports map only, no file read.
      const script = `process.stdout.write(JSON.stringify(${JSON.stringify(entries.map((entry) => entry.specifier))}.map((specifier) => import.meta.resolve(specifier))));`;
      const run = await execa(process.execPath, ['--input-type=module', '-e', script], { cwd: root, reject: false });
      expect(run.exitCode, run.stderr).toBe(0);
      const resolved = JSON.parse(run.stdout) as string[];
      entries.forEach((entry, at) => {
        expect(existsSync(join(root, 'src', `${entry.source}.ts`)), entry.source).toBe(true);
        expect(resolved[at]).toBe(pathToFileURL(join(root, 'dist', `${entry.source}.js`)).href);
        expect(pkg.exports[entry.subpath]).toEqual({ types: `./dist/${entry.source}.d.ts`, import: `./dist/${entry.source}.js` });
        if (entry.specifier !== 'serverless-worker') {
          expect(tsconfig.compilerOptions.paths[entry.specifier], `tsconfig.json paths of ${entry.specifier}`).toEqual([
            `./${join(packageDir, 'src', `${entry.source}.ts`)}`,
          ]);
        }
      });
      // Nothing else is exported but package.json and, for the SDK, the platform's one internal entry (no wildcard).
      const internal = packageDir === '' ? ['./internal'] : ['./serve-api', './cli'];
      expect(Object.keys(pkg.exports).sort()).toEqual([...entries.map((entry) => entry.subpath), ...internal, './package.json'].sort());
    }
  });

  it('loads, for the index, no module of the harness, the local worker, the CLI or a transport', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sw-index-modules-'));
    try {
      const file = join(dir, 'modules.txt');
      const hook = new URL('./fixtures/record-modules.mjs', import.meta.url).href;
      const index = pathToFileURL(join(REPO_ROOT, 'src/index.ts')).href;
      const run = await execa(
        process.execPath,
        ['--import', import.meta.resolve('tsx'), '--import', hook, '--input-type=module', '-e', `await import(${JSON.stringify(index)});`],
        {
          cwd: REPO_ROOT,
          reject: false,
          env: { SW_TEST_MODULES_FILE: file, TSX_TSCONFIG_PATH: join(REPO_ROOT, 'tsconfig.json') },
        },
      );
      expect(run.exitCode, run.stderr).toBe(0);
      const own = [...new Set((await readFile(file, 'utf8')).split('\n'))]
        .filter((url) => url.startsWith(pathToFileURL(join(REPO_ROOT, 'src')).href))
        .map((url) => fileURLToPath(url).slice(join(REPO_ROOT, 'src').length + 1));
      // The hook works: the index and serve() are there.
      expect(own).toContain('index.ts');
      expect(own).toContain('serve.ts');
      const forbidden = /^(harness|local|cli|exports|transports\/in-process)\/|^harness-server\.ts$|^transports\/platform\/platform-transport\.ts$/;
      expect(own.filter((path) => forbidden.test(path))).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
