import type { signing as vi } from '../vi/signing';

export const signing: typeof vi = {};
