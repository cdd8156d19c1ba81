import type { verify as vi } from '../vi/verify';

export const verify: typeof vi = {};
