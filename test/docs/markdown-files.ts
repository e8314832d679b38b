/**
 * The repository's Markdown that a reader meets (README.md, CONTRIBUTING.md, docs/**), read
 * for the docs tests: its files, the links in its prose and the code blocks it holds,
 * with GitHub's rules for heading anchors.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../child-process.js';

/** The repository's address: README.md links into it absolutely, so that npm's page of the packed README works too. */
export const REPOSITORY_URL = 'https://github.com/serverless-worker/serverless-worker';

/** Paths, relative to the repository root, of every Markdown file the docs tests check. */
export function markdownFiles(): string[] {
  const files = ['README.md', 'CONTRIBUTING.md'];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(REPO_ROOT, dir)).sort()) {
      const path = join(dir, name);
      if (statSync(join(REPO_ROOT, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  walk('docs');
  return files;
}

export function readRepoFile(path: string): string {
  return readFileSync(join(REPO_ROOT, path), 'utf8');
}

export function repoPath(absolute: string): string {
  return relative(REPO_ROOT, absolute);
}

export interface CodeBlock {
  /** The fence's info string: `ts`, `sh`, ... */
  readonly lang: string;
  readonly code: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** Marked `<!-- snippet: fragment -->` on a line of its own just before the fence. */
  readonly fragment: boolean;
}

/** The fenced code blocks of a Markdown text, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i] ?? '');
    if (!open) continue;
    const fence = open[2] ?? '```';
    let previous = i - 1;
    while (previous >= 0 && (lines[previous] ?? '').trim() === '') previous--;
    const fragment = (lines[previous] ?? '').trim() === '<!-- snippet: fragment -->';
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !(lines[j] ?? '').trim().startsWith(fence)) body.push(lines[j++] ?? '');
    blocks.push({ lang: open[3] ?? '', code: body.join('\n'), line: i + 1, fragment });
    i = j;
  }
  return blocks;
}

/** The text with fenced code blocks, indented code blocks and (unless kept) inline code blanked out, line numbers kept. */
export function proseOnly(markdown: string, { keepInlineCode = false } = {}): string {
  let fence: string | undefined;
  return markdown
    .split('\n')
    .map((line) => {
      const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence !== undefined) {
        if (marker !== undefined && marker.startsWith(fence)) fence = undefined;
        return '';
      }
      if (marker !== undefined) {
        fence = marker;
        return '';
      }
      if (/^ {4}/.test(line)) return '';
      return keepInlineCode ? line : line.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length));
    })
    .join('\n');
}

export interface MarkdownLink {
  readonly target: string;
  readonly line: number;
}

/** Inline links and images `[text](target)` of the prose, and HTML `href`/`src` attributes. */
export function links(markdown: string): MarkdownLink[] {
  const found: MarkdownLink[] = [];
  proseOnly(markdown)
    .split('\n')
    .forEach((line, index) => {
      for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) found.push({ target: match[1] ?? '', line: index + 1 });
      for (const match of line.matchAll(/\b(?:href|src)="([^"]+)"/g)) found.push({ target: match[1] ?? '', line: index + 1 });
    });
  return found;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function githubSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown file has on GitHub: its headings' slugs (repeats numbered -1, -2, ...) and `<a id|name>`. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of proseOnly(markdown, { keepInlineCode: true }).split('\n')) {
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) result.add(match[1] ?? '');
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = githubSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}
