/**
 * @module bench/lib/worker-variants
 * The `--variant name[=script[;node flags[;VAR=value ...]]]` flags of the memory benches
 * (worker-memory.ts, serve-api-memory.ts): each a bench worker to run, by default the
 * compiled bench/children/platform-worker.ts, else the `script` given (a compiled copy of
 * an earlier build, for a before/after in one run), with its node flags and variables.
 */
import { childScript } from './compiled.js';

export interface WorkerVariant {
  readonly name: string;
  readonly script: string;
  readonly nodeArgs: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/** The variants the flags name (`now`, the compiled bench worker, when none is given). */
export async function workerVariants(given: readonly string[] | undefined): Promise<WorkerVariant[]> {
  const compiled = await childScript('bench/children/platform-worker.ts', 'compiled');
  return (given ?? ['now']).map((text) => {
    // Split at the first '=' only: the variables after the second ';' hold some too.
    const at = text.indexOf('=');
    const [name, rest] = at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + 1)];
    const [script = '', flags = '', vars = ''] = rest.split(';');
    const env = Object.fromEntries(
      vars
        .split(' ')
        .filter((pair) => pair.includes('='))
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
    return { name, script: script === '' ? compiled : script, nodeArgs: flags.split(' ').filter((flag) => flag !== ''), env };
  });
}
