/**
 * @module gpu/rocm-smi-json
 * The rocm-smi query we run and a pure parser of its JSON answer. rocm-smi prints one
 * object per card (`card0`, `card1`, ...) whose keys are the labels of its text output
 * ("GPU use (%)", "VRAM Total Used Memory (B)"), values mostly strings, plus a `system`
 * object. Key spelling changed between ROCm releases ("Card series" / "Card Series"),
 * so keys are matched without regard to case and several spellings are tried.
 */
import * as z from 'zod';
import { parseFigure, parsePercent, parseText } from './parse-value.js';
import type { GpuParseResult, GpuReading } from './reading.js';

/** Arguments for one reading, JSON out. */
export const ROCM_SMI_ARGS: readonly string[] = [
  '--showuse',
  '--showmemuse',
  '--showtemp',
  '--showpower',
  '--showmaxpower',
  '--showproductname',
  '--showmeminfo',
  'vram',
  '--showuniqueid',
  '--showdriverversion',
  '--json',
];

// The JSON crosses a process boundary: check its outer shape before reading keys.
const RocmDocumentSchema = z.record(z.string(), z.unknown());
const RocmCardSchema = z.record(z.string(), z.unknown());

/** Key spellings per figure, first found wins (newer ROCm first). */
const KEYS = {
  name: ['Card Series', 'Device Name', 'Card Model', 'Marketing Name'],
  utilization: ['GPU use (%)'],
  // Read/write activity is what nvidia-smi's utilization.memory measures; "GPU Memory
  // Allocated (VRAM%)" is the share of memory allocated, a different figure.
  memoryActivity: ['GPU Memory Read/Write Activity (%)', 'GPU memory use (%)'],
  memoryUsed: ['VRAM Total Used Memory (B)'],
  memoryTotal: ['VRAM Total Memory (B)'],
  // MI200/MI300 report no edge sensor (N/A): fall back to the junction (hotspot) sensor.
  temperature: ['Temperature (Sensor edge) (C)', 'Temperature (Sensor junction) (C)'],
  // MI300 reports socket power; older cards an average package power.
  powerDraw: ['Current Socket Graphics Package Power (W)', 'Average Graphics Package Power (W)'],
  powerLimit: ['Max Graphics Package Power (W)'],
  uuid: ['Unique ID'],
  driverVersion: ['Driver version'],
} as const;

/** A lookup of `card` by key, ignoring case and surrounding space. */
function lookup(card: Record<string, unknown>): (keys: readonly string[]) => unknown {
  const byLowerKey = new Map(Object.entries(card).map(([k, v]) => [k.trim().toLowerCase(), v]));
  return (keys) => {
    for (const key of keys) {
      const value = byLowerKey.get(key.toLowerCase());
      if (value !== undefined && parseText(value) !== null) return value;
    }
    return undefined;
  };
}

/** The first key's figure that is a number, e.g. junction when edge is N/A. */
function firstFigure(get: (keys: readonly string[]) => unknown, keys: readonly string[]): number | null {
  for (const key of keys) {
    const value = parseFigure(get([key]));
    if (value !== null) return value;
  }
  return null;
}

/** rocm-smi may print warnings before the JSON; read from the first line that opens an object. */
function parseDocument(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const start = text.search(/^\s*\{/m);
    if (start < 0) return undefined;
    try {
      return JSON.parse(text.slice(start));
    } catch {
      return undefined;
    }
  }
}

/**
 * Parse `rocm-smi ... --json`. Figures rocm-smi cannot read (`N/A`, `-1` percent) become
 * null. Never throws; cards it cannot read are listed in `skipped`.
 */
export function parseRocmSmiJson(text: string): GpuParseResult {
  const result: GpuParseResult = { gpus: [], skipped: [] };
  if (text.trim() === '') return result;
  const document = RocmDocumentSchema.safeParse(parseDocument(text));
  if (!document.success) {
    result.skipped.push({ where: 'document', reason: 'not a JSON object' });
    return result;
  }
  const system = RocmCardSchema.safeParse(document.data.system);
  const driverVersion = system.success ? parseText(lookup(system.data)(KEYS.driverVersion)) : null;
  const cards: Array<{ index: number; reading: GpuReading }> = [];
  for (const [key, value] of Object.entries(document.data)) {
    if (key === 'system') continue;
    const cardKey = /^card(\d+)$/.exec(key);
    if (!cardKey?.[1]) {
      result.skipped.push({ where: key, reason: 'not a cardN key' });
      continue;
    }
    const card = RocmCardSchema.safeParse(value);
    if (!card.success) {
      result.skipped.push({ where: key, reason: 'not an object' });
      continue;
    }
    const get = lookup(card.data);
    const index = Number(cardKey[1]);
    cards.push({
      index,
      reading: {
        vendor: 'amd',
        index,
        uuid: parseText(get(KEYS.uuid)) ?? key,
        name: parseText(get(KEYS.name)) ?? '',
        utilizationPercent: parsePercent(get(KEYS.utilization)),
        memoryUtilizationPercent: parsePercent(get(KEYS.memoryActivity)),
        memoryUsedBytes: parseFigure(get(KEYS.memoryUsed)),
        memoryTotalBytes: parseFigure(get(KEYS.memoryTotal)),
        temperatureCelsius: firstFigure(get, KEYS.temperature),
        powerDrawWatts: firstFigure(get, KEYS.powerDraw),
        powerLimitWatts: parseFigure(get(KEYS.powerLimit)),
        driverVersion: parseText(get(KEYS.driverVersion)) ?? driverVersion,
      },
    });
  }
  result.gpus = cards.sort((a, b) => a.index - b.index).map((c) => c.reading);
  return result;
}
