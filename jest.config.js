// One way to run TypeScript ESM under jest: @swc/jest transpiles (type checking is `npm run typecheck`),
// node runs jest with --experimental-vm-modules (see the `test` script), and `.js` import
// specifiers are mapped back to the `.ts` sources.
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // The package by name (the demo and the examples import it so), as tsconfig.json's paths.
    '^@chamvi/temporal$': '<rootDir>/src/index.ts',
    '^@chamvi/temporal/(stores|strategies|mcp)$': '<rootDir>/src/$1/index.ts',
    '^@chamvi/temporal/(workflows|worker|client|testing)$': '<rootDir>/$1/index.ts',
  },
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
