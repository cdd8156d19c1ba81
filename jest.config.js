/**
 * One jest run for the whole repository: every package's tests, compiled by ts-jest. The run
 * fails when a server log of any test holds a credential the run was issued (globalTeardown).
 *
 * Two projects: `sqlite` runs every test on the embedded default; `postgres` runs again every
 * test that touches the database, on a PostgreSQL cluster the global setup starts (each test on
 * a database of its own: test/support/postgres.ts). ESIGN_TEST_DIALECTS=sqlite (or postgres)
 * runs one of them.
 */
const transform = {
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
};

const common = {
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts', '**/*.test.tsx'],
  transform,
};

/**
 * Tests that never open the service's database (the PDF engine, the agent, shared code) or that
 * are about SQLite itself (its statement cache, its CLI, its plans, its online backup, triggers
 * written in its dialect to inject failures): they run in the sqlite project only.
 */
const sqliteOnly = [
  '<rootDir>/server/test/pdf/',
  '<rootDir>/server/test/engine/',
  // The signing engine's own tests (no service database); those under signing/ that open one
  // (finalize, keys, timestamps, verification levels and attacks, acceptance) run on both.
  '<rootDir>/server/test/signing/certificates/',
  '<rootDir>/server/test/signing/cms/',
  '<rootDir>/server/test/signing/pdf/',
  '<rootDir>/server/test/signing/verification/diffAnalysis',
  '<rootDir>/server/test/signing/keys/config',
  '<rootDir>/server/test/signing/keys/csr',
  '<rootDir>/server/test/signing/keys/softwareKeyStore',
  '<rootDir>/server/test/signing/timestamps/verifyToken',
  '<rootDir>/server/test/db/statementCache',
  '<rootDir>/server/test/db/sqliteCli',
  '<rootDir>/server/test/db/migrations',
  // Compares both dialects itself (starts its own PostgreSQL): once is enough.
  '<rootDir>/server/test/db/dialects',
  '<rootDir>/server/test/db/unsyncedWrite',
  '<rootDir>/server/test/backup/',
  '<rootDir>/server/test/deploy/',
  '<rootDir>/server/test/tasks/plans',
  '<rootDir>/server/test/admin/concurrency',
  // Starts its own PostgreSQL database for several built servers: once per run is enough.
  '<rootDir>/server/test/instances/multiInstance',
];

const projects = {
  sqlite: {
    ...common,
    displayName: 'sqlite',
    roots: ['<rootDir>/server', '<rootDir>/shared', '<rootDir>/agent', '<rootDir>/test'],
  },
  postgres: {
    ...common,
    displayName: 'postgres',
    roots: ['<rootDir>/server/test'],
    testPathIgnorePatterns: ['/node_modules/', ...sqliteOnly],
    setupFiles: ['<rootDir>/test/postgresProject.ts'],
  },
};

const chosen = (process.env.ESIGN_TEST_DIALECTS ?? 'sqlite,postgres')
  .split(',')
  .map((name) => name.trim())
  .filter((name) => name in projects);

/** @type {import('jest').Config} */
module.exports = {
  projects: chosen.map((name) => projects[name]),
  testTimeout: 30000,
  // One directory for the run's server logs and issued credentials; the teardown fails the run
  // when a log holds one of them (test/support/runLog.ts, test/support/runLogScan.ts). The setup
  // also starts the PostgreSQL cluster when the postgres project runs.
  globalSetup: '<rootDir>/test/globalSetup.ts',
  globalTeardown: '<rootDir>/test/globalTeardown.ts',
};
