/**
 * @module cli/commands/gpu
 * `serverless-worker gpu`: the current GPU readings as a table, or JSON for scripts.
 * No GPU is a normal state for a CPU image, so it exits 0 and says why there are no
 * readings; `--expect` turns that into exit code 1 for scripts that need a GPU.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import * as z from 'zod';
import { parseOrThrow } from '../../job/parse.js';
import { checkGpuPresence } from '../../gpu/presence.js';
import { readGpus } from '../../gpu/read-gpus.js';
import { formatGpuTable } from '../../gpu/format-table.js';
import { DEFAULT_GPU_TOOL_TIMEOUT_MS } from '../../gpu/run-tool.js';

const MAX_TIMEOUT_MS = 600_000;

/** Commander calls this per value; its error makes commander exit 2 with the usage. */
function parseTimeout(value: string): number {
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < 1 || ms > MAX_TIMEOUT_MS) {
    throw new InvalidArgumentError(`expected whole milliseconds from 1 to ${MAX_TIMEOUT_MS}, got ${JSON.stringify(value)}`);
  }
  return ms;
}

const GpuCommandOptionsSchema = z.object({
  json: z.boolean().default(false),
  timeout: z.number().int().min(1).max(MAX_TIMEOUT_MS).default(DEFAULT_GPU_TOOL_TIMEOUT_MS),
  expect: z.enum(['nvidia', 'amd', 'any']).optional(),
});

const HELP_AFTER = `
Reads nvidia-smi, then rocm-smi when nvidia-smi gives no readings. CUDA_VISIBLE_DEVICES
and HIP_VISIBLE_DEVICES limit the GPUs shown. A '-' in the table is a figure the tool
does not report ([N/A], [Not Supported]; utilisation on MIG-enabled GPUs).

Exit codes:
  0  readings printed, or no GPU: the reason is printed (stdout) and the exit code is
     still 0, since a CPU-only machine is not an error
  1  --expect was given and no GPU of that vendor answered (the reason goes to stderr)
  2  bad option (the usage is printed)`;

/** Register `gpu` on the program. */
export function registerGpuCommand(program: Command): void {
  program
    .command('gpu')
    .description('Print the current GPU readings (nvidia-smi or rocm-smi) as a table; exits 0 when there is no GPU')
    .option('--json', 'print the readings as JSON (the GpuReadResult shape) instead of a table')
    .addOption(
      new Option('--timeout <ms>', 'kill nvidia-smi / rocm-smi if it has not answered after this long')
        .argParser(parseTimeout)
        .default(DEFAULT_GPU_TOOL_TIMEOUT_MS),
    )
    .addOption(new Option('--expect <vendor>', 'exit 1 unless a GPU of this vendor answers').choices(['nvidia', 'amd', 'any']))
    .addHelpText('after', HELP_AFTER)
    .action(async (raw: unknown) => {
      const options = parseOrThrow(GpuCommandOptionsSchema, raw, 'SW_INVALID_OPTIONS', 'gpu options');
      const readOptions = { timeoutMs: options.timeout };
      let failure: string | undefined;
      let result;
      if (options.expect) {
        const presence = await checkGpuPresence(options.expect, readOptions);
        result = presence.readings;
        if (!presence.ok) failure = presence.message;
      } else {
        result = await readGpus(readOptions);
      }
      process.stdout.write(options.json ? `${JSON.stringify(result, null, 2)}\n` : formatGpuTable(result));
      if (failure) {
        process.stderr.write(`serverless-worker gpu: ${failure}\n`);
        process.exitCode = 1;
      }
    });
}
