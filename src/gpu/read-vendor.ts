/**
 * @module gpu/read-vendor
 * One vendor's reading: run its tool, parse, apply the visible-devices variable. The
 * NVIDIA and AMD readers differ only in the parts passed in here.
 */
import { systemClock } from '../clock/index.js';
import { clip, GPU_TOOLS, noGpuFromAttempt } from './reading.js';
import type { GpuParseResult, GpuReadResult, GpuToolAttempt, GpuVendor, NoGpuReason } from './reading.js';
import { runGpuTool, type RunToolOptions, type ToolRun } from './run-tool.js';
import { filterVisibleGpus, parseVisibleDevices, VISIBLE_DEVICES_VARIABLE } from './visible-devices.js';

export interface VendorParts {
  vendor: GpuVendor;
  args: readonly string[];
  parse: (stdout: string) => GpuParseResult;
  /** MIG uuid -> parent GPU uuid, asked for only when the visible-devices value names a MIG instance. */
  migParents?: (options: RunToolOptions) => Promise<Map<string, string>>;
}

// nvidia-smi prints this (exit code 6) on a host with the driver but no GPU.
const NO_DEVICES = /no devices were found/i;

function attempt(vendor: GpuVendor, reason: NoGpuReason, message: string): GpuToolAttempt {
  return { vendor, tool: GPU_TOOLS[vendor], reason, message };
}

function fromFailedRun(vendor: GpuVendor, run: Exclude<ToolRun, { kind: 'ok' }>): GpuToolAttempt {
  switch (run.kind) {
    case 'missing':
      return attempt(vendor, 'not-installed', run.message);
    case 'timed-out':
      return attempt(vendor, 'timed-out', run.message);
    case 'cancelled':
      return attempt(vendor, 'cancelled', run.message);
    case 'failed':
      return attempt(vendor, NO_DEVICES.test(run.stdout + run.stderr) ? 'no-devices' : 'failed', run.message);
  }
}

/** Read one vendor's GPUs. Never throws. */
export async function readVendorGpus(parts: VendorParts, options: RunToolOptions = {}): Promise<GpuReadResult> {
  const { vendor } = parts;
  const tool = GPU_TOOLS[vendor];
  const run = await runGpuTool(tool, parts.args, options);
  if (run.kind !== 'ok') return noGpuFromAttempt(fromFailedRun(vendor, run));
  const parsed = parts.parse(run.stdout);
  if (parsed.gpus.length === 0) {
    if (run.stdout.trim() === '' || NO_DEVICES.test(run.stdout)) {
      return noGpuFromAttempt(attempt(vendor, 'no-devices', 'ran but listed no GPU'));
    }
    const why = parsed.skipped[0] ? `${parsed.skipped[0].where}: ${parsed.skipped[0].reason}` : 'no GPU entries';
    return noGpuFromAttempt(attempt(vendor, 'unparseable', `printed nothing readable (${why}; output starts ${JSON.stringify(clip(run.stdout, 40))})`));
  }
  const variable = VISIBLE_DEVICES_VARIABLE[vendor];
  const env = options.env ?? process.env;
  const entries = parseVisibleDevices(env[variable]);
  const needsMig = entries?.some((e) => e.toLowerCase().startsWith('mig-')) ?? false;
  const migParents = needsMig && parts.migParents ? await parts.migParents(options) : new Map<string, string>();
  const { visible, hidden } = filterVisibleGpus(parsed.gpus, entries, migParents);
  const [first, ...rest] = visible;
  if (!first) {
    const count = `${parsed.gpus.length} GPU${parsed.gpus.length === 1 ? '' : 's'}`;
    return noGpuFromAttempt(attempt(vendor, 'none-visible', `lists ${count} but ${variable}=${JSON.stringify(env[variable])} hides them all`));
  }
  return { ok: true, vendor, tool, gpus: [first, ...rest], hidden, readAt: systemClock.now() };
}
