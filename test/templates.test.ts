/**
 * Every file in templates/ is a valid template create input (spec 2.2) for a
 * Serverless worker built from this repository's Dockerfiles, one per image kind, and
 * none of them replaces the image's NODE_OPTIONS (a template's env overrides the
 * image's ENV on the platform).
 */
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TemplateCreateInputSchema, parseInput } from '../packages/platform/src/harness/management/index.js';

const DIR = fileURLToPath(new URL('../templates/', import.meta.url));
const ROOT = fileURLToPath(new URL('../', import.meta.url));
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

  /** The runtime stage's `ENV NODE_OPTIONS=` value and ENTRYPOINT of a Dockerfile. */
  async function imageSettings(dockerfile: string): Promise<{ nodeOptions: string; entrypoint: string[] }> {
    const text = await readFile(`${ROOT}${dockerfile}`, 'utf8');
    const runtime = text.slice(text.lastIndexOf('\nFROM '));
    const env = [...runtime.matchAll(/^ENV NODE_OPTIONS=(.*)$/gm)].at(-1)?.[1]?.trim();
    const entrypoint = [...runtime.matchAll(/^ENTRYPOINT (\[.*\])$/gm)].at(-1)?.[1];
    expect(env, `${dockerfile} sets NODE_OPTIONS in its runtime stage`).toBeDefined();
    expect(entrypoint, `${dockerfile} has an exec-form ENTRYPOINT`).toBeDefined();
    return { nodeOptions: (env ?? '').replace(/^"(.*)"$/, '$1'), entrypoint: JSON.parse(entrypoint ?? '[]') as string[] };
  }

  it.each(files)("%s keeps the image's NODE_OPTIONS (the young-generation cap) and source maps", async (file) => {
    const template = parseInput(TemplateCreateInputSchema, await load(file), { code: 'SW_INVALID_TEMPLATE', what: file });
    const image = await imageSettings(template.category === 'CPU' ? 'Dockerfile.cpu' : 'Dockerfile.gpu');
    expect(image.nodeOptions).toContain('--max-semi-space-size=');
    // On the platform a template's env replaces the image's ENV of the same name: what the worker runs with.
    const effective = (template.env.NODE_OPTIONS ?? image.nodeOptions).split(/\s+/);
    for (const flag of image.nodeOptions.split(/\s+/)) expect(effective, `${file}: NODE_OPTIONS drops the image's ${flag}`).toContain(flag);
    // Source maps come from the image's command, so no template needs NODE_OPTIONS for them.
    expect(image.entrypoint).toContain('--enable-source-maps');
  });
});
