/** A setting that cannot be used; the process refuses to start with its message. */
export class ConfigError extends Error {}
