/**
 * @module cli/setting-options
 * A setting (settings/setting.ts) as a commander option: its flag, description,
 * argument parser, default, environment variable and choices, from the one entry.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { type Setting, SettingArgumentError } from 'serverless-worker/internal';

/** The commander option of one setting; a refused argument makes commander exit 2 with the usage. */
export function settingOption(setting: Setting): Option {
  // A default the flag cannot hold as a value (`<hostname>-<pid>`, read from the engine) is said in words.
  const spokenDefault =
    setting.default === undefined && setting.defaultText !== undefined && setting.defaultText !== 'none'
      ? ` (default ${setting.defaultText.replaceAll('`', '')})`
      : '';
  const option = new Option(setting.flag, `${setting.description}${spokenDefault}`);
  const parse = setting.parseArgument;
  if (parse) {
    option.argParser((value: string, previous: unknown) => {
      try {
        return parse(value, previous);
      } catch (error) {
        if (error instanceof SettingArgumentError) throw new InvalidArgumentError(error.message);
        throw error;
      }
    });
  }
  // A switch's default is its schema's (commander sets `--no-x` to true by itself).
  const takesValue = setting.flag.includes('<') || setting.flag.includes('[');
  if (takesValue && setting.default !== undefined) option.default(setting.default);
  if (setting.env !== undefined) option.env(setting.env);
  if (setting.choices) option.choices(setting.choices);
  return option;
}

/** Add every setting of a group to a command, in the group's order. */
export function addSettingOptions(command: Command, group: Readonly<Record<string, Setting>>): Command {
  for (const setting of Object.values(group)) command.addOption(settingOption(setting));
  return command;
}
