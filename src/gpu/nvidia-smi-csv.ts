/**
 * @module gpu/nvidia-smi-csv
 * The nvidia-smi query we run and a pure parser of its CSV answer. Columns come back
 * in the order asked for, so the parser maps them by position; a later nvidia-smi that
 * appends columns, blank lines, and a header line are all tolerated.
 */
import { BYTES_PER_MIB, parseFigure, parsePercent, parseText } from './parse-value.js';
import type { GpuParseResult, GpuReading } from './reading.js';

/** The fields asked of `nvidia-smi --query-gpu`, in column order. */
export const NVIDIA_QUERY_FIELDS = [
  'index',
  'uuid',
  'name',
  'utilization.gpu',
  'utilization.memory',
  'memory.used',
  'memory.total',
  'temperature.gpu',
  'power.draw',
  'power.limit',
  'driver_version',
] as const;

/** Arguments for one reading: CSV without header or units (MiB, W, C, %). */
export const NVIDIA_SMI_ARGS: readonly string[] = [`--query-gpu=${NVIDIA_QUERY_FIELDS.join(',')}`, '--format=csv,noheader,nounits'];

type Field = (typeof NVIDIA_QUERY_FIELDS)[number];

/** Parse one row's cells; a string is the reason the row was skipped. */
function parseRow(cells: string[]): GpuReading | string {
  if (cells.length < NVIDIA_QUERY_FIELDS.length) {
    return `expected ${NVIDIA_QUERY_FIELDS.length} columns, got ${cells.length}`;
  }
  const cell = (field: Field): string => cells[NVIDIA_QUERY_FIELDS.indexOf(field)] ?? '';
  const index = Number(cell('index'));
  if (!Number.isInteger(index) || index < 0) return `index is not a GPU index (got ${JSON.stringify(cell('index'))})`;
  const uuid = parseText(cell('uuid'));
  if (!uuid) return `uuid is missing (got ${JSON.stringify(cell('uuid'))})`;
  const mib = (field: Field): number | null => {
    const value = parseFigure(cell(field));
    return value === null ? null : value * BYTES_PER_MIB;
  };
  return {
    vendor: 'nvidia',
    index,
    uuid,
    name: parseText(cell('name')) ?? '',
    utilizationPercent: parsePercent(cell('utilization.gpu')),
    memoryUtilizationPercent: parsePercent(cell('utilization.memory')),
    memoryUsedBytes: mib('memory.used'),
    memoryTotalBytes: mib('memory.total'),
    temperatureCelsius: parseFigure(cell('temperature.gpu')),
    powerDrawWatts: parseFigure(cell('power.draw')),
    powerLimitWatts: parseFigure(cell('power.limit')),
    driverVersion: parseText(cell('driver_version')),
  };
}

/**
 * Parse `nvidia-smi --query-gpu=<NVIDIA_QUERY_FIELDS> --format=csv,noheader,nounits`.
 * Placeholders (`[N/A]`, `[Not Supported]`) become null: a MIG-enabled GPU reports its
 * utilisation as `[N/A]`. Never throws; rows it cannot read are listed in `skipped`.
 */
export function parseNvidiaSmiCsv(text: string): GpuParseResult {
  const result: GpuParseResult = { gpus: [], skipped: [] };
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    // GPU names carry no commas, and nvidia-smi separates cells with ", ".
    const cells = line.split(',').map((c) => c.trim());
    if (cells[0]?.toLowerCase() === 'index') return; // a header line, if csv,noheader was not honoured
    const parsed = parseRow(cells);
    if (typeof parsed === 'string') result.skipped.push({ where: `line ${i + 1}`, reason: parsed });
    else result.gpus.push(parsed);
  });
  return result;
}
