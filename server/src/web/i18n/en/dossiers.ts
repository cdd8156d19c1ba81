import type { dossiers as vi } from '../vi/dossiers';

export const dossiers: typeof vi = {};
