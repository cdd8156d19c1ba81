/**
 * One jest run for the whole repository: every package's tests, compiled by ts-jest. The run
 * fails when a server log of any test holds a credential the run was issued (globalTeardown).
 */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/server', '<rootDir>/shared', '<rootDir>/agent', '<rootDir>/test'],
  testMatch: ['**/*.test.ts', '**/*.test.tsx'],
  transform: {
    '^.+\\.tsx?$': [
      'ts-jest',
      {
        tsconfig: {
          isolatedModules: true,
          module: 'commonjs',
          moduleResolution: 'node10',
          esModuleInterop: true,
          target: 'ES2022',
          jsx: 'react-jsx',
          jsxImportSource: 'hono/jsx',
        },
      },
    ],
  },
  testTimeout: 30000,
  // One directory for the run's server logs and issued credentials; the teardown fails the run
  // when a log holds one of them (test/support/runLog.ts, test/support/runLogScan.ts).
  globalSetup: '<rootDir>/test/globalSetup.ts',
  globalTeardown: '<rootDir>/test/globalTeardown.ts',
};
