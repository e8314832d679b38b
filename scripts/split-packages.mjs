#!/usr/bin/env node
/**
 * The package split (issue 31), as a script that can run again: it moves the local
 * platform's files out of the SDK (the root package) into packages/platform/, then fixes
 * every relative import in the tree that the move broke. Platform files that import SDK
 * files get the package's internal entry (`serverless-worker/internal/<path under src>`).
 *
 * Re-runnable: a file already moved stays; an import that resolves stays. Work made on the
 * layout before the split merges by running it again after the merge: new files at the
 * old places move, and imports written for the old places (in moved files or not) are
 * fixed. It changes nothing else, so its result is the same on every branch that runs it.
 *
 *   node scripts/split-packages.mjs           move and fix, print what changed
 *   node scripts/split-packages.mjs --check   print what would change, exit 1 if anything would
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PLATFORM = 'packages/platform';
const SDK_INTERNAL = 'serverless-worker/internal';
const check = process.argv.includes('--check');

/** src/harness/ folders and files that stay in the SDK: the in-process core, the store contract and the memory store. */
const SDK_HARNESS = [/^src\/harness\/index\.ts$/, /^src\/harness\/core\//, /^src\/harness\/store\/(?!postgres\/)/];
/** The CLI commands that stay in the SDK. */
const SDK_COMMANDS = new Set(['src/cli/commands/init.ts', 'src/cli/commands/gpu.ts']);
/** Files of src/local/ that belong to the local API (--serve-api), a platform feature. */
const PLATFORM_LOCAL = new Set(['src/local/serve-api.ts', 'src/local/supervisor.ts', 'src/local/child-log-lines.ts']);
const PLATFORM_CLI = new Set(['src/cli/harness-launcher.ts', 'src/cli/setting-options.ts', 'src/cli/settings-reference.ts']);

/** Where a repository path (posix, relative to the root) goes, or undefined when it stays. */
export function platformPathOf(path) {
  const moves =
    (path.startsWith('src/harness/') && !SDK_HARNESS.some((pattern) => pattern.test(path))) ||
    path.startsWith('src/build/') ||
    path === 'src/harness-server.ts' ||
    PLATFORM_LOCAL.has(path) ||
    PLATFORM_CLI.has(path) ||
    (path.startsWith('src/cli/commands/') && !SDK_COMMANDS.has(path)) ||
    path.startsWith('ui/');
  return moves ? `${PLATFORM}/${path}` : undefined;
}

/** Where a path of the layout before the split is now ('.js' naming a '.ts' source, a folder with its '/'). */
function movedPathOf(path) {
  if (path.endsWith('.js')) {
    const source = platformPathOf(`${path.slice(0, -3)}.ts`);
    return source ? `${source.slice(0, -3)}.js` : path;
  }
  return platformPathOf(path) ?? (path.endsWith('/') ? path : (platformPathOf(`${path}/`)?.slice(0, -1) ?? path));
}

/** Where a path of today's tree was before the split (the inverse of platformPathOf). */
function preSplitPathOf(path) {
  return path.startsWith(`${PLATFORM}/`) ? path.slice(PLATFORM.length + 1) : path;
}

/** Every file under `dir` (repository-relative), skipping node_modules, dist and dot folders. */
function walk(dir) {
  const found = [];
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return found;
  for (const entry of readdirSync(abs, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) found.push(...walk(path));
    else found.push(path);
  }
  return found;
}

function tracked(path) {
  try {
    execFileSync('git', ['ls-files', '--error-unmatch', path], { cwd: ROOT, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// 1. Move.
const moved = [];
for (const path of [...walk('src'), ...walk('ui')]) {
  const target = platformPathOf(path);
  if (!target) continue;
  moved.push([path, target]);
  if (check) continue;
  if (existsSync(join(ROOT, target))) throw new Error(`${path} would move onto ${target}, which exists: merge the two by hand, then run again`);
  mkdirSync(dirname(join(ROOT, target)), { recursive: true });
  if (tracked(path)) execFileSync('git', ['mv', path, target], { cwd: ROOT });
  else renameSync(join(ROOT, path), join(ROOT, target));
}

// 2. Fix imports.
const existing = (path) => existsSync(join(ROOT, path));
/** The file or folder a relative specifier names, if it exists ('.js' may name a '.ts' source). */
function resolveTarget(fromDir, specifier) {
  const path = posix.normalize(posix.join(fromDir, specifier));
  if (existing(path)) return path;
  for (const [from, to] of [
    ['.js', '.ts'],
    ['.js', '.d.ts'],
    ['.mjs', '.mts'],
  ]) {
    if (path.endsWith(from) && existing(path.slice(0, -from.length) + to)) return path;
  }
  return undefined;
}
/** The target path written back as a specifier from `fromDir` (keeping a './'). */
function relativeSpecifier(fromDir, path) {
  const rel = posix.relative(fromDir, path);
  return rel.startsWith('.') ? rel : `./${rel}`;
}

/** A folder named with a trailing '/' keeps it. */
const withSlashOf = (specifier, rewritten) => (specifier.endsWith('/') && !rewritten.endsWith('/') ? `${rewritten}/` : rewritten);

const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\bvi\.mock\(\s*|\bnew URL\(\s*)(['"])(\.{1,2}\/[^'"]*)\2/g;
const CODE = /\.(ts|mts|js|mjs|tsx)$/;
const changedFiles = [];
const sdkImportsPlatform = [];
const urlsIntoSdk = [];
const unresolved = [];
for (const file of ['src', PLATFORM, 'test', 'bench', 'scripts', 'examples', 'templates'].flatMap(walk).filter((f) => CODE.test(f))) {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const dir = posix.dirname(file);
  const oldDir = posix.dirname(preSplitPathOf(file));
  const inPlatformSource = file.startsWith(`${PLATFORM}/src/`);
  const next = text.replace(SPECIFIER, (whole, lead, quote, specifier) => {
    let target = resolveTarget(dir, specifier);
    if (target === undefined) {
      // Written for the layout before the split: resolve it where the importer was, then follow the move.
      const before = posix.normalize(posix.join(oldDir, specifier));
      target = resolveTarget('.', movedPathOf(before));
      if (target === undefined) {
        unresolved.push(`${file}: ${specifier}`);
        return whole;
      }
    }
    if (inPlatformSource && target.startsWith('src/')) {
      if (lead.startsWith('new URL')) urlsIntoSdk.push(`${file}: ${specifier}`);
      else return `${lead}${quote}${SDK_INTERNAL}/${target.slice('src/'.length)}${quote}`;
    }
    if (file.startsWith('src/') && target.startsWith(`${PLATFORM}/`)) sdkImportsPlatform.push(`${file}: ${specifier}`);
    const rewritten = withSlashOf(specifier, relativeSpecifier(dir, target));
    return rewritten === specifier ? whole : `${lead}${quote}${rewritten}${quote}`;
  });
  if (next !== text) {
    changedFiles.push(file);
    if (!check) writeFileSync(join(ROOT, file), next);
  }
}

const say = (title, lines) => lines.length && console.log(`${title} (${lines.length}):\n  ${lines.join('\n  ')}`);
say(
  check ? 'would move' : 'moved',
  moved.map(([from, to]) => `${from} -> ${to}`),
);
say(check ? 'would fix imports in' : 'fixed imports in', changedFiles);
say('SDK files importing the platform (the SDK must reach it only through a dynamic import by package name)', sdkImportsPlatform);
say('relative imports that resolve nowhere', unresolved);
say('platform files that name an SDK file by URL (they break once packed: fix by hand)', urlsIntoSdk);
if (moved.length === 0 && changedFiles.length === 0) console.log('nothing to move or fix: the tree has the split layout');
if (check && (moved.length > 0 || changedFiles.length > 0)) process.exit(1);
