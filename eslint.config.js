import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'host-addon/**', 'bench/out/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { files: ['bin/**/*.js'], languageOptions: { globals: globals.node } },
  // The job window's page runs in a browser.
  { files: ['daemon/ui/**/*.js'], languageOptions: { globals: globals.browser } },
  // So does the farm dashboard's.
  { files: ['service/dashboard/public/**/*.js'], languageOptions: { globals: globals.browser } },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
      // Lines stay at or under 120 characters (CONTRIBUTING.md): Prettier wraps code at 120 but cannot break a
      // string, a template literal or a comment. A URL or a regular expression cannot break either.
      'max-len': ['error', { code: 120, ignoreUrls: true, ignoreRegExpLiterals: true }],
    },
  },
);
