/**
 * Every file in templates/ is a valid template create input (spec 2.2) for a
 * Serverless worker built from this repository's Dockerfiles, one per image kind.
 */
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TemplateCreateInputSchema, parseInput } from '../src/harness/management/index.js';

const DIR = fileURLToPath(new URL('../templates/', import.meta.url));
const files = (await readdir(DIR)).filter((file) => file.endsWith('.json')).sort();

async function load(file: string): Promise<unknown> {
  return JSON.parse(await readFile(`${DIR}${file}`, 'utf8')) as unknown;
}

describe('templates/', () => {
  it('holds one template per image kind: nvidia, amd, cpu', () => {
    expect(files).toEqual(['amd.json', 'cpu.json', 'nvidia.json']);
  });

  it.each(files)('%s is valid against the template create schema', async (file) => {
    const template = parseInput(TemplateCreateInputSchema, await load(file), { code: 'SW_INVALID_TEMPLATE', what: file });
    expect(template.isServerless).toBe(true);
    expect(template.category).toBe(file.replace('.json', '').toUpperCase());
    // A queue-based worker serves no ports; the Pod defaults (8888/http, 22/tcp) would be wrong.
    expect(template.ports).toEqual([]);
    expect(template.readme.length).toBeGreaterThan(0);
    expect(template.env.LOG_LEVEL).toBeDefined();
  });

  it.each(files)('%s points at the Dockerfile that builds its kind', async (file) => {
    const template = parseInput(TemplateCreateInputSchema, await load(file), { code: 'SW_INVALID_TEMPLATE', what: file });
    const dockerfile = template.category === 'CPU' ? 'Dockerfile.cpu' : 'Dockerfile.gpu';
    expect(template.readme).toContain(dockerfile);
    if (template.category === 'AMD') expect(template.readme).toContain('BASE_IMAGE=rocm/');
  });

  it('template names are unique, as the management API requires', async () => {
    const names = await Promise.all(files.map(async (file) => (await load(file)) as { name: string }));
    expect(new Set(names.map((template) => template.name)).size).toBe(files.length);
  });
});
