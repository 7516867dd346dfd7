// Lint: typescript-eslint with type information, and the determinism fence around workflows/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
// Workflows run in Temporal's deterministic sandbox: no Node, no network, no clock, no I/O libraries.
const ioModules = [
  'undici',
  'pino',
  'yaml',
  'commander',
  'playwright-core',
  '@aws-sdk/*',
  '@temporalio/client',
  '@temporalio/worker',
  '@temporalio/activity',
  'openai',
  '@anthropic-ai/sdk',
];

/** Which source folders each folder may import. Anything else is a lint error. */
const LAYERS = {
  jobfile: [],
  gateway: ['jobfile'],
  storage: ['jobfile'],
  media: [],
  activities: ['jobfile', 'gateway', 'storage', 'media'],
  workflows: ['jobfile', 'storage', 'activities'],
  worker: ['jobfile', 'gateway', 'storage', 'media', 'activities', 'workflows'],
  client: ['jobfile', 'gateway', 'storage', 'media', 'activities', 'workflows', 'worker'],
  review: ['jobfile', 'gateway', 'storage', 'media', 'client'],
  cli: ['jobfile', 'gateway', 'storage', 'media', 'activities', 'workflows', 'worker', 'client', 'review', 'sim'],
  sim: [],
  media: [],
};
const FOLDERS = Object.keys(LAYERS);
const workflowBuiltins = nodeBuiltins.map((name) => ({ name, message: 'workflows/ must stay deterministic: no Node built-ins.' }));
// Every patch is in the ledger (workflows/patches.ts): workflow code asks hasPatch(), which only it defines.
const patchedOutsideLedger = {
  name: '@temporalio/workflow',
  importNames: ['patched', 'deprecatePatch'],
  message: 'Ask hasPatch() from workflows/patches.ts: every patch is written in its ledger.',
};

function layerPatterns(folder, allowed) {
  const forbidden = FOLDERS.filter((f) => f !== folder && !allowed.includes(f));
  const up = (f) => [`../${f}`, `../${f}/*`, `../../${f}`, `../../${f}/*`];
  const patterns = [];
  if (forbidden.length > 0) {
    patterns.push({
      group: forbidden.flatMap(up),
      message: allowed.length
        ? `${folder}/ may import only ${allowed.join(', ')} (eslint.config.mjs LAYERS).`
        : `${folder}/ imports nothing from the other folders.`,
    });
  }
  if (folder === 'cli' || folder === 'client' || folder === 'review') {
    // The gateway is a library to them: its index is its interface.
    patterns.push({ group: ['../gateway/*', '../../gateway/*'], message: `${folder}/ imports gateway/ only through its index.` });
  }
  if (folder === 'cli') {
    // The command parses and prints; what a job is and does, it asks client/, as any other UI would.
    // From activities/ and workflows/ only types cross, and the workflow ids users see.
    patterns.push({
      regex: '^(\\.\\./)+(activities(/.*)?|workflows(/(?!ids$).*)?)$',
      allowTypeImports: true,
      message: 'cli/ parses and prints: ask client/ for what activities/ and workflows/ do (only their types cross).',
    });
  }
  if (['jobfile', 'gateway', 'storage', 'media', 'sim'].includes(folder)) {
    patterns.push({ group: ['@temporalio/*'], message: `${folder}/ knows nothing of Temporal.` });
  }
  if (folder === 'workflows') {
    patterns.push({ group: ioModules, message: 'workflows/ must stay deterministic: no network or I/O libraries.' });
    // Values from I/O layers would be bundled into the sandbox; only types cross, and the
    // dependency-free failure type names and log event names.
    patterns.push({
      group: ['../gateway/*', '../storage/*', '../activities/*', '!../activities/failure-types', '!../activities/log-events'],
      allowTypeImports: true,
      message: 'workflows/ may import only types from I/O layers.',
    });
  }
  return patterns;
}

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist.new/**',
      'dist.old/**',
      'node_modules/**',
      '.cache/**',
      'test-output/**',
      'bin/**',
      'schema/**',
      '*.mjs',
      'test/support/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
            },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  // The layers (ARCHITECTURE.md): each folder imports only the folders listed for it, which keeps
  // the folder graph free of cycles. sim/ shares nothing with the client it tests.
  ...Object.entries(LAYERS).map(([folder, allowed]) => ({
    files: [`${folder}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: folder === 'workflows' ? [...workflowBuiltins, patchedOutsideLedger] : [], patterns: layerPatterns(folder, allowed) },
      ],
    },
  })),
  {
    files: ['workflows/patches.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: workflowBuiltins, patterns: layerPatterns('workflows', LAYERS.workflows) }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'fetch', message: 'Workflows do no I/O: call an activity.' },
        { name: 'process', message: 'Workflows must not read the process environment.' },
      ],
    },
  },
);
