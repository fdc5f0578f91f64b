// ESLint (flat config) with typescript-eslint's recommended rules, no type information. Formatting is
// prettier's (.prettierrc.json); `npm run lint` runs both, `npm run format` applies both.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The host's modules the panel may reach: only src/shared/ (no vscode, no node). */
const panelImports = {
  patterns: [
    {
      group: ['**/src/*', '!**/src/shared', '**/src/*/**', '!**/src/shared/**'],
      message: 'The webview imports only src/shared/.',
    },
    { group: ['vscode', 'node:*'], message: 'The webview runs in a browser: no vscode, no node.' },
  ],
};
/** src/shared/ runs on both sides: nothing from a feature folder, vscode or node. */
const sharedImports = {
  patterns: [
    { group: ['../*', '!../shared'], message: 'src/shared/ imports only src/shared/.' },
    { group: ['vscode', 'node:*'], message: 'src/shared/ runs in the webview too: no vscode, no node.' },
  ],
};

export default tseslint.config(
  { ignores: ['dist/', 'out-test/', 'server/', 'node_modules/', 'src/shared/protocol.gen.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // prettier wraps code at 120; this catches what it cannot wrap (strings, comments, templates)
      'max-len': ['error', { code: 120, ignoreUrls: true }],
    },
  },
  { files: ['webview/**/*.ts'], rules: { 'no-restricted-imports': ['error', panelImports] } },
  { files: ['src/shared/**/*.ts'], rules: { 'no-restricted-imports': ['error', sharedImports] } },
  {
    files: ['**/*.mjs', 'scripts/**'],
    languageOptions: { globals: { console: 'readonly', process: 'readonly', URL: 'readonly' } },
  },
);
