// Lint: typescript-eslint with type information, and the determinism fence around workflows/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
// Workflows run in Temporal's deterministic sandbox: no Node, no network, no clock, no I/O libraries.
const ioModules = ['undici', 'pino', 'yaml', 'commander', 'playwright-core', '@aws-sdk/*', '@temporalio/client',
  '@temporalio/worker', '@temporalio/activity', 'openai', '@anthropic-ai/sdk'];

export default tseslint.config(
  { ignores: ['dist/**', 'dist.new/**', 'dist.old/**', 'node_modules/**', '.cache/**', 'test-output/**', 'bin/**', 'schema/**', '*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }],
      }],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: nodeBuiltins.map((name) => ({ name, message: 'workflows/ must stay deterministic: no Node built-ins.' })),
        patterns: [
          { group: ioModules, message: 'workflows/ must stay deterministic: no network or I/O libraries.' },
          { group: ['../gateway/*', '../storage/*', '../activities/*', '../worker/*', '../cli/*', '../sim/*'],
            allowTypeImports: true, message: 'workflows/ may import only types from I/O layers.' },
        ],
      }],
      'no-restricted-globals': ['error',
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'fetch', message: 'Workflows do no I/O: call an activity.' },
        { name: 'process', message: 'Workflows must not read the process environment.' }],
    },
  },
);
