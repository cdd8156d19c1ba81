import type { tasks as vi } from '../vi/tasks';

export const tasks: typeof vi = {};
