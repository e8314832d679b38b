/**
 * @module gpu/find-executable
 * Finds a tool on PATH before it is spawned. A missing nvidia-smi or rocm-smi is the
 * common case on CPU images, and spawning it anyway is not only wasted work: Node
 * keeps a failed spawn's handle with pid 0 for a moment, and killing that child then
 * (on shutdown, on a cancelled read) becomes kill(0, SIGTERM), a signal to the whole
 * process group. Looking first means a missing tool is never spawned.
 */
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
const { constants } = process.getBuiltinModule('node:fs');

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** The absolute path of `file` on `pathVariable` (a file with a `/` is checked as it is), or undefined. */
export async function findExecutable(file: string, pathVariable: string | undefined): Promise<string | undefined> {
  if (file.includes('/')) return (await isExecutableFile(file)) ? file : undefined;
  for (const dir of (pathVariable ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const candidate = join(dir, file);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}
