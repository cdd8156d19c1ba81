/** One jest run for the whole repository: every package's tests, compiled by ts-jest. */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/server', '<rootDir>/shared', '<rootDir>/agent', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': [
      'ts-jest',
      {
        tsconfig: {
          isolatedModules: true,
          module: 'commonjs',
          moduleResolution: 'node10',
          esModuleInterop: true,
          target: 'ES2022',
        },
      },
    ],
  },
  testTimeout: 30000,
};
