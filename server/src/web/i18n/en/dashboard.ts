import type { dashboard as vi } from '../vi/dashboard';

export const dashboard: typeof vi = {};
