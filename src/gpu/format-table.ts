/**
 * @module gpu/format-table
 * Readings as the aligned text table that `serverless-worker gpu` prints.
 */
import type { GpuReading, GpuReadResult } from './reading.js';

const MIB = 1024 * 1024;
const NONE = '-';

const fixed = (value: number | null, digits = 0, unit = ''): string => (value === null ? NONE : `${value.toFixed(digits)}${unit}`);

const pair = (a: number | null, b: number | null, scale = 1, digits = 0): string =>
  a === null && b === null ? NONE : `${fixed(a === null ? null : a / scale, digits)} / ${fixed(b === null ? null : b / scale, digits)}`;

const COLUMNS: Array<{ title: string; cell: (g: GpuReading) => string; right?: boolean }> = [
  { title: 'IDX', cell: (g) => String(g.index), right: true },
  { title: 'NAME', cell: (g) => g.name || NONE },
  { title: 'UUID', cell: (g) => g.uuid },
  { title: 'UTIL', cell: (g) => fixed(g.utilizationPercent, 0, '%'), right: true },
  { title: 'MEM ACT', cell: (g) => fixed(g.memoryUtilizationPercent, 0, '%'), right: true },
  { title: 'MEMORY MiB (used / total)', cell: (g) => pair(g.memoryUsedBytes, g.memoryTotalBytes, MIB), right: true },
  { title: 'TEMP', cell: (g) => fixed(g.temperatureCelsius, 0, ' C'), right: true },
  { title: 'POWER W (draw / limit)', cell: (g) => pair(g.powerDrawWatts, g.powerLimitWatts, 1, 0), right: true },
  { title: 'MIG', cell: (g) => (g.migInstances ? g.migInstances.join(',') : NONE) },
];

/** Rows of cells as lines, each column padded to its widest cell. */
export function alignColumns(rows: string[][], rightAligned: readonly boolean[] = []): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (rightAligned[i] ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** The table for readings, or `No GPU readings (<reason>): <message>`; `-` marks a figure the tool did not report. */
export function formatGpuTable(result: GpuReadResult): string {
  if (!result.ok) return `No GPU readings (${result.reason}): ${result.message}\n`;
  const drivers = [...new Set(result.gpus.map((g) => g.driverVersion).filter((d): d is string => d !== null))];
  const count = `${result.gpus.length} GPU${result.gpus.length === 1 ? '' : 's'}`;
  const header = [
    `${result.tool}: ${count}`,
    ...(result.hidden > 0 ? [`${result.hidden} hidden by ${result.vendor === 'nvidia' ? 'CUDA' : 'HIP'}_VISIBLE_DEVICES`] : []),
    ...(drivers.length > 0 ? [`driver ${drivers.join(', ')}`] : []),
  ].join(', ');
  const showMig = result.gpus.some((g) => g.migInstances);
  const columns = showMig ? COLUMNS : COLUMNS.filter((c) => c.title !== 'MIG');
  const rows = [columns.map((c) => c.title), ...result.gpus.map((g) => columns.map((c) => c.cell(g)))];
  return `${header}\n${alignColumns(
    rows,
    columns.map((c) => c.right ?? false),
  ).join('\n')}\n`;
}
