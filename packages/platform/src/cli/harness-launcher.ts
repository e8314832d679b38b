/**
 * @module cli/harness-launcher
 * The launcher part of `serverless-worker harness`: `--image NAME=COMMAND`
 * (repeatable), `--launcher docker` (every template's image as containers),
 * `--launcher-config FILE` (JSON: images, gpus, tickMs, shutdownDeadlineMs, backoff,
 * logLines, startFailureTimeoutMs), `--start-failure-timeout-ms` and `--gpus LIST`; the machine's GPUs are read with the GPU readers
 * (nvidia-smi, then rocm-smi) when no list is given. `--job-log-bytes`,
 * `--job-log-keep-ms` and `--job-log-total-bytes` bound each job's own lines.
 */
import type { Logger } from 'pino';
import * as z from 'zod';
import { parseOrThrow, readGpus, type ReadGpusOptions, ServerlessWorkerError } from 'serverless-worker/internal';
import { parseImageFlag, type GpuListSchema, type ImageCommand, type LauncherOptionsInput } from '../harness/launcher/index.js';
import { JobLinesLimitsSchema } from '../harness/launcher/job-lines.js';
const { readFileSync } = process.getBuiltinModule('node:fs');

export interface LauncherCliOptions {
  /** `--image NAME=COMMAND` values. */
  image?: string[] | undefined;
  /** `--launcher-config FILE`. */
  launcherConfig?: string | undefined;
  /** `--gpus LIST`: `0,1,2,3`, or with a vendor `amd:0,1`; `none` for no GPUs. */
  gpus?: string | undefined;
  /** `--launcher`: `process` (default: only `--image` commands) or `docker` (every template's image as containers). */
  launcher?: 'process' | 'docker' | undefined;
  /** `--job-log-bytes`, `--job-log-keep-ms`, `--job-log-total-bytes`: each job's own lines (job-lines.ts). */
  jobLogBytes?: number | undefined;
  jobLogKeepMs?: number | undefined;
  jobLogTotalBytes?: number | undefined;
  /** `--start-failure-timeout-ms`: over the config file's `startFailureTimeoutMs`. */
  startFailureTimeoutMs?: number | undefined;
}

/** The machine's GPUs as the launcher takes them. */
type GpuList = z.input<typeof GpuListSchema>;

const ConfigFileSchema = z.strictObject({
  images: z.record(z.string().min(1), z.union([z.string().min(1), z.object({ command: z.string().min(1), cwd: z.string().min(1).optional() })])).optional(),
  gpus: z.string().min(1).optional(),
  tickMs: z.number().int().optional(),
  shutdownDeadlineMs: z.number().int().optional(),
  backoff: z.object({ baseMs: z.number().int().optional(), maxMs: z.number().int().optional(), unhealthyAfter: z.number().int().optional() }).optional(),
  logLines: z.number().int().optional(),
  startFailureTimeoutMs: z.number().int().optional(),
});

/** `0,1` or `amd:0,1` -> the GPU list; `none` -> no GPUs. */
export function parseGpuList(value: string): GpuList | null {
  const trimmed = value.trim();
  if (trimmed === 'none') return null;
  const match = /^(?:(nvidia|amd):)?(.+)$/.exec(trimmed);
  const devices = (match?.[2] ?? '')
    .split(',')
    .map((device) => device.trim())
    .filter(Boolean);
  if (devices.length === 0) {
    throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `--gpus expects a list like "0,1,2,3" or "amd:0,1" (or "none"); got ${JSON.stringify(value)}`);
  }
  return { vendor: match?.[1] === 'amd' ? 'amd' : 'nvidia', devices };
}

/**
 * The machine's GPUs from nvidia-smi (by UUID, which CUDA_VISIBLE_DEVICES accepts
 * whatever the device order) or rocm-smi (by index, for HIP_VISIBLE_DEVICES); none
 * when no tool answers. `options.env` picks the PATH (tests put a fake tool there).
 */
export async function detectGpus(options: ReadGpusOptions = {}): Promise<GpuList | undefined> {
  const result = await readGpus(options);
  if (!result.ok) return undefined;
  return {
    vendor: result.vendor,
    devices: result.gpus.map((gpu) => (result.vendor === 'nvidia' ? gpu.uuid : String(gpu.index))),
    ...(result.gpus[0] ? { name: result.gpus[0].name } : {}),
  };
}

/** The launcher options from the flags and the config file, or undefined when no image is named. */
export async function launcherOptionsFrom(cli: LauncherCliOptions, logger: Logger): Promise<LauncherOptionsInput | undefined> {
  let file: z.infer<typeof ConfigFileSchema> = {};
  if (cli.launcherConfig !== undefined) {
    let text: string;
    try {
      text = readFileSync(cli.launcherConfig, 'utf8');
    } catch (error) {
      throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `--launcher-config ${cli.launcherConfig}: cannot read it (${(error as Error).message})`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `--launcher-config ${cli.launcherConfig}: not JSON (${(error as Error).message})`);
    }
    file = parseOrThrow(ConfigFileSchema, json, 'SW_INVALID_OPTIONS', `launcher config ${cli.launcherConfig}`);
  }
  const images: Record<string, ImageCommand> = {};
  for (const [name, entry] of Object.entries(file.images ?? {})) images[name] = typeof entry === 'string' ? { command: entry } : entry;
  for (const flag of cli.image ?? []) {
    try {
      const [name, command] = parseImageFlag(flag);
      images[name] = command;
    } catch (error) {
      throw new ServerlessWorkerError('SW_INVALID_OPTIONS', (error as Error).message);
    }
  }
  if (Object.keys(images).length === 0 && cli.launcher !== 'docker') return undefined;

  const gpuFlag = cli.gpus ?? file.gpus;
  const gpus = gpuFlag !== undefined ? (parseGpuList(gpuFlag) ?? 'none') : await detectGpus();
  if (gpus === 'none') logger.info({ gpus }, 'launcher GPUs: none (--gpus none: GPU endpoints run here without device assignment, on any store)');
  else if (gpus) logger.info({ gpus }, `launcher GPUs: ${gpus.devices.length} ${gpus.vendor}`);
  else {
    logger.info(
      { gpus: 'none' },
      'launcher GPUs: none found (GPU endpoints run without device assignment; on a database shared with other harnesses they are left to those with GPUs: --gpus none runs them here)',
    );
  }
  const jobLines = parseOrThrow(
    JobLinesLimitsSchema,
    { bytesPerJob: cli.jobLogBytes, keepMs: cli.jobLogKeepMs, totalBytes: cli.jobLogTotalBytes },
    'SW_INVALID_OPTIONS',
    'job log limits',
  );
  const { images: _images, gpus: _gpus, ...rest } = file;
  return {
    ...rest,
    images,
    jobLines,
    ...(gpus ? { gpus } : {}),
    ...(cli.startFailureTimeoutMs !== undefined ? { startFailureTimeoutMs: cli.startFailureTimeoutMs } : {}),
  } as LauncherOptionsInput;
}
