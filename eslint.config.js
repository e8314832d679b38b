// The linter (npm run lint, part of npm test): typescript-eslint's type-aware rules that
// catch what this code base must never do (a promise nobody awaits or catches loses a
// result or hides an error; an await of a non-promise hides a bug), on top of ESLint's
// and typescript-eslint's recommended rules. Formatting is Prettier's (.prettierrc.json);
// CONTRIBUTING.md says why these two tools.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'packages/platform/vendor/**',
      'coverage/**',
      'test-artifacts/**',
      '.docs-snippets-*/**',
      'templates/**',
      'packages/platform/ui/*.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    rules: {
      // The code matches control characters on purpose (JSON escapes, ANSI colours, NUL bytes).
      'no-control-regex': 'off',
      // It reads a value set in a callback as never used (let done = false; ...on('x', () => (done = true))).
      'no-useless-assignment': 'off',
      // A variable a closure reads before its one later assignment stays a let.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // Plain Node scripts: no type information here.
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    // The dashboard's browser modules (type-checked by tsconfig.ui.json).
    files: ['packages/platform/ui/**/*.js'],
    languageOptions: { globals: globals.browser },
  },
  {
    // Shapes that show their job (issue 45): a function of the packages' source longer than
    // this is a closure standing in for a class, or several steps that want names of their own.
    // Blank lines and comments do not count. Tests and benches are left to read as scripts.
    files: ['src/**/*.ts', 'packages/platform/src/**/*.ts', 'packages/platform/ui/**/*.js'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }] },
  },
);
