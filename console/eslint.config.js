// @ts-check
// Configured like the TypeScript client's (clients/typescript/eslint.config.js): the same
// rule sets and rules. The console has two programs: src (tsconfig.json, the browser
// bundle) and test (tsconfig.test.json, node:test in Node).
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'build/', 'node_modules/', 'test-output/'] },
  eslint.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.json', './tsconfig.test.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
    },
  },
  {
    // node:test's test() returns a promise the runner itself awaits
    files: ['test/**/*.ts'],
    // tests reach into snapshots defensively (optional chains on typed-as-present values)
    rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-unnecessary-condition': 'off' },
  },
  {
    // plain JavaScript run by Node, outside both TypeScript programs
    files: ['eslint.config.js', 'build.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
