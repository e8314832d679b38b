/**
 * A small Dockerfile executor for the tests, with the host's Node and a scratch
 * folder instead of a Docker engine. Every stage gets its own folder standing for its
 * file system; FROM, ARG (defaults and build args), ENV, WORKDIR, COPY (from the
 * context, filtered by .dockerignore, wildcards, and --from an earlier stage) and RUN
 * (through `sh -c`, ARG and ENV values in the environment, as Docker gives them) are
 * carried out in order. What needs the base image and root is not: RUN steps of the
 * final stage (useradd, ...) and COPY --from a bare image (the Node binary: the host's
 * Node stands in) are listed in `skipped`. Any other instruction is refused, so that a
 * Dockerfile change the executor does not follow fails loudly.
 */
import { execa } from 'execa';
import { cp, mkdir, readFile, readdir, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, join, posix } from 'node:path';
import { dockerignoreFilter, expand, parseCopy, readDockerfile, type Stage } from './dockerfile.js';

export interface ExecuteOptions {
  /** Path of the Dockerfile. */
  dockerfile: string;
  /** The build context folder. */
  context: string;
  /** An empty folder for the stages' file systems. */
  scratch: string;
  /** `--build-arg` values. */
  buildArgs?: Record<string, string>;
  /** Extra environment for RUN steps (npm cache settings, for instance). */
  runEnv?: Record<string, string>;
  /** Time one RUN step may take, ms; default 300 000. */
  runTimeoutMs?: number;
}

export interface ExecutedImage {
  /** Host folder standing for the final stage's file system. */
  root: string;
  /** Host path of the final stage's WORKDIR. */
  workdir: string;
  /** ENTRYPOINT (exec form) then CMD. */
  command: string[];
  /** ENV of the final stage. */
  env: Record<string, string>;
  user: string | undefined;
  /** Steps not carried out, as `stage: INSTRUCTION args`. */
  skipped: string[];
  /** RUN steps carried out, with their time in ms. */
  ran: { stage: string; command: string; ms: number }[];
}

const SUPPORTED = new Set(['ARG', 'ENV', 'WORKDIR', 'COPY', 'RUN', 'USER', 'ENTRYPOINT', 'CMD']);

