/**
 * Settings declared once (src/settings/): the reference pages' tables (docs/reference/), the `harness` command's
 * options (what `--help` prints) and a worker's flags are all made from one entry per
 * setting; these tests fail when any of them says something else. The library's options
 * (`serve`, its `platformTransport`, `serveLoadBalancing`) are declared in their schemas'
 * `.meta()`: an option without one fails here too.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { registerHarnessCommand } from '../../packages/platform/src/cli/commands/harness.js';
import { HARNESS_SETTINGS, HarnessCommandOptionsSchema } from '../../packages/platform/src/cli/commands/harness-settings.js';
import { settingsReferenceTables } from '../../packages/platform/src/cli/settings-reference.js';
import { HarnessServerOptionsSchema } from '../../packages/platform/src/harness/server-options.js';
import { LoadBalancingSettingsSchema } from '../../packages/platform/src/harness/load-balancing/options.js';
import { LoadBalancingOptionsSchema } from '../../src/load-balancing/lb-options.js';
import { durationText, optionDoc, optionsTable, undeclaredOptions } from '../../src/settings/option-table.js';
import { readMarked } from '../../src/settings/reference-table.js';
import { flagName } from '../../src/settings/setting.js';
import { WORKER_ENV } from '../../src/settings/worker-env.js';
import { WORKER_FLAGS, WORKER_USAGE, parseWorkerArgs } from '../../src/worker/argv.js';
import { PlatformTransportSettingsSchema } from '../../src/transports/platform/options.js';
import { ServeOptionsSchema } from '../../src/worker/options.js';
import { REFERENCE_PAGES } from '../../scripts/reference-pages.js';
import { WORKER_FLAG_SETTINGS } from '../../src/worker/worker-flags.js';

const ROOT = new URL('../../', import.meta.url);
/** The reference page that holds the table `name` (scripts/reference-pages.ts). */
const pageOf = (name: string): string => readFileSync(new URL(REFERENCE_PAGES[name] ?? 'README.md', ROOT), 'utf8');

function harnessCommand(): Command {
  const program = new Command('serverless-worker');
  registerHarnessCommand(program);
  const command = program.commands.find((candidate) => candidate.name() === 'harness');
  if (!command) throw new Error('no harness command');
  return command;
}

