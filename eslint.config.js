import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'node:*',
  'fs',
  'path',
  'crypto',
  'os',
  'child_process',
  'http',
  'https',
  'net',
  'url',
  'util',
  'stream',
];

/** The package's own code reaches itself by relative path: a name import would resolve to dist/ at run time. */
const selfImport = {
  group: ['@chamvi/temporal', '@chamvi/temporal/*'],
  message:
    'Library code imports its own modules by relative path; only the demo and the examples use the package name.',
};

/** What code that runs in (or is bundled into) the Temporal workflow sandbox may not import. */
const sandboxPatterns = [
  selfImport,
  { group: nodeBuiltins, message: 'Workflow code runs in the Temporal sandbox: no Node builtins.' },
  {
    group: ['ai', 'ai/*', '@ai-sdk/*', 'zod', 'zod/*'],
    message: 'Workflow code must not import ai or zod; call an activity.',
  },
  {
    group: [
      '../src/*',
      // The sandbox-safe modules of the core: the errors and their failure catalogue (workflow
      // code fails with catalogued errors), and approval tokens, read by the gate's validator.
      '!../src/errors',
      '!../src/approvals',
      '../src/approvals/*',
      '!../src/approvals/approval-token-format.js',
      '../activities/*',
      '../worker/*',
      '../testing/*',
      '../demo/*',
      '../cli/*',
      'pg',
      '@temporalio/worker',
      '@temporalio/activity',
      '@temporalio/client',
    ],
    allowTypeImports: true,
    message: 'Workflow code reaches activities and Node code by type only.',
  },
];

export default tseslint.config(
  // examples/consumer is a separate app importing the installed package (compiled by the consumer smoke test).
  // examples/chat/.next is its Next.js build; next-env.d.ts is what next build writes.
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.tools/**',
      '.chamvi/**',
      'coverage/**',
      'examples/consumer/**',
      'examples/chat/.next/**',
      'examples/chat/next-env.d.ts',
      'docs/.vitepress/dist/**',
      'docs/.vitepress/cache/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node builtins, no ai, no zod,
    // and activities only by type. common/ is imported by workflows and activities alike, so it
    // is held to the same rule.
    files: ['workflows/**/*.ts', 'common/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: sandboxPatterns }],
    },
  },
  {
    // common/ is the contract both sides share: it must not reach into either side at runtime.
    files: ['common/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...sandboxPatterns,
            {
              group: ['../workflows/*', '@temporalio/workflow'],
              allowTypeImports: true,
              message: 'common/ is shared by workflows and activities: no workflow code at runtime.',
            },
          ],
        },
      ],
    },
  },
  {
    // The client entry point is what web servers bundle: no worker, no workflow code, no activities.
    files: ['client/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            selfImport,
            {
              group: ['@temporalio/worker', '@temporalio/activity', '@temporalio/testing', '@temporalio/workflow'],
              message: 'client/ loads @temporalio/client and @temporalio/common only (see client/index.ts).',
            },
            {
              group: ['../workflows/*', '../activities/*', '../testing/*', '../demo/*', '../cli/*'],
              allowTypeImports: true,
              message: 'client/ reaches workflows and activities by type only (message definitions are in common/).',
            },
          ],
        },
      ],
    },
  },
  // Dependencies point one way: worker -> activities -> common <- workflows, and everything -> src;
  // the CLI builds on the worker and the client. The demo and the examples are apps of the package:
  // they import it by name. The testing kit is for users' tests; bench/ and test/ stay apart.
  {
    files: ['worker/**/*.ts', 'activities/**/*.ts', 'testing/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [selfImport] }] },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            selfImport,
            {
              group: ['@temporalio/*', '**/common/*', '**/workflows/*', '**/activities/*', '**/worker/*'],
              message: 'src/ is the engine-agnostic core: no Temporal, no code of the folders built on it.',
            },
            {
              group: ['**/testing/*', '**/demo/*', '**/cli/*', '**/test/*', '**/bench/*'],
              message: 'src/ is the core.',
            },
          ],
        },
      ],
    },
  },
  {
    // Bundled into workflow code (workflows fail with these errors, the catalogue decides what a
    // failure does): they import nothing but each other and use no Node global, so the sandbox can
    // run them (the workflow bundle test checks which modules of src/ are in the bundle).
    files: ['src/errors/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^(?!\\./)', message: 'Workflow code imports src/errors/: it imports only its own modules.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'Buffer', 'process', 'require', 'setTimeout', 'setInterval'],
    },
  },
  {
    // Bundled into workflow code (the approval gate reads tokens with it): it imports nothing and
    // uses no Node global, so the sandbox can run it (the workflow bundle test checks which modules
    // of src/ are in the bundle).
    files: ['src/approvals/approval-token-format.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['*'], message: 'Workflow code imports this module: it must import nothing.' }] },
      ],
      'no-restricted-globals': ['error', 'Buffer', 'process', 'require', 'setTimeout', 'setInterval'],
    },
  },
  {
    files: ['demo/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/src/*',
                '**/common/*',
                '**/workflows/*',
                '**/activities/*',
                '**/worker/*',
                '**/client/*',
                '**/testing/*',
                '**/test/*',
                '**/bench/*',
              ],
              message:
                'The demo is an app of the package: it imports @chamvi/temporal by name (and borrows the CLI helpers for flags and output).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['cli/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            selfImport,
            {
              group: ['**/demo/*', '**/testing/*', '**/test/*', '**/bench/*'],
              message:
                "The CLI builds on the worker and the client; the demo builds on the CLI, and the testing kit is for users' tests.",
            },
          ],
        },
      ],
    },
  },
  {
    // The examples are what users write: they import the package by name, and each other.
    files: ['examples/{github,git,http,nats,interop}/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/src/*',
                '**/common/*',
                '**/workflows/*',
                '**/activities/*',
                '**/worker/*',
                '**/client/*',
                '**/testing/*',
                '**/demo/*',
                '**/cli/*',
                '**/test/*',
                '**/bench/*',
              ],
              message: 'An example imports @chamvi/temporal by name, as an app does.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['bench/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/test/*'], message: 'bench/ and test/ do not import each other.' }] },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/bench/*'], message: 'bench/ and test/ do not import each other.' }] },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
