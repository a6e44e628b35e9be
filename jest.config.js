// One way to run TypeScript ESM under jest: @swc/jest transpiles (type checking is `npm run typecheck`),
// node runs jest with --experimental-vm-modules (see the `test` script), and `.js` import
// specifiers are mapped back to the `.ts` sources.
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2023' },
        module: { type: 'es6' },
      },
    ],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  setupFiles: ['<rootDir>/test/setup/quiet-temporal.ts'],
  testTimeout: 60_000,
  maxWorkers: 2,
};
