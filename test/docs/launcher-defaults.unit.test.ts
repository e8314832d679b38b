/**
 * The launcher's defaults as the guides give them are the code's (issue 49 item 8:
 * launcher.md said 10 s for `shutdownDeadlineMs` where the schema says 40 000 ms): read
 * from LauncherOptionsSchema, checked against the sentences and the config example. The
 * silence window a launched container is given is the worker API's liveness defaults
 * (ping interval x missed pings), as the composition root passes them (compose-launcher.ts).
 */
import { describe, expect, it } from 'vitest';
import { LauncherOptionsSchema } from '../../packages/platform/src/harness/launcher/launcher-options.js';
import { LivenessSchema } from '../../packages/platform/src/harness/worker-api/options.js';
import { readRepoFile } from './markdown-files.js';

const defaults = LauncherOptionsSchema.parse({});

describe("the launcher's defaults in the guides", () => {
  it('launcher.md and timeouts-and-shutdown.md give the shutdown deadline the schema has', () => {
    const seconds = defaults.shutdownDeadlineMs / 1000;
    const launcher = readRepoFile('docs/guides/launcher.md');
    const stated = [...launcher.matchAll(/`shutdownDeadlineMs`, default (\d+) s/g)].map((match) => Number(match[1]));
    expect(stated.length).toBeGreaterThan(0);
    expect(stated).toEqual(stated.map(() => seconds));
    expect(readRepoFile('docs/guides/timeouts-and-shutdown.md')).toMatch(new RegExp(`\`shutdownDeadlineMs\`, which defaults to\\s+\\*\\*${seconds} s\\*\\*`));
  });

  it("launcher.md's config example shows the defaults of every setting it names but images and gpus", () => {
    const launcher = readRepoFile('docs/guides/launcher.md');
    const start = launcher.indexOf('    {"images"');
    const block = launcher.slice(start, launcher.indexOf('\n\n', start));
    const example = JSON.parse(block) as Record<string, unknown>;
    const { images: _images, gpus: _gpus, ...named } = example;
    expect(Object.keys(named).length).toBeGreaterThan(0);
    for (const [key, value] of Object.entries(named)) expect(value, key).toEqual(defaults[key as keyof typeof defaults]);
  });

  it("launcher.md gives the silence window of the worker API's liveness defaults", () => {
    const liveness = LivenessSchema.parse({});
    const window = (liveness.pingIntervalMs * liveness.missedPings).toLocaleString('en-US').replace(/,/g, ' ');
    const launcher = readRepoFile('docs/guides/launcher.md');
    expect(launcher).toMatch(new RegExp(`\\(\`--ping-interval-ms\` × \`--missed-pings\`, by default ${window}\\)`));
  });
});
