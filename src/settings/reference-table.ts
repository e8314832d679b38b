/**
 * @module settings/reference-table
 * The reference pages' tables (docs/reference/), made from the settings: a Markdown table of flags (or
 * of environment variables) placed between `<!-- settings:<name>:start -->` and
 * `<!-- settings:<name>:end -->` by `npm run docs:settings`.
 */
import type { EnvSetting } from './worker-env.js';
import type { Setting } from './setting.js';

/** Text safe in a table cell: pipes escaped, line breaks joined. */
export const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
/** Text in backticks, safe in a table cell. */
export const code = (text: string): string => `\`${cell(text)}\``;

/** The default column: the environment variable first, then the plain default or its words. */
export function defaultCell(setting: Pick<Setting, 'default' | 'defaultText' | 'env'>): string {
  const plain =
    setting.defaultText ??
    (setting.default === undefined
      ? 'none'
      : typeof setting.default === 'string' || typeof setting.default === 'number'
        ? code(String(setting.default))
        : code(JSON.stringify(setting.default)));
  if (setting.env === undefined) return cell(plain);
  return plain === 'none' ? code(`$${setting.env}`) : `${code(`$${setting.env}`)}, else ${cell(plain)}`;
}

/** `| flag | default | meaning |` for a group of settings, in its order. */
export function settingsTable<Entry extends Setting>(
  group: Readonly<Record<string, Entry>>,
  flagCell: (setting: Entry) => string = (setting) => code(setting.flag),
): string {
  const rows = Object.values(group).map((setting) => {
    const meaning = setting.details !== undefined ? `${setting.description}. ${setting.details}` : setting.description;
    return `| ${flagCell(setting)} | ${defaultCell(setting)} | ${cell(meaning)} |`;
  });
  return ['| flag | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** `| variable | default | meaning |` for environment variables. */
export function envTable(variables: Readonly<Record<string, EnvSetting>>): string {
  const rows = Object.values(variables).map((variable) => `| ${code(variable.name)} | ${cell(variable.defaultText)} | ${cell(variable.description)} |`);
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

const markers = (name: string): { start: string; end: string } => ({ start: `<!-- settings:${name}:start -->`, end: `<!-- settings:${name}:end -->` });

/** The text between a table's markers (trimmed), or undefined when the markers are missing. */
export function readMarked(document: string, name: string): string | undefined {
  const { start, end } = markers(name);
  const from = document.indexOf(start);
  const to = document.indexOf(end);
  if (from < 0 || to < from) return undefined;
  return document.slice(from + start.length, to).trim();
}

/** The document with `content` between a table's markers; throws when they are missing. */
export function replaceMarked(document: string, name: string, content: string): string {
  const { start, end } = markers(name);
  const from = document.indexOf(start);
  const to = document.indexOf(end);
  if (from < 0 || to < from) throw new Error(`the page lacks the markers ${start} ... ${end}`);
  return `${document.slice(0, from + start.length)}\n${content}\n${document.slice(to)}`;
}
