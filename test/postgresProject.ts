import { dialectVariable } from './support/postgres';

// The postgres jest project: every harness and built server of this worker uses PostgreSQL.
process.env[dialectVariable] = 'postgres';