/** Files under `dir`, relative, `/`-separated. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => posix.relative(dir.split('\\').join('/'), join(entry.parentPath, entry.name).split('\\').join('/')));
}

/** Context sources matching `pattern` (wildcards in the last segment only). */
async function expandSource(context: string, pattern: string): Promise<string[]> {
  const clean = posix.normalize(pattern).replace(/^\.\/|\/$/g, '');
  if (!/[*?]/.test(clean)) return existsSync(join(context, clean)) ? [clean] : [];
  const dir = posix.dirname(clean);
  const regex = new RegExp(`^${posix.basename(clean).replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  const names = await readdir(join(context, dir));
  return names.filter((name) => regex.test(name)).map((name) => (dir === '.' ? name : `${dir}/${name}`));
}

/** Run the Dockerfile's steps; throws on a failed step, a missing COPY source, or an unknown instruction. */
export async function executeDockerfile(options: ExecuteOptions): Promise<ExecutedImage> {
  const dockerfile = readDockerfile(options.dockerfile);
  const buildArgs = options.buildArgs ?? {};
  const ignoreFile = join(options.context, '.dockerignore');
  const inContext = dockerignoreFilter(existsSync(ignoreFile) ? await readFile(ignoreFile, 'utf8') : '');
  const globals = new Map([...dockerfile.globalArgs].map(([name, value]) => [name, buildArgs[name] ?? value]));
  const roots = new Map<string, { root: string; bare: boolean }>();
  const skipped: string[] = [];
  const ran: ExecutedImage['ran'] = [];
  let last: ExecutedImage | undefined;

  for (const [index, stage] of dockerfile.stages.entries()) {
    const label = stage.name ?? `stage-${index}`;
    const isFinal = index === dockerfile.stages.length - 1;
    const root = join(options.scratch, `${index}-${label}`);
    await mkdir(root, { recursive: true });
    const base = expand(stage.from, globals);
    const parent = roots.get(base);
    if (parent) await cp(parent.root, root, { recursive: true });
    roots.set(label, { root, bare: stage.instructions.length === 0 && !parent });
    const vars = new Map<string, string>();
    const env: Record<string, string> = {};
    let dir = '/';
    let user: string | undefined;
    let entrypoint: string[] = [];
    let cmd: string[] = [];
    const host = (path: string): string => join(root, posix.resolve(dir, path));

    for (const instruction of stage.instructions) {
      const { keyword } = instruction;
      if (!SUPPORTED.has(keyword)) throw new Error(`${label}: the executor does not follow ${keyword} ${instruction.raw}`);
      const args = expand(instruction.raw, new Map([...vars, ...Object.entries(env)]));
      if (keyword === 'ARG') {
        const [name = '', value] = instruction.raw.split('=', 2);
        vars.set(name, buildArgs[name] ?? (value === undefined ? (globals.get(name) ?? '') : expand(value, vars)));
      } else if (keyword === 'ENV') {
        // NAME=value, the value may hold '=' itself (NODE_OPTIONS=--flag=2).
        const equals = args.indexOf('=');
        env[equals < 0 ? args : args.slice(0, equals)] = equals < 0 ? '' : args.slice(equals + 1);
      } else if (keyword === 'WORKDIR') {
        dir = posix.resolve(dir, args);
        await mkdir(host('.'), { recursive: true });
      } else if (keyword === 'USER') {
        user = args;
      } else if (keyword === 'ENTRYPOINT' || keyword === 'CMD') {
        const form = JSON.parse(args) as string[];
        if (keyword === 'ENTRYPOINT') entrypoint = form;
        else cmd = form;
      } else if (keyword === 'COPY') {
        const copy = parseCopy(args);
        const destIsDir = copy.dest.endsWith('/') || copy.dest === '.' || copy.sources.length > 1;
        if (copy.from !== undefined) {
          const source = roots.get(copy.from);
          if (!source) throw new Error(`${label}: COPY --from=${copy.from}: no earlier stage of that name`);
          if (source.bare) {
            skipped.push(`${label}: COPY ${args} (a file of the ${copy.from} image; the host's Node stands in)`);
            continue;
          }
          for (const path of copy.sources) {
            const from = join(source.root, path);
            if (!existsSync(from)) throw new Error(`${label}: COPY --from=${copy.from} ${path}: the stage did not produce it`);
            const to = (await stat(from)).isDirectory() || !destIsDir ? host(copy.dest) : join(host(copy.dest), basename(path));
            await cp(from, to, { recursive: true });
          }
          continue;
        }
        let matched = 0;
        for (const pattern of copy.sources) {
          for (const source of await expandSource(options.context, pattern)) {
            const full = join(options.context, source);
            if ((await stat(full)).isDirectory()) {
              // COPY dir dest copies what is inside dir, less what .dockerignore leaves out.
              for (const file of await filesUnder(full)) {
                if (!inContext(posix.join(source, file))) continue;
                matched += 1;
                await mkdir(join(host(copy.dest), posix.dirname(file)), { recursive: true });
                await cp(join(full, file), join(host(copy.dest), file));
              }
            } else if (inContext(source)) {
              matched += 1;
              const to = destIsDir ? join(host(copy.dest), basename(source)) : host(copy.dest);
              await mkdir(join(to, '..'), { recursive: true });
              await cp(full, to);
            }
          }
        }
        if (matched === 0) throw new Error(`${label}: COPY ${args}: no file of the build context matches (missing, or excluded by .dockerignore)`);
      } else if (keyword === 'RUN') {
        if (isFinal) {
          skipped.push(`${label}: RUN ${instruction.raw} (needs the base image and root)`);
          continue;
        }
        const started = performance.now();
        const result = await execa('/bin/sh', ['-c', instruction.raw], {
          cwd: host('.'),
          // Hermetic as a container: only a PATH to find node and npm and a HOME for npm's
          // cache, then the Dockerfile's ARG and ENV values; nothing of the calling npm run
          // or test runner (npm_*, NODE_OPTIONS, VITEST*) that could mask a broken step.
          env: { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...Object.fromEntries(vars), ...env, ...options.runEnv },
          extendEnv: false,
          reject: false,
          timeout: options.runTimeoutMs ?? 300_000,
          all: true,
        });
        ran.push({ stage: label, command: instruction.raw, ms: Math.round(performance.now() - started) });
        if (result.exitCode !== 0) {
          throw new Error(`${label}: RUN ${instruction.raw} exited ${result.exitCode}${result.timedOut ? ' (timed out)' : ''}:\n${String(result.all).slice(-4000)}`);
        }
      }
    }
    if (isFinal) last = { root, workdir: host('.'), command: [...entrypoint, ...cmd], env, user, skipped, ran };
  }
  if (!last) throw new Error(`${options.dockerfile}: no stage`);
  return last;
}

export type { Stage };
