import type { contracts as vi } from '../vi/contracts';

export const contracts: typeof vi = {};
