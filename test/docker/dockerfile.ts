/**
 * A small Dockerfile reader for the structure checks (test/dockerfiles.test.ts): logical
 * lines (continuations, comments), stages, ARG defaults, and .dockerignore with Docker's
 * semantics. The real builds are test/docker/images.test.ts and scaffold-image.test.ts.
 */
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';

export interface Instruction {
  keyword: string;
  /** The text after the keyword as written (variables not expanded). */
  raw: string;
  /** The text after the keyword, variables expanded with the ARG defaults in scope. */
  args: string;
}

export interface Stage {
  name: string | undefined;
  /** The FROM image as written, e.g. `${NODE_IMAGE}`. */
  from: string;
  /** The FROM image, expanded with the global ARG defaults. */
  base: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  globalArgs: Map<string, string>;
  stages: Stage[];
  /** Comment text, for documented options (the ROCm base). */
  comments: string;
}

export function expand(text: string, vars: ReadonlyMap<string, string>): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (whole, braced?: string, bare?: string) => {
    const name = braced ?? bare ?? '';
    return vars.get(name) ?? whole;
  });
}

export function parseDockerfile(text: string): Dockerfile {
  const logical: string[] = [];
  const comments: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#')) {
      comments.push(line);
      continue;
    }
    if (pending === '' && line === '') continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(`${pending}${line}`.trim());
    pending = '';
  }
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  let stageVars = new Map<string, string>();
  for (const line of logical) {
    const match = /^(\S+)\s*(.*)$/.exec(line);
    if (!match) continue;
    const keyword = (match[1] ?? '').toUpperCase();
    const rest = match[2] ?? '';
    if (keyword === 'ARG') {
      const [name = '', value = ''] = rest.split('=', 2);
      if (stages.length === 0) globalArgs.set(name, value);
      // Inside a stage, a bare ARG re-imports the global default.
      else stageVars.set(name, value === '' ? (globalArgs.get(name) ?? '') : expand(value, stageVars));
      const current = stages.at(-1);
      if (current) current.instructions.push({ keyword, raw: rest, args: rest });
      continue;
    }
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      stages.push({ name: from?.[2], from: from?.[1] ?? '', base: expand(from?.[1] ?? '', globalArgs), instructions: [] });
      stageVars = new Map();
      continue;
    }
    stages.at(-1)?.instructions.push({ keyword, raw: rest, args: expand(rest, stageVars) });
  }
  return { globalArgs, stages, comments: comments.join('\n') };
}

export function readDockerfile(path: string): Dockerfile {
  return parseDockerfile(readFileSync(path, 'utf8'));
}

export interface Copy {
  from: string | undefined;
  sources: string[];
  dest: string;
}

export function copies(stage: Stage): Copy[] {
  return stage.instructions.filter((instruction) => instruction.keyword === 'COPY').map((instruction) => parseCopy(instruction.args));
}

export function parseCopy(args: string): Copy {
  const words = args.split(/\s+/);
  const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
  const paths = words.filter((word) => !word.startsWith('--'));
  return { from, sources: paths.slice(0, -1), dest: paths.at(-1) ?? '' };
}

/** The stage's WORKDIR at the end (absolute). */
export function workdir(stage: Stage): string {
  let dir = '/';
  for (const instruction of stage.instructions) {
    if (instruction.keyword === 'WORKDIR') dir = posix.resolve(dir, instruction.args);
  }
  return dir;
}

export function runs(stage: Stage): string[] {
  return stage.instructions.filter((instruction) => instruction.keyword === 'RUN').map((instruction) => instruction.args);
}

/** The ARG default of `name` declared inside `stage`. */
export function stageArg(stage: Stage, name: string): string | undefined {
  const declaration = stage.instructions.find((instruction) => instruction.keyword === 'ARG' && instruction.args.startsWith(`${name}=`));
  return declaration?.args.slice(name.length + 1);
}

/**
 * The context filter of `.dockerignore` text, with Docker's semantics: the last
 * matching rule wins, and a match on a parent folder excludes what is inside.
 * Returns true for a path (relative, `/`-separated) that is in the build context.
 */
export function dockerignoreFilter(text: string): (path: string) => boolean {
  const rules = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const negated = line.startsWith('!');
      const pattern = (negated ? line.slice(1) : line).replace(/^\/+/, '');
      const source = pattern
        .split('/')
        .map((segment) =>
          segment === '**'
            ? '\u0000'
            : segment
                .replace(/[.+^${}()|[\]\\]/g, '\\$&')
                .replace(/\*/g, '[^/]*')
                .replace(/\?/g, '[^/]'),
        )
        .join('/')
        .replace(/\u0000\//g, '(?:.*/)?')
        .replace(/\/\u0000/g, '(?:/.*)?')
        .replace(/\u0000/g, '.*');
      return { negated, regex: new RegExp(`^${source}$`) };
    });
  return (path) => {
    const prefixes = path.split('/').map((_segment, index, parts) => parts.slice(0, index + 1).join('/'));
    let excluded = false;
    for (const rule of rules) {
      if (prefixes.some((prefix) => rule.regex.test(prefix))) excluded = !rule.negated;
    }
    return !excluded;
  };
}
