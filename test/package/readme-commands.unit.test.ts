/**
 * README.md still says what registry-journey.test.ts types: its Install section's two `sh`
 * blocks are exactly the scaffold's and the existing project's commands that the journey
 * checks, and the five-minute path holds each command the journey runs by name. Here in
 * the unit tier so that a README edit is flagged in seconds; the journey itself runs the
 * Install blocks as it reads them.
 */
import { describe, expect, it } from 'vitest';
import { EXISTING_PROJECT_COMMANDS, FIVE_MINUTE_COMMANDS, SCAFFOLD_COMMANDS, readReadme, readmeSection, shCommands } from './readme-commands.js';

describe("the README's first commands", () => {
  const readme = readReadme();

  it('Install: the scaffold block, then the existing-project block, command for command', () => {
    expect(shCommands(readmeSection(readme, 'Install'))).toEqual([[...SCAFFOLD_COMMANDS], [...EXISTING_PROJECT_COMMANDS]]);
  });

  it('the five-minute path holds each command the journey runs, as a line of its own', () => {
    const commands = shCommands(readmeSection(readme, 'The five-minute path')).flat();
    for (const command of Object.values(FIVE_MINUTE_COMMANDS)) expect(commands).toContain(command);
  });

  it('reads a block as a shell would: comments dropped, continued lines joined', () => {
    const section = ['```sh', 'npm test      # the tests', '# a note', '', 'curl -X POST http://x \\', "  -d '{}'", '```', '```ts', 'const a = 1;', '```'].join(
      '\n',
    );
    expect(shCommands(section)).toEqual([['npm test', "curl -X POST http://x -d '{}'"]]);
  });

  it('refuses a section the README does not have', () => {
    expect(() => readmeSection(readme, 'No such section')).toThrow('README.md has no heading "## No such section"');
  });
});
