/**
 * Every ```ts block of README.md, CONTRIBUTING.md and docs/ type-checks against the
 * packages, as a worker author's file would: each block is written to a folder inside
 * the repository (so that tsconfig.json's `paths` map 'serverless-worker' and its
 * subpaths to the sources) and the TypeScript compiler checks them all in one program,
 * with the repository's compiler options (strict, NodeNext), reporting the snippets' own
 * diagnostics only (the sources they import are read for their types, not checked whole). A block that is only a
 * fragment says so with `<!-- snippet: fragment -->` on the line before its fence, and
 * is left out.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../child-process.js';
import { codeBlocks, markdownFiles, readRepoFile, repoPath } from './markdown-files.js';

const TYPESCRIPT = new Set(['ts', 'typescript']);

interface Snippet {
  readonly source: string;
  readonly line: number;
  readonly path: string;
}

const folder = mkdtempSync(join(REPO_ROOT, '.docs-snippets-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function writeSnippets(): { snippets: Snippet[]; fragments: number } {
  const snippets: Snippet[] = [];
  let fragments = 0;
  for (const source of markdownFiles()) {
    for (const block of codeBlocks(readRepoFile(source))) {
      if (!TYPESCRIPT.has(block.lang)) continue;
      if (block.fragment) {
        fragments++;
        continue;
      }
      const path = join(folder, `${source.replace(/[^\w]+/g, '-')}-${block.line}.ts`);
      // A block with no import or export would be a script: make it a module, as a worker's file is.
      const isModule = /^\s*(import|export)\b/m.test(block.code);
      writeFileSync(path, isModule ? block.code : `${block.code}\nexport {};\n`);
      snippets.push({ source, line: block.line, path });
    }
  }
  return { snippets, fragments };
}

function typeErrors(snippets: readonly Snippet[]): string[] {
  const config = ts.readConfigFile(join(REPO_ROOT, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, REPO_ROOT);
  // A snippet may declare a name it does not use again (an example's variable).
  const program = ts.createProgram({ rootNames: snippets.map((snippet) => snippet.path), options: { ...parsed.options, noEmit: true, noUnusedLocals: false } });
  const bySnippet = new Map(snippets.map((snippet) => [snippet.path, snippet]));
  // The snippets' own diagnostics only: the sources they import are read for their types, not
  // checked whole (tsc --noEmit in `npm test` checks them). getPreEmitDiagnostics(program)
  // checked every file the paths reach, both packages' sources: 58 s for this test at a load
  // of 12 (208 s at 13-21), 14 s now.
  const files = snippets.map((snippet) => {
    const file = program.getSourceFile(snippet.path);
    if (file === undefined) throw new Error(`${snippet.path}: not in the program`);
    return file;
  });
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...files.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]),
  ];
  return diagnostics.flatMap((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    const snippet = diagnostic.file === undefined ? undefined : bySnippet.get(diagnostic.file.fileName);
    if (diagnostic.file !== undefined && snippet === undefined) return [`${repoPath(diagnostic.file.fileName)}: ${message}`];
    if (snippet === undefined || diagnostic.file === undefined) return [message];
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    // The fence is on snippet.line; the block's first line is the one after it.
    return [`${snippet.source}:${snippet.line + 1 + line}: ${message}`];
  });
}

describe('TypeScript snippets in the docs', () => {
  it('type-check against the packages (fragments marked and left out)', () => {
    const { snippets } = writeSnippets();
    expect(snippets.length).toBeGreaterThan(5);
    expect(typeErrors(snippets)).toEqual([]);
  }, 300_000);

  it('would fail on a snippet that does not type-check', () => {
    const path = join(folder, 'broken.ts');
    writeFileSync(path, 'export const answer = 42;\nexport const text: string = answer;\n');
    // The fence on line 10, the block's second line on 12.
    expect(typeErrors([{ source: 'broken.md', line: 10, path }])).toEqual([
      expect.stringMatching(/^broken\.md:12: Type 'number' is not assignable to type 'string'/),
    ]);
  }, 300_000);
});
