/**
 * Every link of README.md, CONTRIBUTING.md and docs/ that points into the repository
 * resolves: a relative link to a file that exists (and to a heading or `<a id>` of it when
 * it names an anchor, by GitHub's anchor rules), and README.md's absolute links into
 * the repository (`<repository>/blob/main/<path>`, absolute so that the packed README
 * works on npm's page) to a file of this checkout.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../child-process.js';
import { REPOSITORY_URL, anchors, githubSlug, links, markdownFiles, readRepoFile } from './markdown-files.js';

/** The link's file (relative to the repository root) and anchor, or undefined for a link out of the repository. */
function resolveLink(from: string, target: string): { path: string; anchor: string | undefined } | undefined {
  const [rawPath = '', anchor] = target.split('#', 2) as [string, string | undefined];
  if (target.startsWith('#')) return { path: from, anchor };
  for (const prefix of [`${REPOSITORY_URL}/blob/main/`, `${REPOSITORY_URL}/tree/main/`]) {
    if (rawPath.startsWith(prefix)) return { path: decodeURIComponent(rawPath.slice(prefix.length)), anchor };
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(rawPath)) return undefined;
  return { path: normalize(join(dirname(from), decodeURIComponent(rawPath))), anchor };
}

describe('links in the docs', () => {
  const files = markdownFiles();

  it('finds the docs to check', () => {
    expect(files).toContain('README.md');
    expect(files).toContain('CONTRIBUTING.md');
    expect(files).toContain('docs/README.md');
  });

  for (const file of files) {
    it(`${file}: every link into the repository resolves`, () => {
      const broken: string[] = [];
      for (const link of links(readRepoFile(file))) {
        const resolved = resolveLink(file, link.target);
        if (resolved === undefined) continue;
        const where = `${file}:${link.line} ${link.target}`;
        if (resolved.path.startsWith('..') || !existsSync(join(REPO_ROOT, resolved.path))) {
          broken.push(`${where}: no file ${resolved.path}`);
          continue;
        }
        if (resolved.anchor === undefined || resolved.anchor === '') continue;
        if (!resolved.path.endsWith('.md') || statSync(join(REPO_ROOT, resolved.path)).isDirectory()) continue;
        if (!anchors(readRepoFile(resolved.path)).has(resolved.anchor)) broken.push(`${where}: ${resolved.path} has no heading #${resolved.anchor}`);
      }
      expect(broken).toEqual([]);
    });
  }

  it('README.md links into the repository absolutely (npm shows the packed README, where a relative link leads nowhere)', () => {
    const relative = links(readRepoFile('README.md')).filter((link) => !/^[a-z][a-z0-9+.-]*:/i.test(link.target) && !link.target.startsWith('#'));
    expect(relative.map((link) => `README.md:${link.line} ${link.target}`)).toEqual([]);
  });

  it("anchors follow GitHub's rules", () => {
    expect(githubSlug('Run the images themselves: `--launcher docker`')).toBe('run-the-images-themselves---launcher-docker');
    expect(githubSlug("This repository's images (`Dockerfile.gpu`, `Dockerfile.cpu`)")).toBe('this-repositorys-images-dockerfilegpu-dockerfilecpu');
    expect([...anchors('# A\n\n## A\n\n```\n# not a heading\n```\n<a id="x"></a>\n')].sort()).toEqual(['a', 'a-1', 'x']);
  });
});
