/**
 * Issue 46 item 3: no file of src/ or packages/platform/src/ imports node:http, node:https,
 * node:fs or node:util as an ES module; they take them with `process.getBuiltinModule` (and
 * node:https only where an https URL needs it, in the SDK). From Node 22 an ES import of a builtin
 * builds its namespace from every export, lazy ones included: node:http's load Node's fetch
 * client (undici), HTTP/2, TLS and the crypto stack, 76 builtin modules against `require`'s 19,
 * about 5 MiB of each process of `--serve-api` on Node 24; node:fs's and node:util's 34 and 36
 * more (streams, readline, locks). `import type` costs nothing. What a process really loads is
 * checked in test/platform/builtin-loads.system.test.ts under each later Node line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../child-process.js';

/** The builtins whose ES namespace loads more than the module itself. */
const HEAVY_NAMESPACES: ReadonlySet<string> = new Set(['node:http', 'node:https', 'node:fs', 'node:util']);

function sourceFiles(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Each import, export or import() of a heavy builtin in `path` that is not type-only, as `path: statement`. */
function heavyImports(path: string): string[] {
  const file = ts.createSourceFile(path, readFileSync(join(REPO_ROOT, path), 'utf8'), ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    let specifier: ts.Expression | undefined;
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) specifier = node.moduleSpecifier;
    else if (ts.isExportDeclaration(node) && !node.isTypeOnly) specifier = node.moduleSpecifier;
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) specifier = node.arguments[0];
    if (specifier !== undefined && ts.isStringLiteral(specifier) && HEAVY_NAMESPACES.has(specifier.text)) {
      found.push(`${path}: ${node.getText(file).split('\n')[0] ?? ''}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('imports of Node builtins', () => {
  it('takes node:http, node:https, node:fs and node:util with process.getBuiltinModule, not an ES import', () => {
    const files = [...sourceFiles('src'), ...sourceFiles('packages/platform/src')];
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap(heavyImports), "write const { name } = process.getBuiltinModule('node:…'), or import type").toEqual([]);
  });

  it('would find one (the check reads what it should)', () => {
    const sample = heavyImports('test/architecture/fixtures/heavy-import-sample.ts');
    expect(sample).toHaveLength(3);
  });
});
