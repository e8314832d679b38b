/**
 * @module test/kit/serve-api
 * A worker run with `--serve-api` (the local queue API in front of it) as a child
 * process, started once it prints the URL it listens on.
 */
import { runTs, type ChildList, type TsChild } from '../child-process.js';

export interface ServeApiProcess {
  readonly child: TsChild;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `http://127.0.0.1:<port>/v2/<endpoint>`, as printed. */
  readonly endpointUrl: string;
  /** What it printed on stdout up to its address. */
  readonly banner: string;
  /** Its stderr so far. */
  stderr(): string;
}

/**
 * `node <file's bundle> ...args` (runTs; args with `--serve-api --port 0` or the like; added
 * to `children`), once it prints `listening on <url>/v2/<endpoint>`; rejects with its
 * stderr when it exits first. `timeoutMs`: kill it after this long (default runTs's, 60 s).
 */
export async function startServeApiProcess(
  children: ChildList,
  file: string,
  args: readonly string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ServeApiProcess> {
  const child = runTs(file, args, { env: options.env ?? {}, ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}) });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (data: Buffer) => (stderr += data.toString('utf8')));
  let banner = '';
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    child.stdout?.on('data', (data: Buffer) => {
      banner += data.toString('utf8');
      const found = /listening on ((http:\/\/127\.0\.0\.1:\d+)\/v2\/[\w-]+)/.exec(banner);
      if (found) resolve(found);
    });
    void child.then((result) => reject(new Error(`${file} --serve-api exited early (${String(result.exitCode)}): ${stderr}`)));
  });
  return { child, url: match[2] as string, endpointUrl: match[1] as string, banner, stderr: () => stderr };
}