describe('settings declared once', () => {
  it("the reference pages' settings tables are what npm run docs:settings writes", () => {
    for (const [name, table] of Object.entries(settingsReferenceTables())) {
      expect(readMarked(pageOf(name), name), `${REFERENCE_PAGES[name]} table "${name}" (run npm run docs:settings)`).toBe(table);
    }
  });

  it('every library option has its declaration, and the reference pages a table for each schema', () => {
    const schemas = {
      'serve-options': ServeOptionsSchema,
      'serve-platform-transport': PlatformTransportSettingsSchema,
      'lb-options': LoadBalancingOptionsSchema,
    };
    const tables = settingsReferenceTables();
    for (const [name, schema] of Object.entries(schemas)) {
      expect(undeclaredOptions(schema.shape), `options of ${name} without .meta({ description })`).toEqual([]);
      expect(readMarked(pageOf(name), name), `${REFERENCE_PAGES[name]} markers of ${name}`).toBeDefined();
      // One row per option, in the schema's order.
      const rows = (tables[name] ?? '').split('\n').slice(2);
      expect(rows.map((row) => row.split(' | ')[0]?.replace(/^\| `(?:platformTransport\.)?|`$/g, ''))).toEqual(Object.keys(schema.shape));
    }
  });

  it("shows each library option's default and range as its schema has them", () => {
    const table = settingsReferenceTables()['serve-options'] ?? '';
    const row = (option: string): string => table.split('\n').find((line) => line.startsWith(`| \`${option}\` |`)) ?? '';
    expect(row('defaultExecutionTimeoutMs')).toContain(
      `| \`${ServeOptionsSchema.shape.defaultExecutionTimeoutMs.parse(undefined)}\` (10 min) | 100 ms to 7 days |`,
    );
    expect(row('maxChunkBytes')).toContain(`| \`${ServeOptionsSchema.shape.maxChunkBytes.parse(undefined)}\` | 64 to 1048576 bytes |`);
    expect(row('expectGpu')).toContain('| `$SERVERLESS_WORKER_EXPECT_GPU`, else `auto` | `auto`, `nvidia`, `amd`, `any`, `none` |');
    expect(optionDoc(ServeOptionsSchema.shape.expectGpu)?.env).toBe(WORKER_ENV.expectGpu.name);
    expect(durationText(604_800_000)).toBe('7 days');
    expect(durationText(1_500)).toBe('1500 ms');
  });

  it('refuses to make a table with an undeclared option', () => {
    const shape = { declared: z.boolean().default(true).meta({ description: 'Declared.' }), forgotten: z.number().default(1) };
    expect(undeclaredOptions(shape)).toEqual(['forgotten']);
    expect(() => optionsTable(shape)).toThrow(/forgotten has no \.meta/);
  });

  it("the harness command's options are exactly its settings: flag, key, default, environment variable", () => {
    const command = harnessCommand();
    const options = command.options.filter((option) => option.long !== '--help');
    expect(options.map((option) => option.flags)).toEqual(Object.values(HARNESS_SETTINGS).map((setting) => setting.flag));
    for (const [key, setting] of Object.entries(HARNESS_SETTINGS)) {
      const option = options.find((candidate) => candidate.flags === setting.flag);
      expect(option?.attributeName(), setting.flag).toBe(key);
      expect(option?.envVar, setting.flag).toBe('env' in setting ? setting.env : undefined);
      if (setting.flag.includes('<')) expect(option?.defaultValue, setting.flag).toEqual('default' in setting ? setting.default : undefined);
    }
    expect(Object.keys(HarnessCommandOptionsSchema.shape)).toEqual(Object.keys(HARNESS_SETTINGS));
  });

  it('--help prints every harness flag and each default', () => {
    // Help text is wrapped to the terminal: compare with the line breaks taken out.
    const help = harnessCommand().helpInformation({ error: false }).replace(/\s+/g, ' ');
    for (const setting of Object.values(HARNESS_SETTINGS)) {
      expect(help, setting.flag).toContain(setting.flag);
      if ('default' in setting && typeof setting.default === 'number') expect(help, setting.flag).toContain(`default: ${setting.default}`);
    }
  });

  it("takes the library's defaults and ranges (one constant, no copy)", () => {
    expect(HARNESS_SETTINGS.lbRequestTimeoutMs.default).toBe(LoadBalancingSettingsSchema.parse({}).requestTimeoutMs);
    expect(HARNESS_SETTINGS.port.default).toBe(HarnessServerOptionsSchema.shape.port.parse(undefined));
    expect(HARNESS_SETTINGS.openaiTimeoutMs.parseArgument('604800000')).toBe(604_800_000);
    expect(() => HARNESS_SETTINGS.openaiTimeoutMs.parseArgument('604800001')).toThrow(/from 1 to 604800000/);
  });

  it("a worker's flags, its --help and its parser come from the same entries", () => {
    const spellings = Object.values(WORKER_FLAG_SETTINGS).flatMap((flag) => [flagName(flag), ...('aliases' in flag ? flag.aliases : [])]);
    expect([...WORKER_FLAGS].sort()).toEqual(spellings.map((spelling) => spelling.replace(/^--/, '')).sort());
    for (const spelling of spellings) expect(WORKER_USAGE, spelling).toContain(spelling);
    const none = parseWorkerArgs([]);
    for (const [key, flag] of Object.entries(WORKER_FLAG_SETTINGS)) {
      expect(flag.schema.safeParse((none as unknown as Record<string, unknown>)[key]).success, key).toBe(true);
    }
    expect(parseWorkerArgs(['--rp_api_port', '0', '--no-rate-limit'])).toMatchObject({ port: 0, rateLimit: false });
  });

  it('every SERVERLESS_WORKER_* variable the code names has its one entry', () => {
    const declared = new Set<string>(Object.values(WORKER_ENV).map((variable) => variable.name));
    // The management CLI's own variable, documented with it ("The management CLI").
    declared.add('SERVERLESS_WORKER_API_URL');
    const named = new Set<string>();
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (path.endsWith('.ts')) for (const match of readFileSync(path, 'utf8').matchAll(/SERVERLESS_WORKER_[A-Z][A-Z_]*/g)) named.add(match[0]);
      }
    };
    walk(new URL('src', ROOT).pathname);
    expect([...named].filter((name) => !declared.has(name)).sort()).toEqual([]);
  });
});
